/*
 * redrive retry ID... | drain W | undrain W | deactivate W | activate W
 *         [--yes] [--force] [--reason TEXT] [--idempotency-key KEY]
 * The same action layer, authentication and journal as the console, and the same guards:
 * a retry shows the breakdown (core/guard.h) and sends only the eligible executions; a
 * drain or deactivation shows the console's warnings (core/drain.h) and is refused when
 * there are any; --force overrides both (journaled). Confirmation on a terminal; refused
 * without --yes when stdin is not a terminal. Exit 0 only when every item was sent and
 * succeeded, 1 otherwise, 2 on usage/config errors.
 *
 * Tasker steps are addressed as STEP_UUID (the task is looked up in the store, as the
 * console knows it) or TASK_UUID/STEP_UUID (or TASK_UUID:STEP_UUID): the route needs both. --idempotency-key re-sends one earlier request with its key (after
 * "may or may not have been applied"); the server then applies it at most once.
 */
#include "cli.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <termios.h>
#include <unistd.h>

#include "../actions/actions.h"
#include "../actions/journal.h"
#include "../core/drain.h"
#include "../core/groups.h"
#include "../core/guard.h"
#include "../core/sanitize.h"
#include "../core/xalloc.h"
#include "../io/loop.h"
#include "act_priv.h"
#include "cmdtable.h"

typedef struct act_run {
    rd_loop *base;
    rd_batch *batch;
    rd_actor *actor;
    unsigned san;
    int interrupts;
    int signo;                 /* the signal that stopped us: exit 128 + signo */
} act_run;

static const char act_usage[] =
    "usage: redrive [--config F] [--system NAME] [--read-only] retry ID... [--yes] "
    "[--reason TEXT]\n"
    "       redrive [options] retry --status S|--group FINGERPRINT [--filter TEXT]\n"
    "               [--since DUR] [--limit N] [--rate N] [--yes]   (every page of the store)\n"
    "               [--select-only]   select and stage, send nothing (JSON lines: the console)\n"
    "       redrive [options] retry|resolve --dlq [--dlq-reason R] [--dlq-queue Q] [--filter TEXT]\n"
    "               [--limit N] [--rate N] [--yes] [--select-only]   (the store's DLQ)\n"
    "       redrive [options] resolve ENTRY... [--yes] [--reason TEXT]   (a DLQ entry: Tasker)\n"
    "       redrive [options] drain|undrain|deactivate|activate WORKER... [--yes] "
    "[--reason TEXT]\n"
    "       --idempotency-key KEY   re-send one earlier request with the same key\n"
    "       --override-loop         retry even a retry loop (a manual retry that failed\n"
    "                               again the same way; journaled as overridden)\n"
    "       --force                 send what the guards hold back: ineligible executions,\n"
    "                               loop retries, a drain with warnings (journaled)\n"
    "  tasker steps: STEP_UUID (its task is read from the store) or TASK_UUID/STEP_UUID\n";

static bool take(int argc, char **argv, int *i, const char *name, const char **out)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) == 0 && argv[*i][n] == '=') {
        *out = argv[*i] + n + 1;
        return true;
    }
    if (strcmp(argv[*i], name) != 0)
        return false;
    *out = *i + 1 < argc ? argv[++*i] : NULL;
    return true;
}

