#include "diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "xalloc.h"

void diags_add(rd_diags *d, const char *file, int line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    xgrow(&d->msgs, &d->cap, d->n + 1, sizeof *d->msgs);
    if (line > 0)
        d->msgs[d->n++] = xasprintf("%s:%d: %s", file ? file : "-", line, msg);
    else
        d->msgs[d->n++] = xasprintf("%s: %s", file ? file : "-", msg);
}

void diags_free(rd_diags *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++)
        free(d->msgs[i]);
    free(d->msgs);
    d->msgs = NULL;
    d->n = d->cap = 0;
}
