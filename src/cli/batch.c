/*
 * redrive batch list [--json]
 * redrive batch show ID [--json]
 * redrive batch resume ID [--rate N] [--concurrency N] [--resend-unknown] [--force] [--yes]
 *                         [--canary N] [--canary-wait DUR] [--max-refail PCT]
 * redrive batch abandon ID
 * redrive batch check ID ITEM...   (the console's guard at send time: batch_check.c)
 *
 * The resumable batches (actions/batchrec.h): a store-wide retry's frozen selection, and
 * how far it got from the journal. A resume sends the items never sent; the ones that may
 * have reached the core (a pending line with no outcome) only with --resend-unknown, and
 * then exactly those, with their keys (the core applies each once). No item with an
 * outcome is ever sent again. A record is bound to the store and core its system pointed
 * at (batchrec.h): a resume under a config whose system of that name points elsewhere is
 * refused, naming both; an older record without them resumes with a warning. A record
 * older than batch_max_age resumes only with --force. The confirmation shows the rate, the
 * window and the ETA, and asks for the count typed (the console's rule above confirm_over).
 * A paused batch (the canary or the breaker, batch_run.c) says why and its outcome so far
 * before that question. `show` is batch_show.c.
 */
#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../actions/batchrec.h"
#include "../core/rfc3339.h"
#include "../core/sanitize.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/loop.h"
#include "act_priv.h"
#include "cmdtable.h"

/* ---- the subcommand ------------------------------------------------------------------ */

typedef struct batch_opts {
    rd_opts opts;
    const char *verb, *id, *rate, *concurrency;
    const char *canary, *canary_wait, *max_refail;
    bool json, resend_unknown, force, verbose;
    char **items;              /* check: the item numbers (argv's) */
    size_t nitems;
} batch_opts;

static const char batch_usage[] =
    "usage: redrive batch list [--json]\n"
    "       redrive batch show ID [--json]\n"
    "       redrive batch resume ID [--rate N] [--concurrency N] [--resend-unknown] [--force]\n"
    "                               [--canary N] [--canary-wait DUR] [--max-refail PCT] [--yes]\n"
    "       redrive batch abandon ID\n"
    "       redrive batch check ID ITEM...\n";

static bool parse(int argc, char **argv, batch_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_option_unknown(CMD_BATCH, a, "redrive"))
            return false;
        const cli_option *opt = cli_option_find(CMD_BATCH, a);
        const char *v = NULL;
        if (opt && opt->value != OV_FLAG) {
            const char *eq = strchr(a, '=');
            v = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
            if (!v) {
                fprintf(stderr, "redrive: %s needs a value\n", opt->name);
                return false;
            }
        }
        if (!opt) {
            if (!o->verb) o->verb = a;
            else if (!o->id) o->id = a;
            else if (!strcmp(o->verb, "check")) {
                if (!o->items)
                    o->items = argv + i;     /* consecutive: checked below */
                if (o->items + o->nitems != argv + i)
                    return false;
                o->nitems++;
            } else return false;
        } else if (!strcmp(opt->name, "--json")) o->json = true;
        else if (!strcmp(opt->name, "--resend-unknown")) o->resend_unknown = true;
        else if (!strcmp(opt->name, "--yes")) o->opts.yes = true;
        else if (!strcmp(opt->name, "--rate")) o->rate = v;
        else if (!strcmp(opt->name, "--concurrency")) o->concurrency = v;
        else if (!strcmp(opt->name, "--canary")) o->canary = v;
        else if (!strcmp(opt->name, "--canary-wait")) o->canary_wait = v;
        else if (!strcmp(opt->name, "--max-refail")) o->max_refail = v;
        else if (!strcmp(opt->name, "--force")) o->force = true;
        else if (!strcmp(opt->name, "--verbose")) o->verbose = true;
        else if (!strcmp(opt->name, "--config")) o->opts.config_path = v;
        else if (!strcmp(opt->name, "--system")) o->opts.system = v;
        else if (!strcmp(opt->name, "--read-only")) o->opts.read_only = true;
    }
    bool list = o->verb && !strcmp(o->verb, "list");
    bool one = o->verb && (!strcmp(o->verb, "resume") || !strcmp(o->verb, "abandon") ||
                           !strcmp(o->verb, "show"));
    bool check = o->verb && !strcmp(o->verb, "check") && o->id && o->nitems;
    return (list && !o->id) || (one && o->id) || check;
}