static bool parse_args(int argc, char **argv, act_opts *o)
{
    if (!action_from_name(argv[0], &o->kind))
        return false;
    o->ids = xcalloc((size_t)argc, sizeof *o->ids);
    for (int i = 1; i < argc; i++) {
        const char *v = NULL, *a = argv[i];
        const char **slot = NULL;
        if (strcmp(a, "--") != 0 && cli_option_unknown(cli_command(argv[0]), a, "redrive"))
            return false;                  /* the table decides (cmdtable.h) */
        if (take(argc, argv, &i, "--reason", &v)) slot = &o->reason;
        else if (take(argc, argv, &i, "--idempotency-key", &v)) slot = &o->idem_key;
        else if (take(argc, argv, &i, "--config", &v)) slot = &o->opts.config_path;
        else if (take(argc, argv, &i, "--system", &v)) slot = &o->opts.system;
        else if (take(argc, argv, &i, "--status", &v)) slot = &o->status;
        else if (take(argc, argv, &i, "--filter", &v)) slot = &o->filter;
        else if (take(argc, argv, &i, "--group", &v)) slot = &o->group;
        else if (take(argc, argv, &i, "--since", &v)) slot = &o->since;
        else if (take(argc, argv, &i, "--rate", &v)) slot = &o->rate;
        else if (take(argc, argv, &i, "--limit", &v)) slot = &o->limit;
        else if (take(argc, argv, &i, "--concurrency", &v)) slot = &o->concurrency;
        else if (take(argc, argv, &i, "--canary", &v)) slot = &o->canary;
        else if (take(argc, argv, &i, "--canary-wait", &v)) slot = &o->canary_wait;
        else if (take(argc, argv, &i, "--max-refail", &v)) slot = &o->max_refail;
        else if (take(argc, argv, &i, "--dlq-reason", &v)) slot = &o->dlq_reason;
        else if (take(argc, argv, &i, "--dlq-queue", &v)) slot = &o->dlq_queue;
        if (slot) {
            if (!v) {
                fprintf(stderr, "redrive: %s needs a value\n", a);
                return false;
            }
            *slot = v;
        } else if (!strcmp(a, "--yes") || !strcmp(a, "-y")) {
            o->opts.yes = true;
        } else if (!strcmp(a, "--dlq")) {
            o->dlq = true;
        } else if (!strcmp(a, "--override-loop")) {
            o->override_loop = true;
        } else if (!strcmp(a, "--force")) {
            o->force = true;
        } else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
            o->verbose = true;
        } else if (!strcmp(a, "--select-only")) {
            o->select_only = true;
        } else if (!strcmp(a, "--read-only")) {
            o->opts.read_only = true;
        } else if (!strcmp(a, "--")) {
            while (++i < argc)
                o->ids[o->n++] = argv[i];
        } else if (a[0] == '-' && a[1]) {
            err_clean(0, "redrive: unknown option: ", a);
            return false;
        } else {
            o->ids[o->n++] = argv[i];
        }
    }
    bool select = o->status || o->group || o->dlq;
    if (select && o->n) {
        fprintf(stderr, "redrive: %s either IDs or a selection (--status / --group / --dlq), not both\n",
                action_name(o->kind));
        return false;
    }
    if (!select && (o->canary || o->canary_wait || o->max_refail)) {
        fputs("redrive: --canary, --canary-wait and --max-refail go with --status, --group or "
              "--dlq\n", stderr);
        return false;
    }
    if (!select && (o->filter || o->since || o->limit || o->rate || o->concurrency)) {
        fputs("redrive: --filter, --since, --limit, --rate and --concurrency go with --status, "
              "--group or --dlq\n", stderr);
        return false;
    }
    if ((o->dlq_reason || o->dlq_queue) && !o->dlq) {
        fputs("redrive: --dlq-reason and --dlq-queue go with --dlq\n", stderr);
        return false;
    }
    if (o->dlq && (o->status || o->group || o->since)) {
        fputs("redrive: --dlq selects the DLQ's entries: not with --status, --group or --since\n", stderr);
        return false;
    }
    if (o->select_only && !(o->status || o->group || o->dlq)) {
        fputs("redrive: --select-only goes with --status, --group or --dlq\n", stderr);
        return false;
    }
    if (select && o->idem_key) {
        fputs("redrive: --idempotency-key re-sends exactly one target\n", stderr);
        return false;
    }
    if (o->n == 0 && !select) {
        fprintf(stderr, "redrive %s: which %s?\n", action_name(o->kind),
                action_target_kind(o->kind));
        return false;
    }
    if (o->idem_key && o->n != 1) {
        fputs("redrive: --idempotency-key re-sends exactly one target\n", stderr);
        return false;
    }
    return true;
}

/* The guard (core/guard.h), as the console's confirmation: each execution to retry is
 * read from the store and checked against this system's manual retries in the journal;
 * the breakdown goes to stderr, then each target held back with its reason. Only the
 * eligible ones are kept in t[0..*n), the others with --force (a loop retry also with
 * --override-loop), journaled as overridden. fps owns the fingerprints. */
