/*
 * redrive retry ID... | drain W | undrain W | deactivate W | activate W
 *         [--yes] [--reason TEXT] [--idempotency-key KEY]
 * The same action layer, authentication and journal as the console. Confirmation on a
 * terminal; refused without --yes when stdin is not a terminal. Exit 0 only when every
 * item succeeded, 1 otherwise, 2 on usage/config errors.
 *
 * Tasker steps are addressed as STEP_UUID (the task is looked up in the store, as the
 * console knows it) or TASK_UUID/STEP_UUID (or TASK_UUID:STEP_UUID): the route needs both. --idempotency-key re-sends one earlier request with its key (after
 * "may or may not have been applied"); the server then applies it at most once.
 */
#include "cli.h"

#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <termios.h>
#include <unistd.h>

#include "../actions/actions.h"
#include "../actions/journal.h"
#include "../core/groups.h"
#include "../core/sanitize.h"
#include "../core/xalloc.h"
#include "../io/loop.h"
#include "cmdtable.h"

typedef struct act_opts {
    rd_opts opts;              /* the global options, with those given after the verb */
    rd_action kind;
    const char *reason;
    const char *idem_key;
    char **ids;
    size_t n;
    bool override_loop;        /* --override-loop: retry loop retries too (journaled) */
    size_t skipped;            /* loop retries left out */
} act_opts;

typedef struct act_run {
    struct event_base *base;
    rd_batch *batch;
    rd_actor *actor;
    unsigned san;
    int interrupts;
    int signo;                 /* the signal that stopped us: exit 128 + signo */
} act_run;

static const char act_usage[] =
    "usage: redrive [--config F] [--system NAME] [--read-only] retry ID... [--yes] "
    "[--reason TEXT]\n"
    "       redrive [options] drain|undrain|deactivate|activate WORKER... [--yes] "
    "[--reason TEXT]\n"
    "       --idempotency-key KEY   re-send one earlier request with the same key\n"
    "       --override-loop         retry even a retry loop (a manual retry that failed\n"
    "                               again the same way; journaled as overridden)\n"
    "  tasker steps: STEP_UUID (its task is read from the store) or TASK_UUID/STEP_UUID\n";

