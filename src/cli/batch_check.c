/*
 * redrive batch check ID ITEM... (issue 35): the guard at send time for these items of a
 * batch, the console's (it runs this as a child, as it runs `retry --select-only`, so its
 * loop never waits on the store): the items read again from the store of the batch's
 * system (session.h: recheck, a query a page) and judged by the executions list's rule.
 * One JSON line on stdout for each item no longer eligible, {"item":N,"why":VERDICT},
 * then {"checked":N,"queries":Q}; {"error":WHY} and exit 1 when the store could not be
 * read (nothing judged: the console sends nothing of the part); exit 2 on bad items.
 */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../actions/batchrec.h"
#include "../core/xalloc.h"
#include "act_priv.h"

enum { CHECK_MAX = 4096 };   /* items a call: the console asks a part (256) at a time */

static void say(cJSON *o)
{
    char *t = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (t)
        printf("%s\n", t);
    free(t);
    fflush(stdout);
}

static int fail(const char *why)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "error", why);
    say(o);
    return RD_EXIT_FAIL;
}

/* The items asked for, each a number below total, none twice; false with why. */
static bool parse_items(char **argv, size_t n, size_t total, unsigned char *want, char *why,
                        size_t cap)
{
    if (!n || n > CHECK_MAX) {
        snprintf(why, cap, "batch check: 1 to %d item numbers", CHECK_MAX);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char *end;
        unsigned long long v = strtoull(argv[i], &end, 10);
        if (end == argv[i] || *end || argv[i][0] == '-' || v >= total || want[v]) {
            snprintf(why, cap, "batch check: not an item of the batch (or twice): %.40s", argv[i]);
            return false;
        }
        want[v] = 1;
    }
    return true;
}

/* The wanted items' targets and numbers, copied out of the record. */
static size_t read_targets(const rd_batch_info *b, const unsigned char *want, size_t n,
                           rd_target *t, size_t *num, char *why, size_t cap)
{
    rd_batchrd *rd = batchrd_open(b->path, why, cap);
    size_t k = 0, item;
    rd_target x;
    while (rd && k < n && batchrd_next(rd, &item, &x)) {
        if (item >= b->total || !want[item])
            continue;
        t[k] = (rd_target){.id = xstrdup(x.id), .parent = x.parent ? xstrdup(x.parent) : NULL,
                           .fp = x.fp ? xstrdup(x.fp) : NULL, .attempt = x.attempt};
        num[k++] = item;
    }
    if (rd && batchrd_damage(rd)[0])
        snprintf(why, cap, "batch record %s is damaged: %s", b->path, batchrd_damage(rd));
    else if (rd && k < n)
        snprintf(why, cap, "batch record %s: items missing", b->path);
    bool ok = rd && k == n;
    batchrd_close(rd);
    return ok ? k : (size_t)-1;
}

/* The verdicts of t[0..n) from the store of b's system; the JSON lines said. */
static int judge(const rd_opts *opts, const rd_batch_info *b, const rd_target *t,
                 const size_t *num, size_t n)
{
    char why[512] = "";
    rd_opts so = *opts;
    so.system = b->system;
    rd_session *ss = session_new(&so);
    rd_session_io io = {0};
    rd_session_status st = session_open(ss, so.system, &io);
    int rc = RD_EXIT_OK;
    if (st != SESSION_OK) {
        snprintf(why, sizeof why, "system %s: its config or profile did not load",
                 b->system ? b->system : "?");
        rc = fail(why);
    } else {
        rd_profile prof = {0};           /* a session without parts loads none */
        rd_diags d = {0};
        const rd_system_cfg *sys = session_system(ss);
        if (!profile_load(sys->profile, &prof, &d)) {
            snprintf(why, sizeof why, "profile %s: %s", sys->profile ? sys->profile : "?",
                     d.n ? d.msgs[0] : "cannot load");
            rc = fail(why);
        } else {
            rd_recheck *k = recheck_new(sys, &prof);
            rd_verdict *v = xcalloc(n, sizeof *v);
            if (!recheck_verdicts(k, t, n, v, why, sizeof why)) {
                rc = fail(why);
            } else {
                for (size_t i = 0; i < n; i++) {
                    if (v[i].verdict == RD_ELIG_YES)
                        continue;
                    cJSON *o = cJSON_CreateObject();
                    cJSON_AddNumberToObject(o, "item", (double)num[i]);
                    cJSON_AddStringToObject(o, "why", v[i].why);
                    say(o);
                }
                cJSON *o = cJSON_CreateObject();
                cJSON_AddNumberToObject(o, "checked", (double)n);
                cJSON_AddNumberToObject(o, "queries", (double)recheck_queries(k));
                say(o);
            }
            free(v);
            recheck_free(k);
        }
        diags_free(&d);
        profile_free(&prof);
    }
    session_free(ss);
    return rc;
}

int batch_check(const rd_opts *opts, const rd_batch_info *b, char **argv, size_t n)
{
    char why[512];
    if (!b->action || strcmp(b->action, "retry") != 0)
        return fail("only a retry batch is checked against the store");
    unsigned char *want = xcalloc(b->total ? b->total : 1, 1);
    if (!parse_items(argv, n, b->total, want, why, sizeof why)) {
        free(want);
        fprintf(stderr, "redrive: %s\n", why);
        return RD_EXIT_USAGE;
    }
    rd_target *t = xcalloc(n, sizeof *t);
    size_t *num = xcalloc(n, sizeof *num);
    size_t got = read_targets(b, want, n, t, num, why, sizeof why);
    int rc = got == (size_t)-1 ? fail(why) : judge(opts, b, t, num, n);
    for (size_t i = 0; i < n; i++) {
        free((char *)(uintptr_t)t[i].id);
        free((char *)(uintptr_t)t[i].parent);
        free((char *)(uintptr_t)t[i].fp);
    }
    free(t);
    free(num);
    free(want);
    return rc;
}