static void retry_guard(act_opts *o, lookup_run *l, rd_target *t, size_t *n, char **fps,
                        unsigned san)
{
    rd_journal_entry *je = NULL;
    size_t nje = 0, nrec = 0, keep = 0;
    char why[400], down[400] = "";
    rd_retry_record *recs = act_loop_records(l->ss, &je, &nje, &nrec, san);
    rd_guard_item *items = xcalloc(*n ? *n : 1, sizeof *items);
    char (*whys)[400] = xcalloc(*n ? *n : 1, sizeof *whys);
    for (size_t i = 0; i < *n; i++) {
        items[i] = (rd_guard_item){.id = o->ids[i], .why = whys[i]};
        act_guard_read(l, &t[i], recs, nrec, &items[i], whys[i], sizeof whys[i], &fps[i], down);
    }
    rd_guard_counts c = guard_count(items, *n);
    guard_breakdown(&c, why, sizeof why);
    fprintf(stderr, "redrive: %s\n", why);
    for (size_t i = 0; i < *n; i++) {
        rd_guard_kind k = guard_kind(&items[i]);
        if (!guard_sends(k, o->force || (k == GUARD_LOOP && o->override_loop))) {
            act_guard_say(&items[i], san);
            o->held++;
            continue;
        }
        t[i].override_ = guard_override_name(k);
        t[keep++] = t[i];
    }
    *n = keep;
    free(whys);
    free(items);
    free(recs);
    journal_entries_free(je, nje);
}

typedef struct warn_ctx { size_t n; unsigned san; } warn_ctx;

static void warn_line(const char *line, void *ud)
{
    warn_ctx *w = ud;
    err_clean(w->san, "redrive: ", line);   /* queue names come from the broker */
    w->n++;
}

/* The drain guard, as the console's confirmation: the worker read from the store and the
 * warnings of draining or deactivating it (core/drain.h) on stderr. A worker with
 * warnings, or one that cannot be read, is refused without --force (then journaled as
 * overridden). Returns false when t holds nothing left to send. */
static bool drain_guard(act_opts *o, lookup_run *l, rd_target *t, size_t *n, unsigned san)
{
    const rd_model *m = lookup_settle(l, NULL);
    char why[400], line[700];
    bool down = lookup_failed(m, why, sizeof why);
    size_t keep = 0;
    for (size_t i = 0; i < *n; i++) {
        const rd_worker *w = NULL;
        for (size_t k = 0; k < m->workers.n && !w; k++) {
            const rd_worker *x = &m->workers.items[k];
            if ((x->id && strcmp(x->id, t[i].id) == 0) || (x->name && strcmp(x->name, t[i].id) == 0))
                w = x;
        }
        warn_ctx wc = {.san = san};
        if (w)
            drain_warnings(m, w, warn_line, &wc);
        else {
            snprintf(line, sizeof line, "WARNING: %.100s: %s: its warnings are unknown", t[i].id,
                     down ? why : "not among the workers the store shows");
            err_clean(san, "redrive: ", line);
            wc.n = 1;
        }
        size_t warned = wc.n;
        if (warned && !o->force) {
            snprintf(line, sizeof line, "%.100s: not %s: %zu warning%s; --force %ss it anyway", t[i].id,
                     action_past(o->kind), warned, warned == 1 ? "" : "s", action_name(o->kind));
            err_clean(san, "redrive: ", line);
            o->held++;
            continue;
        }
        t[i].override_ = warned ? "drain_warning" : NULL;
        t[keep++] = t[i];
    }
    *n = keep;
    return keep > 0;
}

/* Splits TASK/STEP (or TASK:STEP) when the route needs {task}; a bare STEP gets its task
 * from the store. RD_EXIT_OK, RD_EXIT_USAGE (malformed) or RD_EXIT_FAIL (not found). */
