/*
 * redrive retry --status S [--filter TEXT] [--since DUR] [--limit N] [--rate N] --yes
 * redrive retry --group FINGERPRINT [--status S] [--since DUR] [--limit N] [--rate N] --yes
 *
 * The selection is made by the store when asked: the executions query's pages (the
 * store's own keyset paging and indexes, the status and text filters in SQL, the
 * fingerprint computed in C on each row as core/fingerprint.c does), newest first, until
 * the window (--since) or the last page; at most --limit executions (default 100,000,
 * said when hit). Each execution is judged by the system's own rule and the retry-loop
 * breaker (core/guard.h) as it is read, and only the ones to send are frozen, streamed
 * into a batch record (actions/batchrec.h): memory does not grow with the selection.
 * Then the breakdown, the confirmation (typed count above confirm_over), and the run
 * (batch.c), resumable with `redrive batch resume ID`.
 *
 * --select-only: the console's whole-set retry (ui/setretry.c) runs this (and
 * act_dlq.c's DLQ sets, reported by the same act_report_* functions) as a child
 * process: the same selection, reported as JSON lines on stdout ({"started":ID}, then
 * {"read":N,"selected":N,"pages":P} after each page, {"held":LINE} for the first ones held
 * back, then the breakdown {"batch":ID,"total":..,"send":..} or {"error":WHY}); the record
 * is staged (batchrec_stage), not committed: the console adopts it once the operator
 * confirms. Nothing is sent and the terminal is never touched.
 */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../actions/batchrec.h"
#include "../core/groups.h"
#include "../core/sanitize.h"
#include "../core/storegroups.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "act_priv.h"

typedef struct select_run {
    act_opts *o;
    lookup_run *l;
    unsigned san;
    act_tally t;
    rd_retry_record *recs;
    size_t nrec;
    double cutoff;             /* epoch seconds: older rows are outside the window; 0 none */
    double since_s;            /* --since in seconds; 0 none */
    char *group_fp;            /* --group resolved (an id) to the store's fingerprint */
    char why[400];
} select_run;

static bool parse_opts(const act_opts *o, double *since_s, double *rate, long *limit)
{
    *since_s = 0;
    if (o->kind != RD_ACT_RETRY) {
        fputs("redrive: --status and --group select executions to retry\n", stderr);
        return false;
    }
    if (o->since && (!parse_duration(o->since, since_s) || *since_s <= 0)) {
        err_clean(0, "redrive: --since: not a duration (30m, 1h, 2d): ", o->since);
        return false;
    }
    if (!act_select_limits(o, rate, limit))
        return false;
    if (o->group && !*o->group) {
        fputs("redrive: --group: an empty fingerprint\n", stderr);
        return false;
    }
    return true;
}

/* "status=failed text=boom group=... since=1h", for the record and the confirmation. */
static char *selection_text(const act_opts *o)
{
    char *s = xasprintf("%s%s%s%s%s%s%s%s", o->status ? "status=" : "", o->status ? o->status : "",
                     o->filter ? " text=" : "", o->filter ? o->filter : "",
                     o->group ? " group=" : "", o->group ? o->group : "",
                     o->since ? " since=" : "", o->since ? o->since : "");
    if (s[0] == ' ')
        memmove(s, s + 1, strlen(s));
    return s;
}

/* One execution of the page: judged, and frozen into the record when it is sent. */
static bool select_one(select_run *s, const rd_execution *e)
{
    const act_opts *o = s->o;
    if (s->cutoff > 0 && (e->created_at <= 0 || e->created_at < s->cutoff)) {
        s->t.past = true;          /* newest first: the rest is older still */
        return true;
    }
    if (o->group && (!e->fingerprint || strcmp(e->fingerprint, o->group) != 0))
        return true;
    if (s->t.c.total >= (size_t)s->t.limit) {
        s->t.capped = true;
        return true;
    }
    if (act_tally_open(&s->t, e->id, e->parent_id))
        return true;           /* in an open batch: left out, said after the selection */
    rd_guard_item it = {.id = e->id, .elig = e->elig.verdict, .why = e->elig.why,
                        .loops = loop_count(e, s->recs, s->nrec)};
    rd_guard_kind k = guard_add(&s->t.c, &it);
    if (!guard_sends(k, o->force || (k == GUARD_LOOP && o->override_loop))) {
        act_report_held(o, &s->t, &it, s->san);
        return true;
    }
    rd_target t = {.id = e->id, .parent = e->parent_id, .fp = e->fingerprint,
                   .attempt = e->attempt, .override_ = guard_override_name(k)};
    return batchrec_add(s->t.rec, &t, s->why, sizeof s->why);
}

