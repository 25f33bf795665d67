#pragma once
/* The diagnostics of a parse of bad input (config, profile): has() finds one by its
 * "file:line: " prefix and a part of its text; CHECK_DIAGS checks a table of them, each
 * present and no other (all of them printed when the count differs). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "diag.h"

typedef struct {
    const char *at, *needle;
} diag_want;

static inline bool has(const rd_diags *d, const char *prefix, const char *needle)
{
    for (size_t i = 0; i < d->n; i++)
        if (strncmp(d->msgs[i], prefix, strlen(prefix)) == 0 && strstr(d->msgs[i], needle))
            return true;
    return false;
}

static inline void check_diags(const rd_diags *d, const diag_want *want, size_t n, const char *f, int l)
{
    for (size_t i = 0; i < n; i++)
        check_at(has(d, want[i].at, want[i].needle), f, l, "has(d, at, needle)", want[i].needle, NULL);
    if (d->n != n)
        for (size_t i = 0; i < d->n; i++)
            fprintf(stderr, "  diag: %s\n", d->msgs[i]);
    check_at(d->n == n, f, l, "d->n == the table's size", NULL, NULL);
}

#define CHECK_DIAGS(d, want) check_diags((d), (want), sizeof(want) / sizeof *(want), __FILE__, __LINE__)
