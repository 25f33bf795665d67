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
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "act_priv.h"

enum { SELECT_LIMIT = 100000, SELECT_LIMIT_MAX = 1000000 };

typedef struct select_run {
    act_opts *o;
    lookup_run *l;
    unsigned san;
    act_tally t;
    rd_retry_record *recs;
    size_t nrec;
    double cutoff;             /* epoch seconds: older rows are outside the window; 0 none */
    char why[400];
} select_run;

/* --select-only: one JSON object as a line on stdout, now (the console reads it). */
static void say_json(cJSON *o)
{
    char *t = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (t)
        printf("%s\n", t);
    free(t);
    fflush(stdout);
}

void act_report_str(const char *key, const char *val)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, key, val);
    say_json(o);
}

void act_report_held(const act_opts *o, act_tally *t, const rd_guard_item *it, unsigned san)
{
    if (t->held_shown++ >= ACT_HELD_SHOWN)
        return;
    if (!o->select_only) {
        act_guard_say(it, san);
        return;
    }
    char line[600];
    guard_item_line(it, line, sizeof line);
    act_report_str("held", line);
}

void act_report_page(const act_tally *t)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "read", (double)t->read);
    cJSON_AddNumberToObject(o, "selected", (double)t->c.total);
    cJSON_AddNumberToObject(o, "pages", (double)t->pages);
    say_json(o);
}

bool act_parse_rate(const char *s, double *out)
{
    char *end;
    double v = s ? strtod(s, &end) : 0;
    if (!s || end == s || *end || !(v > 0) || v > 1000)
        return false;
    *out = v;
    return true;
}

bool act_select_limits(const act_opts *o, double *rate, long *limit)
{
    *rate = 0;
    *limit = SELECT_LIMIT;
    if (o->rate && !act_parse_rate(o->rate, rate)) {
        err_clean(0, "redrive: --rate: requests per second, 0 < N <= 1000: ", o->rate);
        return false;
    }
    char *end;
    if (o->limit && ((*limit = strtol(o->limit, &end, 10)) < 1 || *end || *limit > SELECT_LIMIT_MAX)) {
        err_clean(0, "redrive: --limit: a count from 1 to 1000000: ", o->limit);
        return false;
    }
    return true;
}

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
    rd_sources *src = session_sources(s->l->ss);
    rd_exec_filter f = {.status = (char *)(uintptr_t)s->o->status,
                        .text = (char *)(uintptr_t)s->o->filter,
                        .fingerprint = (char *)(uintptr_t)s->o->group};
    sources_set_filter(src, &f);
    const rd_model *m = lookup_settle(s->l, NULL);
    for (;;) {
        if (!lookup_page_ok(m, src, s->why, sizeof s->why))
            return false;
        s->t.pages++;
        s->t.read += m->execs.n;
        for (size_t i = 0; i < m->execs.n && !s->t.past && !s->t.capped; i++)
            if (!select_one(s, &m->execs.items[i]))
                return false;
        if (s->o->select_only)
            act_report_page(&s->t);
        if (s->t.past || s->t.capped || !m->execs_more)
            return true;
        sources_page(src, +1);
        m = lookup_settle(s->l, NULL);
    }
}

/* RD_EXIT_OK to go ahead: --yes, else on a terminal y/N, or the typed count above
 * confirm_over (the console's rule). */
static int select_confirm(const act_opts *o, const rd_system_cfg *sys, size_t n, unsigned san)
{
    int rc = act_must_ask(o);
    if (rc >= 0)
        return rc;
    char *name = sanitize_str(sys->name, san);
    size_t over = sys->ui.confirm_over > 0 ? (size_t)sys->ui.confirm_over : 0;  /* 0: always */
    char want[32], ans[32];
    snprintf(want, sizeof want, "%zu", n);
    const char *what = action_target_kind(o->kind);
    if (n > over)
        fprintf(stderr, "%s %zu %ss on %s: type %zu to proceed: ", action_name(o->kind), n, what, name, n);
    else
        fprintf(stderr, "%s %zu %s%s on %s? [y/N] ", action_name(o->kind), n, what, n == 1 ? "" : "s", name);
    free(name);
    bool ok = read_line_tty(stdin, ans, sizeof ans, true) &&
              (n > over ? strcmp(ans, want) == 0 : (ans[0] == 'y' || ans[0] == 'Y'));
    if (!ok)
        fputs("redrive: not confirmed: nothing sent\n", stderr);
    return ok ? RD_EXIT_OK : RD_EXIT_FAIL;
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
    if (t->held_shown > ACT_HELD_SHOWN)
        fprintf(stderr, "redrive: ... and %zu more not sent\n", t->held_shown - ACT_HELD_SHOWN);
}

