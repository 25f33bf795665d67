/* The store-wide selections' shared end (act_select.c, act_dlq.c): their limits, what
 * they report (JSON lines with --select-only), the staged record sent as a batch. */
#include "cli.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../actions/batchopen.h"
#include "../actions/batchrec.h"
#include "../core/groups.h"
#include "../core/sanitize.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "act_priv.h"

enum { SELECT_LIMIT = 100000, SELECT_LIMIT_MAX = 1000000 };

/* RD_EXIT_OK to go ahead: --yes, else on a terminal y/N, or the typed count above
 * confirm_over (the console's rule). The rate, the window and the ETA first. */
static int select_confirm(const act_opts *o, const rd_system_cfg *sys, size_t n, double rate,
                          const act_tally *t, unsigned san)
{
    char pace[160];
    act_pace_line(n, rate > 0 ? rate : sys->rate_limit, t->concurrency, pace, sizeof pace);
    fprintf(stderr, "redrive: %zu to send: %s\n", n, pace);
    if (o->kind == RD_ACT_RETRY)
        act_guard_line(&t->guard, n);     /* only a retry has an outcome to guard by */
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

/* The reason of a held-back target without its figures: "budget exhausted (3/3)" counts
 * as "budget exhausted". */
static void count_reason(act_tally *t, const rd_guard_item *it)
{
    char why[80];
    if (guard_kind(it) == GUARD_LOOP)
        snprintf(why, sizeof why, "loop retr");
    else
        snprintf(why, sizeof why, "%s", it->why && *it->why ? it->why : "eligibility unknown");
    if (!strncmp(why, "DLQ entry ", 10)) {   /* "DLQ entry ID names no ...": without the id */
        const char *rest = strchr(why + 10, ' ');
        memmove(why, rest ? rest + 1 : "", strlen(rest ? rest + 1 : "") + 1);
    }
    why[strcspn(why, "(:;,0123456789")] = 0;
    size_t n = strlen(why);
    while (n && why[n - 1] == ' ')
        why[--n] = 0;
    size_t k = 0;
    while (k < t->nreasons && strcmp(t->reasons[k].why, why) != 0)
        k++;
    if (k == t->nreasons) {
        if (t->nreasons == ACT_REASONS)
            k = ACT_REASONS;                 /* "other" */
        else
            snprintf(t->reasons[t->nreasons++].why, sizeof t->reasons[0].why, "%s", why);
    }
    t->reasons[k].n++;
}

void act_report_held(const act_opts *o, act_tally *t, const rd_guard_item *it, unsigned san)
{
    count_reason(t, it);
    if (!o->select_only && o->verbose) {     /* each one named only when asked */
        t->held_shown++;
        act_guard_say(it, san);
        return;
    }
    if (t->held_shown++ >= ACT_HELD_SHOWN || !o->select_only)
        return;
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

bool act_tally_open(act_tally *t, const char *id, const char *parent)
{
    return batchopen_take(t->open, id, parent) != NULL;
}

void act_report_summary(const act_opts *o, const act_tally *t)
{
    char line[1200];
    size_t at = 0;
    for (size_t k = 0; k <= ACT_REASONS && at < sizeof line; k++) {
        const act_reason *r = &t->reasons[k];
        if (!r->n || (k == ACT_REASONS && !r->n))
            continue;
        const char *why = k == ACT_REASONS ? "other" : r->why;
        bool loop = !strcmp(why, "loop retr");
        at += (size_t)snprintf(line + at, sizeof line - at, "%s%zu %s%s", at ? ", " : "", r->n,
                               why, loop ? (r->n == 1 ? "y" : "ies") : "");
    }
    if (at && !o->select_only) {
        char *c = sanitize_str(line, 0);
        fprintf(stderr, "redrive: held back: %s%s\n", c,
                o->verbose ? "" : " (--verbose names each)");
        free(c);
    }
    const char *id;
    size_t n;
    for (size_t k = 0; batchopen_hit(t->open, k, &id, &n); k++) {
        batchopen_line(id, n, line, sizeof line);
        if (o->select_only)
            act_report_str("open", line);
        else
            fprintf(stderr, "redrive: %s\n", line);
    }
}

static int record_run(lookup_run *l, rd_batchrec *rec, double rate, int concurrency,
                      const batch_guard *g, unsigned san)
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
        rd_batchrun_opts ro = {.rate = rate, .concurrency = concurrency};
        rc = batch_exec(l->ss, l->base, &b, &ro, g, san);
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
    int rc = select_confirm(o, sys, n, rate, t, san);
    if (rc != RD_EXIT_OK)
        return rc;
    rc = record_run(l, t->rec, rate, t->concurrency, &t->guard, san);
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
    cJSON_AddNumberToObject(o, "left_out", (double)batchopen_left_out(t->open));
    cJSON_AddNumberToObject(o, "concurrency", (double)t->concurrency);
    cJSON_AddNumberToObject(o, "rate", t->rate);
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
    t->concurrency = sys->batch_concurrency > 0 ? sys->batch_concurrency : BATCHRUN_CONCURRENCY;
    if (o->concurrency && !act_parse_concurrency(o->concurrency, &t->concurrency)) {
        act_report_error(o, ACT_CONCURRENCY_ERR, o->concurrency, san);
        free(jpath);
        free(st->sel);
        free(st->recs);
        journal_entries_free(st->je, st->nje);
        return RD_EXIT_USAGE;
    }
    if (!batch_guard_parse(o->canary, o->canary_wait, o->max_refail, sys, &t->guard)) {
        free(jpath);
        free(st->sel);
        free(st->recs);
        journal_entries_free(st->je, st->nje);
        return RD_EXIT_USAGE;
    }
    t->guard.verbose = o->verbose;
    t->rate = rate > 0 ? rate : sys->rate_limit > 0 ? sys->rate_limit : 5;
    char running[17];
    if (batchrec_running_on(jpath, sys->name, NULL, running)) {   /* one batch per system */
        char w[200];
        snprintf(w, sizeof w, "batch %s is running on %s: one batch per system (pause it first: "
                 ":batches, or let it end)", running, sys->name);
        act_report_error(o, "redrive: nothing selected: ", w, san);
        free(jpath);
        free(st->sel);
        free(st->recs);
        journal_entries_free(st->je, st->nje);
        return RD_EXIT_FAIL;
    }
    char owhy[400];
    t->open = batchopen_load(jpath, sys->name, NULL, owhy, sizeof owhy);
    if (owhy[0] && !o->select_only)
        err_clean(san, "redrive: warning: open batches not all read: ", owhy);
    const rd_profile *prof = session_profile(l->ss);
    char *store = session_store_identity(sys, prof ? prof->store : NULL);
    char *core = session_core_identity(sys);
    rd_batch_bound bound = {.store = store, .core = core};
    t->rec = batchrec_create_bound(jpath, sys->name, &bound, actor_identity(session_actor(l->ss)),
                                   st->kind, o->reason, st->sel, st->why, st->whycap);
    free(store);
    free(core);
    if (t->rec && o->select_only)
        act_report_str("started", batchrec_id(t->rec));
    if (!t->rec || !st->read(st->ud)) {
        act_report_error(o, "redrive: nothing sent: ", st->why, san);
    } else if (o->select_only) {        /* the console's whole-set action (ui/setretry.c) */
        act_report_summary(o, t);
        rc = act_report_end(t, st->sel);
    } else {
        st->say(st->ud, st->sel);
        act_report_summary(o, t);
        rc = act_tally_send(o, l, t, sys, rate, san);
    }
    batchrec_free(t->rec);
    t->rec = NULL;
    batchopen_free(t->open);
    t->open = NULL;
    free(jpath);
    free(st->sel);
    free(st->recs);
    journal_entries_free(st->je, st->nje);
    return rc;
}
