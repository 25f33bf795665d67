#pragma once
/* A tiny assertion harness: every failure is printed, the run continues,
 * check_done() prints the tally and gives the exit status. */
#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_n, check_failed;

#define CHECK(cond) check_at((cond) != 0, __FILE__, __LINE__, #cond, NULL, NULL)
#define CHECK_MSG(cond, ctx) check_at((cond) != 0, __FILE__, __LINE__, #cond, ctx, NULL)
#define CHECK_STR(got, want) check_str((got), (want), __FILE__, __LINE__, #got)
#define CHECK_NEAR(got, want) check_near((got), (want), __FILE__, __LINE__, #got)

static inline void check_at(int ok, const char *f, int l, const char *what, const char *ctx,
                            const char *got)
{
    check_n++;
    if (ok)
        return;
    check_failed++;
    fprintf(stderr, "%s:%d: FAILED: %s%s%s%s%s\n", f, l, what, ctx ? " [" : "", ctx ? ctx : "",
            ctx ? "]" : "", got ? got : "");
}

static inline void check_str(const char *got, const char *want, const char *f, int l,
                             const char *what)
{
    int ok = (!got && !want) || (got && want && strcmp(got, want) == 0);
    char buf[1200];
    snprintf(buf, sizeof buf, "\n    got:  %s%s%s\n    want: %s%s%s", got ? "\"" : "",
             got ? got : "NULL", got ? "\"" : "", want ? "\"" : "", want ? want : "NULL",
             want ? "\"" : "");
    check_at(ok, f, l, what, NULL, buf);
}

static inline void check_near(double got, double want, const char *f, int l, const char *what)
{
    char buf[128];
    snprintf(buf, sizeof buf, " (got %.9g, want %.9g)", got, want);
    check_at(fabs(got - want) <= 1e-9 * (fabs(want) > 1 ? fabs(want) : 1), f, l, what, NULL,
             buf);
}

static inline int check_done(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, check_n, check_failed);
    return check_failed ? 1 : 0;
}