static int record_run(lookup_run *l, rd_batchrec *rec, double rate, unsigned san)
{
    char *jpath = session_journal_path(), why[400];
    rd_batch_info b = {0};
    int rc = RD_EXIT_FAIL;
    if (!batchrec_commit(rec, why, sizeof why) ||
        !batchrec_find(jpath, batchrec_id(rec), &b, why, sizeof why))
        err_clean(san, "redrive: nothing sent: ", why);
    else {
        fprintf(stderr, "redrive: batch %s: %zu to send (if stopped: redrive batch resume %s)\n",
                b.id, b.total, b.id);
        rd_batchrun_opts ro = {.rate = rate};
        rc = batch_exec(l->ss, l->base, &b, &ro, san);
    }
    batch_info_clear(&b);
    free(jpath);
    return rc;
}

int act_tally_send(const act_opts *o, lookup_run *l, const act_tally *t, const rd_system_cfg *sys,
                   double rate, unsigned san)
{
    size_t n = batchrec_count(t->rec);
    if (n == 0)
        return RD_EXIT_FAIL;            /* nothing to send (the breakdown said why) */
    int rc = select_confirm(o, sys, n, san);
    if (rc != RD_EXIT_OK)
        return rc;
    rc = record_run(l, t->rec, rate, san);
    if (rc == RD_EXIT_OK && t->c.total > n)
        rc = RD_EXIT_FAIL;              /* not every target selected was sent */
    return rc;
}

int act_report_end(const act_tally *t, const char *sel)
{
    char why[400];
    if (!batchrec_stage(t->rec, why, sizeof why)) {
        act_report_str("error", why);
        return RD_EXIT_FAIL;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "batch", batchrec_id(t->rec));
    cJSON_AddStringToObject(o, "selection", sel);
    cJSON_AddNumberToObject(o, "pages", (double)t->pages);
    cJSON_AddNumberToObject(o, "read", (double)t->read);
    cJSON_AddNumberToObject(o, "total", (double)t->c.total);
    cJSON_AddNumberToObject(o, "eligible", (double)t->c.eligible);
    cJSON_AddNumberToObject(o, "ineligible", (double)t->c.ineligible);
    cJSON_AddNumberToObject(o, "loops", (double)t->c.loops);
    cJSON_AddNumberToObject(o, "send", (double)batchrec_count(t->rec));
    cJSON_AddNumberToObject(o, "held_more",
                            (double)(t->held_shown > ACT_HELD_SHOWN ? t->held_shown - ACT_HELD_SHOWN : 0));
    cJSON_AddBoolToObject(o, "past", t->past);
    if (t->capped)
        cJSON_AddNumberToObject(o, "capped", (double)t->limit);
    say_json(o);
    return RD_EXIT_OK;
}

void act_no_password(rd_actor *a, const char *prompt, void *ud)
{
    (void)prompt;
    (void)ud;
    actor_supply_password(a, NULL);   /* --select-only sends nothing: no login */
}

void act_report_error(const act_opts *o, const char *prefix, const char *why, unsigned san)
{
    if (o->select_only)
        act_report_str("error", why);
    else
        err_clean(san, prefix, why);
}

bool act_select_may(const act_opts *o, rd_actor *actor, rd_action kind, unsigned san)
{
    char why[512];
    bool ok = actor_can_act(actor, why, sizeof why);
    if (ok && !(ok = actor_supports(actor, kind)))
        snprintf(why, sizeof why, "this system's profile has no %s action%s", action_name(kind),
                 kind == RD_ACT_RESOLVE ? " ([action resolve]: the core's DLQ update route)" : "");
    if (!ok)
        act_report_error(o, "redrive: refused: ", why, san);
    return ok;
}

int act_stage_run(const act_opts *o, lookup_run *l, const act_stage *st, double rate, unsigned san)
{
    const rd_system_cfg *sys = session_system(l->ss);
    char *jpath = session_journal_path();
    int rc = RD_EXIT_FAIL;
    act_tally *t = st->t;
    t->rec = batchrec_create(jpath, sys->name, actor_identity(session_actor(l->ss)), st->kind, o->reason,
                             st->sel, st->why, st->whycap);
    if (t->rec && o->select_only)
        act_report_str("started", batchrec_id(t->rec));
    if (!t->rec || !st->read(st->ud)) {
        act_report_error(o, "redrive: nothing sent: ", st->why, san);
    } else if (o->select_only) {        /* the console's whole-set action (ui/setretry.c) */
        rc = act_report_end(t, st->sel);
    } else {
        st->say(st->ud, st->sel);
        rc = act_tally_send(o, l, t, sys, rate, san);
    }
    batchrec_free(t->rec);
    t->rec = NULL;
    free(jpath);
    free(st->sel);
    free(st->recs);
    journal_entries_free(st->je, st->nje);
    return rc;
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
    rd_journal_entry *je;
    size_t nje;
    s.recs = act_loop_records(l->ss, &je, &nje, &s.nrec, san);
    act_stage st = {.t = &s.t, .kind = RD_ACT_RETRY, .sel = selection_text(o), .recs = s.recs, .je = je,
                    .nje = nje, .read = read_pages, .say = say, .ud = &s, .why = s.why, .whycap = sizeof s.why};
    return act_stage_run(o, l, &st, rate, san);
}
