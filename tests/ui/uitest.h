#pragma once
/* Shared by the ui parser tests: exact-length texts and every diagnostic in one string. */
#include <stdio.h>
#include <string.h>

#include "../../src/core/diag.h"

#define T(s) s, sizeof s - 1   /* text with its exact length: NULs included */

/* Every message, each followed by '|', so a case compares all of them at once. */
static inline void diags_join(const rd_diags *d, char *out, size_t cap)
{
    out[0] = '\0';
    for (size_t i = 0; i < d->n; i++) {
        size_t o = strlen(out);
        snprintf(out + o, cap - o, "%s|", d->msgs[i]);
    }
}
