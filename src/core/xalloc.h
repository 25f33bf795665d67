#pragma once
/* Allocation wrappers that abort on out-of-memory, so callers need not check. */
#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);           /* NULL in → NULL out */
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Grow *arr (element size `size`) so it can hold at least `need` items. */
void xgrow(void *arr_ptr, size_t *cap, size_t need, size_t size);
