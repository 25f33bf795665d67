#include "xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(void)
{
    static const char msg[] = "redrive: out of memory\n";
    fwrite(msg, 1, sizeof msg - 1, stderr);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom();
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom();
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom();
    return q;
}

char *xstrdup(const char *s)
{
    return s ? xstrndup(s, strlen(s)) : NULL;
}

char *xstrndup(const char *s, size_t n)
{
    if (!s)
        return NULL;
    size_t len = strnlen(s, n);
    char *d = xmalloc(len + 1);
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    if (!fmt)   /* also keeps gcc -fsanitize=undefined from warning "null format" */
        abort();
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        oom();
    char *s = xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

void xgrow(void *arr_ptr, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return;
    size_t nc = *cap ? *cap : 8;
    while (nc < need)
        nc *= 2;
    void **arr = arr_ptr;
    *arr = xrealloc(*arr, nc * size);
    *cap = nc;
}
