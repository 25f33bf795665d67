/*
 * redrive batch show ID [--json]
 *
 * One batch (issue 35): its record and journal counts, its state (running: a process holds
 * the record's lock; paused: the canary, the breaker or an operator, with the reason), the last run's
 * rate and window, and what became of each retry the core accepted, read from the store
 * now (session.h: outtrack, a query a page of 500). The figures come from one function,
 * batch_summary_make (actions/batchout.h), the console's batch list's too. With --json one
 * object: the summary, "outcome" and "items" (each item's number, target, journal state and
 * outcome), streamed item by item (memory: one item, whatever the batch's size), a line
 * each: the first line is the summary up to `"items":[` (the console's batch watcher,
 * ui/dlg_canary.c, reads only that one).
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../actions/batchout.h"
#include "../actions/batchrec.h"
#include "../core/sanitize.h"
#include "act_priv.h"

static const char *const ITEM_STATE[] = {
    [BITEM_NONE] = "not_sent", [BITEM_OK] = "ok", [BITEM_FAILED] = "failed",
    [BITEM_UNKNOWN] = "unknown", [BITEM_HELD] = "held",
};

static cJSON *summary_json(const rd_batch_summary *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", s->id);
    cJSON_AddStringToObject(o, "system", s->system);
    cJSON_AddStringToObject(o, "action", s->action);
    cJSON_AddStringToObject(o, "state", s->state);
    if (s->pause_reason)
        cJSON_AddStringToObject(o, "pause_reason", s->pause_reason);
    else
        cJSON_AddNullToObject(o, "pause_reason");
    cJSON_AddNumberToObject(o, "total", (double)s->total);
    cJSON_AddNumberToObject(o, "sent", (double)s->sent);
    cJSON_AddNumberToObject(o, "ok", (double)s->ok);
    cJSON_AddNumberToObject(o, "failed", (double)s->failed);
    cJSON_AddNumberToObject(o, "unknown", (double)s->unknown);
    cJSON_AddNumberToObject(o, "held", (double)s->held);
    cJSON_AddNumberToObject(o, "rate", s->rate);
    cJSON_AddNumberToObject(o, "concurrency", s->concurrency);
    cJSON_AddStringToObject(o, "selection", s->selection);
    cJSON *out = cJSON_AddObjectToObject(o, "outcome");
    cJSON_AddBoolToObject(out, "read", s->outcome_read);
    if (s->outcome_why)
        cJSON_AddStringToObject(out, "why", s->outcome_why);
    else
        cJSON_AddNullToObject(out, "why");
    cJSON_AddNumberToObject(out, "succeeded", (double)s->outcome.succeeded);
    cJSON_AddNumberToObject(out, "failed_again", (double)s->outcome.failed_again);
    cJSON_AddNumberToObject(out, "new_error", (double)s->outcome.new_error);
    cJSON_AddNumberToObject(out, "running", (double)s->outcome.running);
    cJSON_AddNumberToObject(out, "unread", (double)s->outcome.unread);
    cJSON_AddNumberToObject(out, "queries", (double)s->outcome_queries);
    return o;
}

static void summary_text(const rd_batch_summary *s, unsigned san)
{
    char *sys = sanitize_str(s->system, san), *sel = sanitize_str(s->selection, san);
    printf("batch %s  %s  %s  %s\n", s->id, sys, s->action, s->state);
    if (s->pause_reason) {
        char *r = sanitize_str(s->pause_reason, san);
        printf("  paused: %s\n", r);
        free(r);
    }
    printf("  selection: %s\n", sel);
    printf("  total %zu  sent %zu  ok %zu  failed %zu  unknown %zu  held %zu", s->total, s->sent,
           s->ok, s->failed, s->unknown, s->held);
    if (s->concurrency)
        printf("  rate %g/s  concurrency %d (the last run's)", s->rate, s->concurrency);
    putchar('\n');
    char line[300];
    bout_line(&s->outcome, line, sizeof line);
    if (s->outcome_read)
        printf("  outcome (the store, now): %s; %.0f%% of the finished failed again\n", line,
               bout_refail_share(&s->outcome) * 100);
    else {
        char *w = sanitize_str(s->outcome_why, san);
        printf("  outcome: not read: %s\n", w);
        free(w);
    }
    free(sys);
    free(sel);
}

/* Each item: its number, target, journal state and outcome (streamed). */
static bool items_out(const rd_batch_info *b, const unsigned char *st, const unsigned char *outs,
                      bool json, unsigned san, char *why, size_t cap)
{
    rd_batchrd *rd = batchrd_open(b->path, why, cap);
    if (!rd)
        return false;
    if (!json)
        printf("%6s  %-36s  %-8s  %s\n", "ITEM", "ID", "SENT", "OUTCOME");
    size_t item, n = 0;
    rd_target t;
    while (batchrd_next(rd, &item, &t)) {
        if (item >= b->total)
            continue;
        const char *state = ITEM_STATE[st[item] <= BITEM_HELD ? st[item] : BITEM_UNKNOWN];
        const char *out = outs ? bout_name((rd_bout)outs[item]) : "unread";
        if (!outs && (st[item] != BITEM_OK || strcmp(b->action, "retry") != 0))
            out = "none";             /* not accepted, or not a retry: nothing to follow */
        if (json) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "item", (double)item);
            cJSON_AddStringToObject(o, "id", t.id);
            if (t.parent)
                cJSON_AddStringToObject(o, "parent", t.parent);
            else
                cJSON_AddNullToObject(o, "parent");
            cJSON_AddStringToObject(o, "state", state);
            cJSON_AddStringToObject(o, "outcome", out);
            char *s = cJSON_PrintUnformatted(o);
            printf("%s%s", n++ ? ",\n" : "", s);
            free(s);
            cJSON_Delete(o);
        } else {
            char *id = sanitize_str(t.id, san);
            printf("%6zu  %-36s  %-8s  %s\n", item, id, state, out);
            free(id);
        }
    }
    bool ok = !batchrd_damage(rd)[0];
    if (!ok)
        snprintf(why, cap, "batch record %s is damaged: %s", b->path, batchrd_damage(rd));
    batchrd_close(rd);
    return ok;
}