static int make_targets(const act_opts *o, lookup_run *l, rd_target *t, char **parents)
{
    const rd_profile_action *pa = profile_action(session_profile(l->ss), action_name(o->kind));
    bool need_task = pa && pa->path && strstr(pa->path, "{task}");
    for (size_t i = 0; i < o->n; i++) {
        t[i].id = t[i].named = o->ids[i];   /* journaled as typed */
        if (!need_task)
            continue;
        const char *sep = strpbrk(o->ids[i], "/:");
        if (sep && sep != o->ids[i] && sep[1]) {
            parents[i] = xstrndup(o->ids[i], (size_t)(sep - o->ids[i]));
            t[i].id = sep + 1;
        } else {
            char why[400], line[560];
            if (sep || !(parents[i] = lookup_parent(l, o->ids[i], why, sizeof why))) {
                snprintf(line, sizeof line, "%.100s: %s", o->ids[i],
                         sep ? "give TASK_UUID/STEP_UUID or STEP_UUID" : why);
                err_clean(0, "redrive: ", line);
                return sep ? RD_EXIT_USAGE : RD_EXIT_FAIL;
            }
        }
        t[i].parent = parents[i];
    }
    return RD_EXIT_OK;
}

/* RD_EXIT_OK to go ahead, RD_EXIT_FAIL when declined, RD_EXIT_USAGE without a TTY. */
static int confirm(const act_opts *o, const rd_system_cfg *sys, const rd_target *t,
                   unsigned san)
{
    int rc = act_must_ask(o);
    if (rc >= 0)
        return rc;
    char *name = sanitize_str(sys->name, san), *banner = sanitize_str(sys->ui.banner, san);
    fprintf(stderr, "%s %zu %s%s on %s%s%s%s:\n", action_name(o->kind), o->n,
            action_target_kind(o->kind), o->n == 1 ? "" : "s", name,
            banner[0] ? " [" : "", banner, banner[0] ? "]" : "");
    free(name);
    free(banner);
    for (size_t i = 0; i < o->n; i++) {
        char *id = sanitize_str(t[i].id, san), *p = sanitize_str(t[i].parent, san);
        fprintf(stderr, "  %s%s%s\n", p, p[0] ? "/" : "", id);
        free(id);
        free(p);
    }
    fprintf(stderr, "Proceed? [y/N] ");
    char ans[16];
    if (read_line_tty(stdin, ans, sizeof ans, true) && (ans[0] == 'y' || ans[0] == 'Y'))
        return RD_EXIT_OK;
    fputs("redrive: not confirmed: nothing sent\n", stderr);
    return RD_EXIT_FAIL;
}

static void on_item(rd_batch *b, size_t i, const rd_result *r, void *ud)
{
    act_run *run = ud;
    (void)b; (void)i;
    act_print_result(r, run->san);
}

static void on_done(rd_batch *b, void *ud)
{
    act_run *run = ud;
    (void)b;
    loop_exit(run->base);
}

static void on_sigint(int fd, short what, void *arg)
{
    act_run *run = arg;
    (void)what;
    run->signo = (int)fd;
    if (fd != SIGINT) {        /* SIGTERM, SIGHUP: stop now; batch_free journals in-flight */
        loop_exit(run->base);
        return;
    }
    if (run->interrupts++ == 0 && run->batch) {
        fputs("redrive: interrupted: not sending the rest (a request in flight finishes)\n",
              stderr);
        batch_abort(run->batch);
    } else {
        loop_exit(run->base);
    }
}

static int execute(act_opts *o, rd_session *ss, rd_loop *base, rd_target *t,
                   unsigned san)
{
    act_run run = {.san = san, .base = base, .actor = session_actor(ss)};
    const rd_system_cfg *sys = session_system(ss);
    int rc = RD_EXIT_FAIL;
    char why[512];
    rd_batch_cbs cbs = {.on_item = on_item, .on_done = on_done};
    int conf = actor_can_act(run.actor, why, sizeof why) ? confirm(o, sys, t, san)
                                                         : RD_EXIT_OK;
    if (conf != RD_EXIT_OK)
        rc = conf;
    else {
        if (o->idem_key) {
            rd_result prev = {.action = o->kind, .id = (char *)(uintptr_t)t[0].id,
                              .parent = (char *)(uintptr_t)t[0].parent};
            snprintf(prev.idem_key, sizeof prev.idem_key, "%s", o->idem_key);
            run.batch = actor_resend(run.actor, &prev, o->reason, &cbs, &run, why, sizeof why);
        } else {
            run.batch = actor_run(run.actor, o->kind, t, o->n, o->reason, &cbs, &run, why,
                                  sizeof why);
        }
        if (!run.batch)
            err_clean(san, "redrive: refused: ", why);
    }
    if (run.batch) {
        int sigs[] = {SIGINT, SIGTERM, SIGHUP};
        rd_event *sig[3];
        for (int k = 0; k < 3; k++) {
            sig[k] = loop_signal_new(run.base, sigs[k], on_sigint, &run);
        }
        loop_run(run.base);
        for (int k = 0; k < 3; k++)
            loop_event_free(sig[k]);
        size_t ok = batch_succeeded(run.batch), n = batch_count(run.batch);
        if (n > 1)
            fprintf(stderr, "%zu of %zu %s\n", ok, n, action_past(o->kind));
        rc = batch_done(run.batch) && ok == n ? RD_EXIT_OK : RD_EXIT_FAIL;
        batch_free(run.batch);
    }
    return run.signo ? 128 + run.signo : rc;
}