/* The record's state, "running" while a process sends it (its lock, batchrec_lock). */
static const char *state_now(const rd_batch_info *b)
{
    return batch_info_state(b);
}

static void json_row(cJSON *arr, const rd_batch_info *b)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", b->id);
    cJSON_AddStringToObject(o, "system", b->system ? b->system : "");
    cJSON_AddStringToObject(o, "action", b->action);
    cJSON_AddNumberToObject(o, "total", (double)b->total);
    cJSON_AddNumberToObject(o, "done", (double)(b->ok + b->failed + b->unknown + b->held));
    cJSON_AddNumberToObject(o, "ok", (double)b->ok);
    cJSON_AddNumberToObject(o, "failed", (double)b->failed);
    cJSON_AddNumberToObject(o, "unknown", (double)b->unknown);
    cJSON_AddNumberToObject(o, "held", (double)b->held);   /* held back at send time */
    cJSON_AddStringToObject(o, "state", state_now(b));
    cJSON_AddStringToObject(o, "created", b->created ? b->created : "");
    cJSON_AddStringToObject(o, "selection", b->selection ? b->selection : "");
    cJSON_AddItemToArray(arr, o);
}

static int list(const batch_opts *o, unsigned san)
{
    char *jpath = session_journal_path(), why[512] = "";
    rd_batch_info *v;
    size_t n;
    bool ok = batchrec_list(jpath, &v, &n, why, sizeof why);
    free(jpath);
    if (!ok && !n) {
        err_clean(san, "redrive: batch list: ", why);
        return RD_EXIT_FAIL;
    }
    for (size_t i = 0; i < n; i++)
        if (v[i].damaged)
            err_clean(san, "redrive: ", v[i].damaged);   /* named, not listed, not resumable */
    if (o->json) {
        cJSON *arr = cJSON_CreateArray();
        for (size_t i = 0; i < n; i++)
            if (!v[i].damaged)
                json_row(arr, &v[i]);
        char *s = cJSON_Print(arr);
        puts(s);
        free(s);
        cJSON_Delete(arr);
    } else {
        printf("%-16s  %-12s  %-7s %7s %7s %7s %7s %7s  %-9s  %s\n", "ID", "SYSTEM", "ACTION",
               "TOTAL", "DONE", "OK", "FAILED", "UNKNOWN", "STATE", "SELECTION");
        for (size_t i = 0; i < n; i++) {
            const rd_batch_info *b = &v[i];
            if (b->damaged)
                continue;
            char *sys = sanitize_str(b->system, san), *sel = sanitize_str(b->selection, san);
            char col[64];   /* 12 columns, not 12 bytes: a character is never cut */
            int w = sanitize_fit(sys, 12, col, sizeof col, san);
            printf("%-16s  %s%*s  %-7s %7zu %7zu %7zu %7zu %7zu  %-9s  %s\n", b->id, col,
                   12 - w, "", b->action, b->total, b->ok + b->failed + b->unknown + b->held, b->ok,
                   b->failed, b->unknown, state_now(b), sel);
            free(sys);
            free(sel);
        }
    }
    batch_infos_free(v, n);
    return RD_EXIT_OK;
}

