#pragma once
/* Diagnostics collected by parsers: every error, as "file:line: message". */
#include <stddef.h>

typedef struct rd_diags {
    char **msgs;
    size_t n, cap;
} rd_diags;

void diags_add(rd_diags *d, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void diags_free(rd_diags *d);