static void err_clean(unsigned san, const char *fmt_prefix, const char *msg)
{
    char *c = sanitize_str(msg, san);
    fprintf(stderr, "%s%s\n", fmt_prefix, c);
    free(c);
}

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
        if (slot) {
            if (!v) {
                fprintf(stderr, "redrive: %s needs a value\n", a);
                return false;
            }
            *slot = v;
        } else if (!strcmp(a, "--yes") || !strcmp(a, "-y")) {
            o->opts.yes = true;
        } else if (!strcmp(a, "--override-loop")) {
            o->override_loop = true;
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
    if (o->n == 0) {
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

/* Finding a Tasker step's task in the store: the sources run only for that. */
typedef struct lookup_run {
    struct event_base *base;
    rd_session *ss;
    bool started;
    bool looking;              /* in lookup_exec: a settled store ends its loop */
} lookup_run;

static const double LOOKUP_DEADLINE_S = 8.0;
enum { LOOP_JOURNAL_TAIL = 500 };     /* as the console reads it */

static void on_lookup_change(void *ud)
{
    lookup_run *l = ud;
    rd_sources *src = session_sources(l->ss);
    /* only while looking: the sources keep polling afterwards, during the action's loop */
    if (l->looking && src && sources_settled(src) && sources_idle(src))
        event_base_loopbreak(l->base);
}

static void on_lookup_deadline(evutil_socket_t fd, short what, void *arg)
{
    (void)fd; (void)what;
    event_base_loopbreak(arg);
}

/* Execution `id` read as the console reads it: the executions page that starts at it
 * (sources_jump). Points into the session's model (valid until the loop runs again), or
 * NULL with why. */
static const rd_execution *lookup_exec(lookup_run *l, const char *id, char *why, size_t cap)
{
    rd_sources *src = session_sources(l->ss);
    if (!l->started) {
        l->started = true;
        session_start(l->ss);
    }
    sources_jump(src, id);
    struct event *deadline = evtimer_new(l->base, on_lookup_deadline, l->base);
    struct timeval tv = {(time_t)LOOKUP_DEADLINE_S, 0};
    evtimer_add(deadline, &tv);
    l->looking = true;
    loop_run(l->base);
    l->looking = false;
    event_free(deadline);
    const rd_model *m = session_model(l->ss);
    for (size_t i = 0; i < m->execs.n; i++) {
        const rd_execution *e = &m->execs.items[i];
        if (e->id && strcasecmp(e->id, id) == 0)
            return e;
    }
    for (size_t i = 0; i < m->sources.n; i++)
        if (m->sources.items[i].state != RD_SRC_OK && m->sources.items[i].error[0]) {
            snprintf(why, cap, "%s: %s", m->sources.items[i].name, m->sources.items[i].error);
            return NULL;
        }
    snprintf(why, cap, "not in the store");
    return NULL;
}

/* The step's task (lookup_exec). Allocated, or NULL with why. */
static char *lookup_parent(lookup_run *l, const char *id, char *why, size_t cap)
{
    char w[300];
    const rd_execution *e = lookup_exec(l, id, w, sizeof w);
    if (e && e->parent_id)
        return xstrdup(e->parent_id);
    if (!e && strcmp(w, "not in the store") != 0)
        snprintf(why, cap, "cannot find its task: %s", w);
    else
        snprintf(why, cap, "no such step in the store (or give TASK_UUID/STEP_UUID)");
    return NULL;
}

/* The retry-loop breaker, as in the console: each execution to retry is read from the
 * store for its error fingerprint and attempt (journaled with the retry), and checked
 * against this system's manual retries in the journal. A loop retry is left out unless
 * --override-loop (then journaled as overridden). Keeps the targets to send in t[0..*n);
 * fps owns the fingerprints. A target that cannot be read is retried without the check
 * (said on stderr). */
static void loop_check(act_opts *o, lookup_run *l, rd_target *t, size_t *n, char **fps,
                       unsigned san)
{
    rd_journal_entry *je = NULL;
    size_t nje = 0, nrec = 0, keep = 0;
    char why[400], line[700];
    char *path = session_journal_path();
    if (path && !journal_read_tail(path, LOOP_JOURNAL_TAIL, &je, &nje, why, sizeof why))
        err_clean(san, "redrive: journal unreadable, no retry-loop check: ", why);
    free(path);
    const rd_system_cfg *sys = session_system(l->ss);
    rd_retry_record *recs = journal_retries(je, nje, sys ? sys->name : NULL, &nrec);
    bool store_down = false;   /* the store failed once: no more waiting on it */
    for (size_t i = 0; i < *n; i++) {
        rd_target x = t[i];
        const rd_execution *e = store_down ? NULL : lookup_exec(l, x.id, why, sizeof why);
        store_down = store_down || (!e && strcmp(why, "not in the store") != 0);
        if (!e) {
            snprintf(line, sizeof line, "%.100s: cannot read it (%s): retried without the "
                     "retry-loop check", x.id, why);
            err_clean(san, "redrive: ", line);
            t[keep++] = x;
            continue;
        }
        if (e->fingerprint)
            x.fp = fps[i] = xstrdup(e->fingerprint);
        x.attempt = e->attempt;
        int k = loop_count(e, recs, nrec);
        if (k > 0 && !o->override_loop) {
            snprintf(line, sizeof line, "%.100s: manual retry #%d of the same failure (it failed "
                     "again the same way after %d manual retr%s): skipped; --override-loop "
                     "retries it anyway", x.id, k + 1, k, k == 1 ? "y" : "ies");
            err_clean(san, "redrive: ", line);
            o->skipped++;
            continue;
        }
        x.override_loop = k > 0;
        t[keep++] = x;
    }
    *n = keep;
    free(recs);
    journal_entries_free(je, nje);
}

/* Splits TASK/STEP (or TASK:STEP) when the route needs {task}; a bare STEP gets its task
 * from the store. RD_EXIT_OK, RD_EXIT_USAGE (malformed) or RD_EXIT_FAIL (not found). */
static int make_targets(const act_opts *o, lookup_run *l, rd_target *t, char **parents)
{
    const rd_profile_action *pa = profile_action(session_profile(l->ss), action_name(o->kind));
    bool need_task = pa && pa->path && strstr(pa->path, "{task}");
    for (size_t i = 0; i < o->n; i++) {
        t[i].id = o->ids[i];
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

static bool read_line_tty(FILE *in, char *buf, size_t cap, bool echo)
{
    struct termios old, raw;
    int fd = fileno(in);
    bool restore = false;
    if (!echo && tcgetattr(fd, &old) == 0) {
        raw = old;
        raw.c_lflag &= ~(tcflag_t)ECHO;
        restore = tcsetattr(fd, TCSAFLUSH, &raw) == 0;
    }
    bool ok = fgets(buf, (int)cap, in) != NULL;
    if (restore) {
        tcsetattr(fd, TCSAFLUSH, &old);
        fputc('\n', stderr);
    }
    if (ok)
        buf[strcspn(buf, "\r\n")] = '\0';
    return ok;
}

/* RD_EXIT_OK to go ahead, RD_EXIT_FAIL when declined, RD_EXIT_USAGE without a TTY. */
static int confirm(const act_opts *o, const rd_system_cfg *sys, const rd_target *t,
                   unsigned san)
{
    if (o->opts.yes)
        return RD_EXIT_OK;
    if (!isatty(STDIN_FILENO)) {
        fprintf(stderr, "redrive: stdin is not a terminal: refusing to %s without --yes\n",
                action_name(o->kind));
        return RD_EXIT_USAGE;
    }
    char *name = sanitize_str(sys->name, san), *banner = sanitize_str(sys->banner, san);
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

static void on_password(rd_actor *a, const char *prompt, void *ud)
{
    (void)ud;
    FILE *tty = fopen("/dev/tty", "r+");
    if (!tty) {
        actor_supply_password(a, NULL);
        return;
    }
    fputs(prompt, stderr);
    char pw[512];
    bool ok = read_line_tty(tty, pw, sizeof pw, false);
    fclose(tty);
    actor_supply_password(a, ok ? pw : NULL);
    memset(pw, 0, sizeof pw);
}

static void on_item(rd_batch *b, size_t i, const rd_result *r, void *ud)
{
    act_run *run = ud;
    (void)b; (void)i;
    char line[640];
    snprintf(line, sizeof line, "%s%s%s: %s: %s (HTTP %ld, key %s)",
             r->parent ? r->parent : "", r->parent ? "/" : "", r->id, result_code_name(r->code),
             r->message, r->http_status, r->idem_key[0] ? r->idem_key : "-");
    char *c = sanitize_str(line, run->san);
    fprintf(stdout, "%s\n", c);
    fflush(stdout);
    free(c);
}

static void on_done(rd_batch *b, void *ud)
{
    act_run *run = ud;
    (void)b;
    event_base_loopexit(run->base, NULL);
}

static void on_sigint(evutil_socket_t fd, short what, void *arg)
{
    act_run *run = arg;
    (void)what;
    run->signo = (int)fd;
    if (fd != SIGINT) {        /* SIGTERM, SIGHUP: stop now; batch_free journals in-flight */
        event_base_loopexit(run->base, NULL);
        return;
    }
    if (run->interrupts++ == 0 && run->batch) {
        fputs("redrive: interrupted: not sending the rest (a request in flight finishes)\n",
              stderr);
        batch_abort(run->batch);
    } else {
        event_base_loopexit(run->base, NULL);
    }
}

static int execute(act_opts *o, rd_session *ss, struct event_base *base, rd_target *t,
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
        struct event *sig[3];
        for (int k = 0; k < 3; k++) {
            sig[k] = evsignal_new(run.base, sigs[k], on_sigint, &run);
            event_add(sig[k], NULL);
        }
        loop_run(run.base);
        for (int k = 0; k < 3; k++)
            event_free(sig[k]);
        size_t ok = batch_succeeded(run.batch), n = batch_count(run.batch);
        if (n > 1)
            fprintf(stderr, "%zu of %zu %s\n", ok, n, action_past(o->kind));
        rc = batch_done(run.batch) && ok == n ? RD_EXIT_OK : RD_EXIT_FAIL;
        batch_free(run.batch);
    }
    return run.signo ? 128 + run.signo : rc;
}

int cli_action(const rd_opts *opts, int argc, char **argv)
{
    act_opts o = {.opts = *opts};
    rd_session *ss = NULL;
    struct event_base *base = NULL;
    rd_target *t = NULL;
    char **parents = NULL, **fps = NULL;
    size_t n_ids = 0;
    int rc = RD_EXIT_USAGE;
    unsigned san = MB_CUR_MAX > 1 ? 0 : SAN_ASCII;
    if (!parse_args(argc, argv, &o)) {
        fputs(act_usage, stderr);
        goto out;
    }
    base = event_base_new();
    ss = session_new(&o.opts);
    lookup_run look = {.base = base, .ss = ss};
    /* the sources are built but start only when a Tasker step needs its task looked up */
    rd_session_io io = {.base = base, .parts = SESSION_ACTOR | SESSION_SOURCES,
                        .on_password = on_password, .on_change = on_lookup_change,
                        .change_ud = &look};
    rd_session_status st = session_open(ss, o.opts.system, &io);
    session_print_diags(ss, 0, stderr);
    if (st != SESSION_OK) {
        rc = session_exit_code(st);
        goto out;
    }
    n_ids = o.n;
    t = xcalloc(o.n, sizeof *t);
    parents = xcalloc(o.n, sizeof *parents);
    rc = make_targets(&o, &look, t, parents);
    fps = xcalloc(o.n, sizeof *fps);
    size_t n_send = o.n;
    if (rc == RD_EXIT_OK && o.kind == RD_ACT_RETRY && !o.idem_key)
        loop_check(&o, &look, t, &n_send, fps, san);
    if (rc == RD_EXIT_OK && n_send == 0)
        rc = RD_EXIT_FAIL;           /* every target was a loop retry: nothing sent */
    else if (rc == RD_EXIT_OK) {
        o.n = n_send;
        rc = execute(&o, ss, base, t, san);
        if (rc == RD_EXIT_OK && o.skipped)
            rc = RD_EXIT_FAIL;       /* not every item was retried */
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
        event_base_free(base);
    return rc;
}