/* Every page of the filter, until the window or the limit; false with s->why. */
static bool select_pages(select_run *s)
{
    /* read by the status's own index in the window (a profile's [query by_status]) */
    rd_exec_filter f = {.status = (char *)(uintptr_t)s->o->status,
                        .text = (char *)(uintptr_t)s->o->filter,
                        .fingerprint = (char *)(uintptr_t)s->o->group,
                        .window_s = s->since_s, .by_status = true};
    session_set_filter(s->l->ss, &f);
    const rd_model *m = lookup_settle(s->l, NULL);
    for (;;) {
        if (!lookup_page_ok(m, s->l->ss, s->why, sizeof s->why))
            return false;
        s->t.pages++;
        s->t.read += m->execs.n;
        for (size_t i = 0; i < m->execs.n && !s->t.past && !s->t.capped; i++)
            if (!select_one(s, &m->execs.items[i]))
                return false;
        if (s->o->select_only)
            act_report_page(&s->t);
        if (!m->execs_more && s->cutoff > 0)
            s->t.past = true;          /* read to the window's start (the store's window: SQL) */
        if (s->t.past || s->t.capped || !m->execs_more)
            return true;
        session_page(s->l->ss, +1);
        m = lookup_settle(s->l, NULL);
    }
}

static void say_selection(const select_run *s, const char *sel, unsigned san)
{
    char line[700];
    const act_tally *t = &s->t;
    snprintf(line, sizeof line, "selected %zu execution%s (%s) from %zu page%s of the store%s",
             t->c.total, t->c.total == 1 ? "" : "s", sel, t->pages, t->pages == 1 ? "" : "s",
             t->past ? ", to the window's start" : "");
    err_clean(san, "redrive: ", line);
    if (t->capped)
        fprintf(stderr, "redrive: capped at %ld executions (--limit): older ones were not read\n",
                t->limit);
    guard_breakdown(&t->c, line, sizeof line);
    fprintf(stderr, "redrive: %s\n", line);
}

/* --group ID: the store's groups of the window (--since, else the last hour) name the
 * fingerprint; a fingerprint as given still works. False with why. */
static bool resolve_group(select_run *s)
{
    act_opts *o = s->o;
    if (!groupid_shaped(o->group))
        return true;                  /* a fingerprint: as given (no groups to read) */
    double w = s->since_s > 0 ? s->since_s : SGROUPS_WINDOW_S;
    char win[16];
    sgroups_window_text(w, win, sizeof win);
    if (!s->l->started) {
        s->l->started = true;
        session_start(s->l->ss);
    }
    if (!session_request_groups(s->l->ss, w, sgroups_cap_default())) {
        snprintf(s->why, sizeof s->why, "--group %s: this store cannot list its error groups: give the whole fingerprint",
                 o->group);
        return false;
    }
    const rd_model *m = lookup_settle(s->l, NULL);
    const rd_group *g = NULL;
    char why[300];
    switch (sgroups_resolve(m->sgroups, o->group, &g, why, sizeof why)) {
    case GROUPID_FOUND:
        s->group_fp = xstrdup(g->fp);
        o->group = s->group_fp;
        return true;
    case GROUPID_FP:
        return true;
    default:
        if (!m->sgroups && lookup_failed(m, why, sizeof why)) {
            snprintf(s->why, sizeof s->why, "--group %s: cannot read the store's error groups: %s", o->group, why);
            return false;
        }
        snprintf(s->why, sizeof s->why, "--group: %s in the last %s (--since widens the window)", why, win);
        return false;
    }
}

static bool read_pages(void *ud) { return select_pages(ud); }
static void say(void *ud, const char *sel) { say_selection(ud, sel, ((select_run *)ud)->san); }

int act_select(act_opts *o, lookup_run *l, unsigned san)
{
    double since_s, rate;
    select_run s = {.o = o, .l = l, .san = san};
    if (!parse_opts(o, &since_s, &rate, &s.t.limit))
        return RD_EXIT_USAGE;
    if (o->status && !profile_status_known(session_profile(l->ss), o->status, s.why, sizeof s.why)) {
        act_report_error(o, "redrive retry: ", s.why, san);   /* a typo selects nothing: refused */
        return RD_EXIT_USAGE;
    }
    rd_actor *actor = session_actor(l->ss);
    if (!act_select_may(o, actor, RD_ACT_RETRY, san))
        return RD_EXIT_FAIL;
    s.cutoff = since_s > 0 ? clock_wall() - since_s : 0;
    s.since_s = since_s;
    if (o->group && !resolve_group(&s)) {
        act_report_error(o, "redrive retry: ", s.why, san);   /* a typo selects nothing: refused */
        free(s.group_fp);
        return RD_EXIT_USAGE;
    }
    rd_journal_entry *je;
    size_t nje;
    s.recs = act_loop_records(l->ss, &je, &nje, &s.nrec, san);
    act_stage st = {.t = &s.t, .kind = RD_ACT_RETRY, .sel = selection_text(o), .recs = s.recs, .je = je,
                    .nje = nje, .read = read_pages, .say = say, .ud = &s, .why = s.why, .whycap = sizeof s.why};
    int rc = act_stage_run(o, l, &st, rate, san);
    free(s.group_fp);
    return rc;
}