/* The outcomes of b's items from the store of its system (NULL with why when not read). */
static unsigned char *outcomes(const rd_opts *opts, const rd_batch_info *b, size_t *queries,
                               char *why, size_t cap)
{
    rd_opts so = *opts;
    so.system = b->system;
    rd_session *ss = session_new(&so);
    rd_session_io io = {0};
    rd_session_status st = session_open(ss, so.system, &io);
    unsigned char *outs = NULL;
    if (!b->action || strcmp(b->action, "retry") != 0) {
        snprintf(why, cap, "a %s batch has no outcome to follow (retries only)",
                 b->action ? b->action : "?");
    } else if (st != SESSION_OK) {
        snprintf(why, cap, "system %s: its config or profile did not load",
                 b->system ? b->system : "?");
    } else {
        rd_profile prof = {0};           /* a session without parts loads none */
        rd_diags d = {0};
        const rd_system_cfg *sys = session_system(ss);
        bool have = profile_load(sys->profile, &prof, &d);
        if (!have)
            snprintf(why, cap, "profile %s: %s", sys->profile ? sys->profile : "?",
                     d.n ? d.msgs[0] : "cannot load");
        diags_free(&d);
        char *jpath = session_journal_path();
        rd_outtrack *t = have ? outtrack_new(sys, &prof, b, jpath, why, cap) : NULL;
        free(jpath);
        bool read = t && outtrack_refresh(t, 0, why, cap);
        *queries = t ? outtrack_queries(t) : 0;
        if (read) {
            outs = malloc(b->total ? b->total : 1);
            if (outs)
                memcpy(outs, outtrack_outs(t), b->total);
        }
        outtrack_free(t);
        profile_free(&prof);
    }
    session_free(ss);
    return outs;
}

int batch_show(const rd_opts *opts, const rd_batch_info *b, bool json, unsigned san)
{
    char why[512] = "", owhy[512] = "";
    unsigned char *st = NULL;
    rd_bitem_key *keys = NULL;
    size_t nkeys = 0;
    char *jpath = session_journal_path();
    bool ok = batchrec_states(jpath, b, &st, &keys, &nkeys, why, sizeof why);
    free(jpath);
    free(keys);
    if (!ok) {
        err_clean(san, "redrive: batch show: ", why);
        return RD_EXIT_FAIL;
    }
    size_t queries = 0;
    unsigned char *outs = outcomes(opts, b, &queries, owhy, sizeof owhy);
    rd_batch_summary s;
    batch_summary_make(b, b->running, outs, owhy, &s);
    s.outcome_queries = queries;
    if (json) {
        cJSON *o = summary_json(&s);
        char *text = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
        text[strlen(text) - 1] = 0;          /* the object left open for its items */
        printf("%s,\"items\":[\n", text);   /* a line each: the console reads the first */
        free(text);
    } else {
        summary_text(&s, san);
    }
    ok = items_out(b, st, outs, json, san, why, sizeof why);
    if (json)
        puts("\n]}");
    if (!ok)
        err_clean(san, "redrive: batch show: ", why);
    if (!outs)
        err_clean(san, "redrive: batch show: outcome not read: ", owhy);
    bool read = outs != NULL;
    free(outs);
    free(st);
    return !ok ? RD_EXIT_FAIL : read ? RD_EXIT_OK : RD_EXIT_PARTIAL;
}