/* The executions a page of a store-wide selection (retry --status/--group) reads, unless
 * the system's page_size is below the default (100): then its own. */
enum { SELECT_PAGE = 1000 };

int cli_action(const rd_opts *opts, int argc, char **argv)
{
    act_opts o = {.opts = *opts};
    rd_session *ss = NULL;
    rd_loop *base = NULL;
    rd_target *t = NULL;
    char **parents = NULL, **fps = NULL;
    size_t n_ids = 0;
    int rc = RD_EXIT_USAGE;
    unsigned san = MB_CUR_MAX > 1 ? 0 : SAN_ASCII;
    if (!parse_args(argc, argv, &o)) {
        fputs(act_usage, stderr);
        goto out;
    }
    base = loop_new();
    ss = session_new(&o.opts);
    lookup_run look = {.base = base, .ss = ss};
    rd_system_cfg *sel_sys = o.status || o.group ? session_find(ss, o.opts.system) : NULL;
    if (sel_sys && sel_sys->ui.page_size >= 100 && sel_sys->ui.page_size < SELECT_PAGE)
        sel_sys->ui.page_size = SELECT_PAGE;   /* fewer round trips; a smaller page_size is kept */
    /* the sources are built but start only when a Tasker step needs its task looked up */
    rd_session_io io = {.base = base, .parts = SESSION_ACTOR | SESSION_SOURCES,
                        .on_password = o.select_only ? act_no_password : act_on_password,
                        .on_change = act_on_change,
                        .change_ud = &look};
    rd_session_status st = session_open(ss, o.opts.system, &io);
    session_print_diags(ss, 0, o.select_only ? stdout : stderr);   /* the console shows them */
    if (st != SESSION_OK) {
        rc = session_exit_code(st);
        goto out;
    }
    if (o.status || o.group || o.dlq) {
        rc = o.dlq ? act_dlq(&o, &look, san) : act_select(&o, &look, san);
        goto out;
    }
    n_ids = o.n;
    t = xcalloc(o.n, sizeof *t);
    parents = xcalloc(o.n, sizeof *parents);
    rc = make_targets(&o, &look, t, parents);
    fps = xcalloc(o.n, sizeof *fps);
    size_t n_send = o.n;
    /* the guards (an action the profile lacks is refused by execute, unguarded) */
    bool guarded = rc == RD_EXIT_OK && !o.idem_key && actor_supports(session_actor(ss), o.kind);
    if (guarded && o.kind == RD_ACT_RETRY)
        retry_guard(&o, &look, t, &n_send, fps, san);
    else if (guarded && (o.kind == RD_ACT_DRAIN || o.kind == RD_ACT_DEACTIVATE))
        drain_guard(&o, &look, t, &n_send, san);
    if (rc == RD_EXIT_OK && n_send == 0)
        rc = RD_EXIT_FAIL;           /* the guards held back every target: nothing sent */
    else if (rc == RD_EXIT_OK) {
        o.n = n_send;
        rc = execute(&o, ss, base, t, san);
        if (rc == RD_EXIT_OK && o.held)
            rc = RD_EXIT_FAIL;       /* not every target was sent */
    }
out:
    for (size_t i = 0; parents && i < n_ids; i++)
        free(parents[i]);
    for (size_t i = 0; fps && i < n_ids; i++)
        free(fps[i]);
    free(parents);
    free(fps);
    free(t);
    free(o.ids);
    session_free(ss);   /* the actor before its loop */
    if (base)
        loop_free(base);
    return rc;
}