static int abandon(const rd_batch_info *b, unsigned san)
{
    char why[512];
    const char *user = getenv("USER");
    if (!batchrec_abandon(b, user && *user ? user : "?", why, sizeof why)) {
        err_clean(san, "redrive: ", why);
        return RD_EXIT_FAIL;
    }
    size_t done = b->ok + b->failed + b->unknown + b->held;
    fprintf(stderr, "redrive: batch %s abandoned: %zu of %zu never sent\n", b->id,
            b->total - done, b->total);
    return RD_EXIT_OK;
}

/* The record's store and core against what its system points at now: false (said why)
 * when they differ; an older record without them is resumed with a warning. */
static bool bound_here(const rd_batch_info *b, rd_session *ss, unsigned san)
{
    const rd_system_cfg *sys = session_system(ss);
    const rd_profile *prof = session_profile(ss);
    char *store = session_store_identity(sys, prof ? prof->store : NULL);
    char *core = session_core_identity(sys);
    bool ok = true;
    char line[2600];
    if (!b->store && !b->core) {
        snprintf(line, sizeof line, "warning: batch %s was made before batch records named their "
                 "store and core: not checked; resumed against store %s, core %s", b->id,
                 store ? store : "(unknown)", core ? core : "(none)");
        err_clean(san, "redrive: ", line);
    } else if ((b->store && store && strcmp(b->store, store) != 0) ||
               (b->core && core && strcmp(b->core, core) != 0) ||
               (b->store && !store) || (b->core && !core)) {
        snprintf(line, sizeof line, "refused: batch %s was made against store %s, core %s; system "
                 "%s here points at store %s, core %s: nothing sent", b->id,
                 b->store ? b->store : "(unknown)", b->core ? b->core : "(none)", sys->name,
                 store ? store : "(unknown)", core ? core : "(none)");
        err_clean(san, "redrive: ", line);
        ok = false;
    }
    free(store);
    free(core);
    return ok;
}

/* Older than batch_max_age: only with --force. */
static bool fresh_enough(const batch_opts *o, const rd_batch_info *b, const rd_system_cfg *sys)
{
    double made;
    if (!b->created || !rfc3339_parse(b->created, &made))
        return true;                    /* no date to judge by: the record's other checks */
    double age = clock_wall() - made, max = sys->batch_max_age_s > 0 ? sys->batch_max_age_s : 86400;
    if (age <= max || o->force)
        return true;
    fprintf(stderr, "redrive: batch %s is %.1f h old (batch_max_age %.1f h): the store has moved on "
            "since; --force resumes it anyway\n", b->id, age / 3600, max / 3600);
    return false;
}

/* The count typed (the console's rule), or y/N at or below confirm_over. */
static int confirm(const batch_opts *o, const rd_system_cfg *sys, size_t n)
{
    if (o->opts.yes)
        return RD_EXIT_OK;
    if (!isatty(STDIN_FILENO)) {
        fputs("redrive: stdin is not a terminal: refusing to resume without --yes\n", stderr);
        return RD_EXIT_USAGE;
    }
    size_t over = sys->ui.confirm_over > 0 ? (size_t)sys->ui.confirm_over : 0;
    char want[32], ans[32];
    snprintf(want, sizeof want, "%zu", n);
    if (n > over)
        fprintf(stderr, "resume: type %zu to send %zu: ", n, n);
    else
        fputs("Proceed? [y/N] ", stderr);
    bool ok = read_line_tty(stdin, ans, sizeof ans, true) &&
              (n > over ? strcmp(ans, want) == 0 : (ans[0] == 'y' || ans[0] == 'Y'));
    if (!ok)
        fputs("redrive: not confirmed: nothing sent\n", stderr);
    return ok ? RD_EXIT_OK : RD_EXIT_FAIL;
}

/* --verbose: each item held back (unknown) by its target. */
static void say_unknown(const rd_batch_info *b, unsigned san)
{
    char *jpath = session_journal_path(), why[512];
    unsigned char *st = NULL;
    rd_bitem_key *keys = NULL;
    size_t nkeys = 0;
    rd_batchrd *rd = NULL;
    if (batchrec_states(jpath, b, &st, &keys, &nkeys, why, sizeof why) &&
        (rd = batchrd_open(b->path, why, sizeof why))) {
        size_t item;
        rd_target t;
        while (batchrd_next(rd, &item, &t))
            if (item < b->total && st[item] == BITEM_UNKNOWN) {
                char line[600];
                snprintf(line, sizeof line, "  item %zu: %s%s%s: unknown (may have reached the core)",
                         item, t.parent ? t.parent : "", t.parent ? "/" : "", t.id);
                err_clean(san, "redrive: ", line);
            }
    }
    batchrd_close(rd);
    free(st);
    free(keys);
    free(jpath);
}

/* A paused batch: why, and what became of its retries so far (the store, now). */
static void say_paused(const rd_batch_info *b, rd_session *ss, unsigned san)
{
    char line[1400], why[400], counts[300];
    snprintf(line, sizeof line, "batch %s is paused: %s", b->id,
             b->pause_reason ? b->pause_reason : "(no reason recorded)");
    err_clean(san, "redrive: ", line);
    char *jpath = session_journal_path();
    rd_outtrack *t = outtrack_new(session_system(ss), session_profile(ss), b, jpath, why,
                                  sizeof why);
    free(jpath);
    if (t && outtrack_refresh(t, 0, why, sizeof why)) {
        rd_bout_counts c = outtrack_counts(t, false);
        bout_line(&c, counts, sizeof counts);
        fprintf(stderr, "redrive: its outcome so far (the store, now): %s; %.0f%% of the "
                "finished failed again\n", counts, bout_refail_share(&c) * 100);
    } else {
        err_clean(san, "redrive: its outcome so far: not read: ", why);
    }
    outtrack_free(t);
}

/* At most one batch runs per system (a console's or another resume's: batchrun.h's lock);
 * false with why naming the one running. */
static bool one_per_system(const rd_batch_info *b, char *why, size_t whycap)
{
    char *jpath = session_journal_path(), other[17];
    bool busy = b->system && batchrec_running_on(jpath, b->system, b->id, other);
    free(jpath);
    if (busy)
        snprintf(why, whycap, "batch %s is running on %s: one batch per system (pause it first)", other,
                 b->system);
    return !busy;
}

static int resume(batch_opts *o, const rd_batch_info *b, unsigned san)
{
    rd_batchrun_opts ro = {.resend_unknown = o->resend_unknown};
    if (o->rate && !act_parse_rate(o->rate, &ro.rate)) {
        err_clean(0, "redrive: --rate: requests per second, 0 < N <= 1000: ", o->rate);
        return RD_EXIT_USAGE;
    }
    if (o->concurrency && !act_parse_concurrency(o->concurrency, &ro.concurrency)) {
        err_clean(0, ACT_CONCURRENCY_ERR, o->concurrency);
        return RD_EXIT_USAGE;
    }
    size_t done = b->ok + b->failed + b->unknown + b->held;
    size_t n = o->resend_unknown ? b->unknown : b->total - done;
    fprintf(stderr, "redrive: batch %s (%s): %zu of %zu %s%s\n", b->id, b->action, n, b->total,
            o->resend_unknown ? "may have reached the core: re-sent with their keys"
                              : "never sent", n ? "" : ": nothing to do");
    if (b->held)
        fprintf(stderr, "redrive: %zu held back at send time earlier (no longer eligible in the "
                "store): never sent\n", b->held);
    if (b->unknown && !o->resend_unknown)
        fprintf(stderr, "redrive: held back: %zu unknown: may have reached the core (sent, no "
                "outcome): not re-sent; --resend-unknown re-sends exactly those with their keys%s\n",
                b->unknown, o->verbose ? "" : " (--verbose names each)");
    if (b->unknown && !o->resend_unknown && o->verbose)
        say_unknown(b, san);
    if (!n)
        return b->unknown && !o->resend_unknown ? RD_EXIT_FAIL : RD_EXIT_OK;
    if (b->running) {
        fprintf(stderr, "redrive: not sent: batch %s: it is running (in this console or another "
                "redrive)\n", b->id);
        return RD_EXIT_FAIL;
    }
    char why[512];
    if (!batchrec_check_items(b, why, sizeof why)) {   /* its damage first, before any other word */
        err_clean(san, "redrive: not sent: ", why);
        return RD_EXIT_FAIL;
    }
    if (!one_per_system(b, why, sizeof why)) {
        err_clean(san, "redrive: not sent: ", why);
        return RD_EXIT_FAIL;
    }
    o->opts.system = b->system;          /* the record's system, whatever --system says */
    rd_session *ss = session_new(&o->opts);
    rd_loop *base = loop_new();
    rd_session_io io = {.base = base, .parts = SESSION_ACTOR, .on_password = act_on_password};
    rd_session_status st = session_open(ss, o->opts.system, &io);
    session_print_diags(ss, 0, stderr);
    int rc = session_exit_code(st);
    if (st == SESSION_OK) {
        const rd_system_cfg *sys = session_system(ss);
        rc = RD_EXIT_FAIL;
        batch_guard g;
        bool parsed = batch_guard_parse(o->canary, o->canary_wait, o->max_refail, sys, &g);
        g.verbose = o->verbose;
        if (!parsed)
            rc = RD_EXIT_USAGE;
        else if (bound_here(b, ss, san) && fresh_enough(o, b, sys)) {
            char pace[160];
            if (b->paused)
                say_paused(b, ss, san);
            if (ro.rate <= 0)   /* the rate and window it last ran at (+/- in the console) */
                ro.rate = b->rate;
            if (ro.concurrency <= 0)
                ro.concurrency = b->concurrency;
            if (ro.concurrency <= 0)
                ro.concurrency = sys->batch_concurrency > 0 ? sys->batch_concurrency
                                                            : BATCHRUN_CONCURRENCY;
            act_pace_line(n, ro.rate > 0 ? ro.rate : sys->rate_limit, ro.concurrency, pace,
                          sizeof pace);
            fprintf(stderr, "redrive: %zu to send: %s\n", n, pace);
            if (!strcmp(b->action, "retry"))
                act_guard_line(&g, n);
            rc = confirm(o, sys, n);
            if (rc == RD_EXIT_OK)
                rc = batch_exec(ss, base, b, &ro, &g, san);   /* it records the open line */
        }
    }
    session_free(ss);
    loop_free(base);
    return rc;
}

int cli_batch(const rd_opts *opts, int argc, char **argv)
{
    batch_opts o = {.opts = *opts};
    unsigned san = MB_CUR_MAX > 1 ? 0 : SAN_ASCII;
    if (!parse(argc, argv, &o)) {
        fputs(batch_usage, stderr);
        return RD_EXIT_USAGE;
    }
    if (!strcmp(o.verb, "list"))
        return list(&o, san);
    rd_batch_info b;
    char why[512];
    char *jpath = session_journal_path();
    bool found = batchrec_find(jpath, o.id, &b, why, sizeof why);
    free(jpath);
    if (!found) {
        err_clean(san, "redrive: ", why);
        return RD_EXIT_FAIL;
    }
    int rc;
    if (!strcmp(o.verb, "show")) {
        rc = batch_show(&o.opts, &b, o.json, san);
    } else if (!strcmp(o.verb, "check")) {
        rc = batch_check(&o.opts, &b, o.items, o.nitems);
    } else if (b.abandoned) {
        fprintf(stderr, "redrive: batch %s was abandoned\n", b.id);
        rc = RD_EXIT_FAIL;
    } else {
        rc = !strcmp(o.verb, "abandon") ? abandon(&b, san) : resume(&o, &b, san);
    }
    batch_info_clear(&b);
    return rc;
}
