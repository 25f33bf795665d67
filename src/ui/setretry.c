/* The console's whole-set retry (setretry.h), and the DLQ's sets (retry, resolve): the
 * selecting child, the staged record, the run with its progress bar. */
#include "setretry.h"

#include <assert.h>
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../actions/batchrec.h"
#include "../actions/batchrun.h"
#include "../core/jsonget.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/loop.h"
#include "../io/proc.h"
#include "../session/session.h"
#include "app.h"
#include "batches.h"
#include "batchruns.h"
#include "dialog.h"
#include "dlg_canary.h"

enum { HELD_MAX = 10, ARGS_MAX = 24, BAR_W = 40 };
static const double SELECT_TIMEOUT_S = 1800;   /* 100,000 rows at the slowest store */

struct ui_setretry {
    ui_app *app;
    rd_action kind;            /* retry, or resolve (the DLQ's entries) */
    bool dlq;                  /* the store's DLQ entries, not its executions */
    rd_proc *proc;             /* the selecting child, NULL once it ended */
    char *journal;             /* where the record is staged (the journal's state dir) */
    char id[17];               /* the staged record ({"started"}) */
    bool adopted;              /* confirmed: a batch from then on */
    char *what;                /* the selection as asked, for the title */
    char *selection;           /* the record's selection text (the report) */
    size_t read, selected, pages, send, held_more;
    char *open_line;           /* "412 of these are in open batch ID: left out" (the first) */
    double rate;               /* the pace the child reported (rate_limit or --rate) */
    int concurrency;           /* requests in flight at most (batch_concurrency) */
    long capped;               /* the --limit hit, 0 not */
    bool past, reported;
    char *held[HELD_MAX];
    size_t n_held;
    char error[320];
    bool started;              /* sent: its run is the console's (batchruns.h, by id) */
    ui_canary *can;            /* the canary and the breaker offered (dlg_canary.h): the
                                * run's once it starts (batchruns.h), so they go on when
                                * the dialog closes */
};

/* Its run, owned by the console's set of runs (it goes on when the dialog closes). */
static ui_run *run_of(const ui_setretry *s)
{
    return s->started ? runs_find(app_runs(s->app), s->id) : NULL;
}

static void str_set(char **dst, const char *src)
{
    free(*dst);
    *dst = src ? xstrdup(src) : NULL;
}

static size_t num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e12 ? (size_t)v->valuedouble : 0;
}

/* The report: the breakdown into the dialog's counts, the confirmation next. */
static void on_report(ui_setretry *s, const cJSON *o)
{
    ui_dialog *d = app_dialog(s->app);
    char *sel = json_strdup(o, "selection", 1024);
    str_set(&s->selection, sel);
    free(sel);
    s->pages = num(o, "pages");
    s->read = num(o, "read");
    s->send = num(o, "send");
    s->held_more = num(o, "held_more");
    s->concurrency = (int)num(o, "concurrency");
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "rate");
    s->rate = cJSON_IsNumber(r) && r->valuedouble > 0 && r->valuedouble <= 1000 ? r->valuedouble : 0;
    s->capped = (long)num(o, "capped");
    s->past = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "past"));
    d->counts = (rd_guard_counts){.total = num(o, "total"), .eligible = num(o, "eligible"),
                                  .ineligible = num(o, "ineligible"), .loops = num(o, "loops")};
    d->counts.send = s->send;
    s->reported = true;
}

static void on_line(const char *line, void *ud)
{
    ui_setretry *s = ud;
    cJSON *o = line[0] == '{' ? cJSON_Parse(line) : NULL;
    if (!o) {                  /* a diagnostic (config, store): the reason if it fails */
        if (line[0])
            snprintf(s->error, sizeof s->error, "%s", line);
        return;
    }
    char *v;
    if ((v = json_strdup(o, "started", 64)) && strlen(v) == 16)
        memcpy(s->id, v, 17);
    free(v);
    if ((v = json_strdup(o, "held", 600)) && s->n_held < HELD_MAX)
        s->held[s->n_held++] = v;
    else
        free(v);
    if ((v = json_strdup(o, "open", 300)) && !s->open_line)
        s->open_line = v;
    else
        free(v);
    if ((v = json_strdup(o, "error", 300)))
        snprintf(s->error, sizeof s->error, "%s", v);
    free(v);
    if (cJSON_GetObjectItemCaseSensitive(o, "batch"))
        on_report(s, o);
    else if (cJSON_GetObjectItemCaseSensitive(o, "read")) {
        s->read = num(o, "read");
        s->selected = num(o, "selected");
        s->pages = num(o, "pages");
    }
    cJSON_Delete(o);
    app_request_paint(s->app);
}

static void on_selected(bool ok, const char *out, size_t len, const char *why, void *ud)
{
    ui_setretry *s = ud;
    ui_app *app = s->app;
    (void)out, (void)len;
    s->proc = NULL;
    if (!ok || !s->reported) {
        ctx_msg(app_ctx(app), true, "%s: the selection failed: %s", action_name(s->kind),
                s->error[0] ? s->error : why ? why : "no report");
        dialog_close(app);
    } else if (app_dialog(app)->counts.total == 0) {
        ctx_msg(app_ctx(app), false, "%s: nothing matches %s: nothing to %s", action_name(s->kind), s->what,
                action_name(s->kind));
        dialog_close(app);
    } else if (s->send == 0) {   /* a set sends the eligible ones only: nothing to ask */
        const rd_guard_counts *c = &app_dialog(app)->counts;
        bool resolve = s->kind == RD_ACT_RESOLVE;
        char held[96];
        if (c->loops && !resolve)
            snprintf(held, sizeof held, "held back (%zu ineligible, %zu loop retr%s)", c->ineligible, c->loops,
                     c->loops == 1 ? "y" : "ies");
        else
            snprintf(held, sizeof held, "%s", resolve ? "not resolvable" : "ineligible");
        ctx_msg(app_ctx(app), true, "%s: nothing to send: all %zu %s are %s (%s)%s%s", action_name(s->kind), c->total,
                resolve ? "DLQ entries" : s->dlq ? "DLQ entries' executions" : "executions", held, s->what,
                s->n_held ? "; e.g. " : "", s->n_held ? s->held[0] : "");
        dialog_close(app);
    } else {
        s->can = dlgcan_new(app, s->send, s->kind == RD_ACT_RETRY, NULL, NULL);
        app_dialog(app)->state = DLG_CONFIRM;
    }
    app_request_paint(app);
}

/* The child's argv: this binary, its config and system, the selection. */
typedef struct argvb { char *v[ARGS_MAX]; int n; } argvb;

static void arg(argvb *a, char *s)
{
    if (a->n < ARGS_MAX - 1)
        a->v[a->n++] = s;
    else
        free(s);
}

static void args_free(argvb *a)
{
    for (int i = 0; i < a->n; i++)
        free(a->v[i]);
}

/* The DLQ's set asked for ("reason:R", "queue:Q" or "filter": the DLQ view's search), as
 * options (and s->what for the title); false with why. */
static bool dlq_args(ui_app *app, argvb *a, const char *what, ui_setretry *s, char *why, size_t whycap)
{
    const char *text = app_ctx(app)->filter[VIEW_DLQ].text;
    arg(a, xstrdup("--dlq"));
    if (strncmp(what, "reason:", 7) == 0 || strncmp(what, "queue:", 6) == 0) {
        bool reason = what[0] == 'r';
        const char *key = what + (reason ? 7 : 6);
        if (!key[0] || strcmp(key, "-") == 0) {
            snprintf(why, whycap, "these entries name no %s: act on them one at a time (enter)",
                     reason ? "reason" : "queue");
            return false;
        }
        arg(a, xasprintf("--dlq-%s=%s", reason ? "reason" : "queue", key));
        s->what = xasprintf("the DLQ's %s %s", reason ? "reason" : "queue", key);
        return true;
    }
    if (!text[0]) {
        snprintf(why, whycap, "%s every DLQ entry matching a search: search (/) or group (b) first",
                 action_name(s->kind));
        return false;
    }
    arg(a, xasprintf("--filter=%s", text));
    s->what = xasprintf("the DLQ's search text=%s", text);
    return true;
}

/* The selection asked for, as options (and s->what for the title); false with why. */
static bool select_args(ui_app *app, argvb *a, int window_s, const char *what, ui_setretry *s,
                        char *why, size_t whycap)
{
    const ui_filter *f = &app_ctx(app)->filter[VIEW_EXECS];
    char win[48] = "";
    if (window_s > 0)
        snprintf(win, sizeof win, " in the last %ds", window_s);
    if (strncmp(what, "group:", 6) == 0) {
        if (!what[6]) {
            snprintf(why, whycap, "this group has no error text to select by: retry its rows instead");
            return false;
        }
        arg(a, xasprintf("--group=%s", what + 6));
        s->what = xasprintf("error group %s%s", what + 6, win);
    } else {
        if (f->worker[0]) {
            snprintf(why, whycap, "a worker's executions are retried from their rows (marks), not as a set");
            return false;
        }
        if (!f->status[0] && !f->fp[0]) {
            snprintf(why, whycap, "retry everything matching a filter: pick a status (f) or an error (F) first");
            return false;
        }
        if (f->status[0])
            arg(a, xasprintf("--status=%s", f->status));
        if (f->fp[0])
            arg(a, xasprintf("--group=%s", f->fp));
        if (f->text[0])
            arg(a, xasprintf("--filter=%s", f->text));
        s->what = xasprintf("the filter %s%s%s%s%s%s%s", f->status[0] ? "status=" : "", f->status,
                            f->text[0] ? " text=" : "", f->text, f->fp[0] ? " error=" : "", f->fp, win);
    }
    if (window_s > 0)
        arg(a, xasprintf("--since=%ds", window_s));
    return true;
}

/* Refused with a reason on the status line: read-only, no core API, no route for kind. */
static bool may_act(ui_app *app, rd_action kind)
{
    ui_ctx *c = app_ctx(app);
    const char *name = action_name(kind);
    char why[256] = "";
    ui_run *other = app_sys(app) ? runs_running_on(app_runs(app), app_sys(app)->name) : NULL;
    if (c->read_only)
        ctx_msg(c, true, "read-only: %s is disabled", name);
    else if (other)   /* one batch per system: said before the store is asked anything */
        ctx_msg(c, true, "%s: batch %s is running on %s: one batch per system (pause or abort it in :batches)",
                name, run_id(other), app_sys(app)->name);
    else if (dialog_in_background(app, name))
        return false;   /* it said why */
    else if (!app_actor(app) || !app_sources(app) || !app_sys(app) || !app_base(app))   /* headless: no loop */
        ctx_msg(c, true, "%s: a whole-set %s needs the store and the core API", name, name);
    else if (!actor_can_act(app_actor(app), why, sizeof why))
        ctx_msg(c, true, "cannot %s: %s", name, why);
    else if (!actor_supports(app_actor(app), kind))
        ctx_msg(c, true, "this system's profile has no '%s' action", name);
    else
        return true;
    return false;
}

/* The child `redrive KIND --select-only ...` started with the selection's options and the
 * dialog in its selecting state, or the status line says why not. */
static void begin(ui_app *app, rd_action kind, bool dlq, int window_s, const char *what)
{
    char exe[PATH_MAX], why[256];
    if (!may_act(app, kind))
        return;
    if (!realpath("/proc/self/exe", exe)) {
        ctx_msg(app_ctx(app), true, "%s: cannot find the redrive binary to select with", action_name(kind));
        return;
    }
    ui_setretry *s = xcalloc(1, sizeof *s);
    s->app = app;
    s->kind = kind;
    s->dlq = dlq;
    s->journal = session_journal_path();
    argvb a = {0};
    arg(&a, xstrdup(exe));
    arg(&a, xstrdup(action_name(kind)));
    arg(&a, xstrdup("--select-only"));
    if (app_config_path(app))
        arg(&a, xasprintf("--config=%s", app_config_path(app)));
    arg(&a, xasprintf("--system=%s", app_sys(app)->name));
    if (!(dlq ? dlq_args(app, &a, what, s, why, sizeof why) : select_args(app, &a, window_s, what, s, why, sizeof why))) {
        ctx_msg(app_ctx(app), true, "%s: %s", action_name(kind), why);
        args_free(&a);
        setretry_free(s);
        return;
    }
    dialog_close(app);
    s->proc = proc_run_argv(app_base(app), a.v, SELECT_TIMEOUT_S, on_line, on_selected, s);
    args_free(&a);
    if (!s->proc) {
        ctx_msg(app_ctx(app), true, "%s: cannot start the selection", action_name(kind));
        setretry_free(s);
        return;
    }
    static const ui_setretry_ops ops = {setretry_busy, setretry_selecting, setretry_free};
    app_dialog(app)->state = DLG_SELECT;
    app_dialog(app)->kind = kind;
    app_dialog(app)->set = s;
    app_dialog(app)->set_ops = &ops;   /* the dialog's end (dlgrun.c) is below this file */
}

void setretry_begin(ui_app *app, int window_s, const char *what)
{
    begin(app, RD_ACT_RETRY, false, window_s, what);
}

void setretry_begin_dlq(ui_app *app, rd_action kind, const char *what)
{
    assert(kind == RD_ACT_RETRY || kind == RD_ACT_RESOLVE);
    begin(app, kind, true, 0, what);
}

/* ---- the run -------------------------------------------------------------------------- */

void setretry_run(ui_app *app)
{
    ui_setretry *s = app_dialog(app)->set;
    char why[400];
    rd_batch_info b = {0};
    loop_span sp = loop_span_begin();   /* the loop trace: the record read on the loop */
    bool found = batchrec_adopt(s->journal, s->id, why, sizeof why) &&
                 batchrec_find(s->journal, s->id, &b, why, sizeof why);
    loop_span_end(sp, "batchrec_adopt_find");
    if (!found) {
        ctx_msg(app_ctx(app), true, "%s: nothing sent: %s", action_name(s->kind), why);
        dialog_close(app);
        return;
    }
    s->adopted = true;
    /* as shown; the system's own rate_limit stays the system's (0), not the batch's */
    rd_batchrun_opts ro = {.rate = s->rate != app_sys(app)->rate_limit ? s->rate : 0, .concurrency = s->concurrency};
    sp = loop_span_begin();
    /* the canary and the breaker go with the run: they watch on when the dialog closes */
    ui_run *r = runs_start_guarded(app_runs(app), app_actor(app), app_sys(app)->name, &b, &ro, s->can, why,
                                   sizeof why);
    loop_span_end(sp, "batchrun_start");
    batch_info_clear(&b);
    if (r)
        s->can = NULL;   /* the run's now */
    if (!r) {
        ctx_msg(app_ctx(app), true, "%s: refused: %s (batch %s: resumable from :batches)", action_name(s->kind), why, s->id);
        dialog_close(app);
        return;
    }
    s->started = true;
    app_dialog(app)->state = DLG_PROGRESS;
}

bool setretry_raw_key(ui_app *app, ui_key k)
{
    ui_setretry *s = app_dialog(app)->set;
    return s && app_dialog(app)->state == DLG_CONFIRM && dlgcan_key(s->can, k);
}

void setretry_canary_lines(ui_app *app, setretry_add add, void *ud)
{
    const ui_setretry *s = app_dialog(app)->set;
    dlgcan_confirm_lines(s->can, add, ud);
}

void setretry_key(ui_app *app, ui_action a)
{
    ui_setretry *s = app_dialog(app)->set;
    if (app_dialog(app)->state == DLG_SELECT) {
        if (a == UA_CANCEL || a == UA_ABORT) {
            ctx_msg(app_ctx(app), false, "%s: selection stopped: nothing was sent", action_name(s->kind));
            dialog_close(app);
        }
        return;
    }
    ui_run *r = run_of(s);
    if (a == UA_ABORT && run_running(r) && run_waiting(r)) {
        /* the canary's outcome awaited: nothing in flight, it ends now and says so */
        app_dialog(app)->aborted = true;
        run_stop(r, false);
    } else if (a == UA_ABORT && run_running(r)) {
        run_stop(r, false);
        app_dialog(app)->aborted = true;   /* no ETA, no second abort offered */
        ctx_msg(app_ctx(app), true, "aborted: unsent items were not sent (batch %s: S in :batches resumes it)", s->id);
    } else if (a == UA_RATE_UP || a == UA_RATE_DOWN || a == UA_CONC_UP || a == UA_CONC_DOWN) {
        if (run_running(r) && !app_dialog(app)->aborted)
            batches_pace(app, r, a == UA_RATE_UP ? BATCH_OP_RATE_UP : a == UA_RATE_DOWN ? BATCH_OP_RATE_DOWN
                                 : a == UA_CONC_UP ? BATCH_OP_CONC_UP : BATCH_OP_CONC_DOWN);
        else
            ctx_msg(app_ctx(app), true, "the batch is not sending: no rate to change");
    } else if (a == UA_CANCEL && !run_running(r))
        dialog_close(app);
}

void setretry_counts(const ui_setretry *s, size_t *finished, size_t *todo, size_t *ok)
{
    ui_run *r = run_of(s);
    ui_run_info in = {0};
    if (r)
        runs_info(r, &in);
    *finished = in.finished;
    *todo = in.todo;
    *ok = in.ok;
}

/* ---- lines ---------------------------------------------------------------------------- */

static void eta_text(double eta, char *out, size_t cap)
{
    long t = eta > 0 ? (long)(eta + 0.5) : 0;
    if (eta < 0)
        snprintf(out, cap, "-");
    else if (t < 60)
        snprintf(out, cap, "%lds", t);
    else if (t < 3600)
        snprintf(out, cap, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(out, cap, "%ldh%02ldm", t / 3600, t / 60 % 60);
}

static void progress_lines(const ui_setretry *s, setretry_add add, void *ud)
{
    ui_run_info in;
    runs_info(run_of(s), &in);
    bool done = !in.running;
    size_t fin = in.finished, todo = in.todo ? in.todo : 1;
    add(ud, TS_DIALOG_DANGER, xasprintf("%s: %zu/%zu done, %zu ok, %zu failed%s", action_name(s->kind), fin, in.todo,
                                        in.ok, fin - in.ok,
                                        in.paused ? " (paused)" : done ? "" : in.why[0] ? " (stopped)" : " ..."));
    char bar[BAR_W + 1], eta[24];
    size_t full = fin * BAR_W / todo;
    for (size_t i = 0; i < BAR_W; i++)
        bar[i] = i < full ? '#' : '.';
    bar[BAR_W] = 0;
    bool aborted = app_dialog(s->app)->aborted || in.aborted || in.paused;
    if (done || aborted)   /* nothing more will be sent: no time left to show */
        snprintf(eta, sizeof eta, "%s", !aborted ? "done" : in.paused ? "- (paused)" : done ? "- (aborted)"
                                                                     : "- (aborting)");
    else
        eta_text(in.eta, eta, sizeof eta);
    add(ud, TS_DIALOG, xasprintf("[%s] %3zu%%  ETA %s", bar, fin * 100 / todo, eta));
    if (!done && !aborted)
        add(ud, TS_DIALOG, xasprintf("rate %g/s (+ -), %d in flight at most (> <), %d now; journaled: a resume keeps them",
                                     in.rate, in.concurrency, in.lanes));
    size_t held = app_dialog(s->app)->counts.total - s->send;
    add(ud, TS_DIALOG, xasprintf("batch %s  %zu not sent (%s); resumable: redrive batch resume %s", s->id, held,
                                 s->kind == RD_ACT_RESOLVE ? "not resolvable"
                                 : held == 1 ? "ineligible or a loop retry" : "ineligible or loop retries", s->id));
    dlgcan_run_lines(run_canary(run_of(s)), add, ud);   /* the canary's and the breaker's state */
    if (in.held)
        add(ud, TS_DIALOG_DANGER, xasprintf("%zu may have reached the core earlier: not re-sent", in.held));
    if (in.guarded)
        add(ud, TS_DIALOG_DANGER, xasprintf("held back at send time, no longer eligible in the store: %s",
                                            in.guard_line));
    if (!strncmp(in.why, "not checked", 11))   /* the rest stays for a resume */
        add(ud, TS_DIALOG_DANGER, xasprintf("stopped: %s", in.why));
    if (in.fails[0])
        add(ud, TS_DIALOG_DANGER, xstrdup("newest failures:"));
    for (size_t i = 0; i < RUN_FAILS && in.fails[i]; i++)
        add(ud, TS_DIALOG_DANGER, xasprintf("  %s", in.fails[i]));
}

void setretry_lines(ui_app *app, setretry_add add, void *ud)
{
    const ui_setretry *s = app_dialog(app)->set;
    const rd_system_cfg *sys = app_sys(app);
    const char *banner = sys && sys->ui.banner ? sys->ui.banner : "";
    char on[200];   /* "attune-prod (PROD)" */
    snprintf(on, sizeof on, "%s%s%s%s", sys ? sys->name : "?", banner[0] ? " (" : "", banner, banner[0] ? ")" : "");
    if (app_dialog(app)->state == DLG_PROGRESS && run_of(s)) {
        progress_lines(s, add, ud);
        return;
    }
    const char *name = action_name(s->kind);
    if (app_dialog(app)->state == DLG_SELECT) {
        add(ud, TS_DIALOG_DANGER, xasprintf("%s everything matching %s on %s", name, s->what, on));
        add(ud, TS_DIALOG, xasprintf("selecting: %zu read, %zu selected, %zu page%s of the store%s…", s->read,
                                     s->selected, s->pages, s->pages == 1 ? "" : "s", s->dlq ? "'s DLQ" : ""));
        add(ud, TS_DIALOG, xstrdup(s->kind == RD_ACT_RESOLVE ? "each entry resolved through the core's DLQ update; nothing is sent yet"
                                   : "each execution judged by the system's rule and the loop breaker; nothing is sent yet"));
        return;
    }
    size_t total = app_dialog(app)->counts.total;
    const char *what = s->kind == RD_ACT_RESOLVE ? (total == 1 ? "DLQ entry" : "DLQ entries")
                       : s->dlq ? (total == 1 ? "DLQ entry's execution" : "DLQ entries' executions")
                                : (total == 1 ? "execution" : "executions");
    add(ud, TS_DIALOG_DANGER, xasprintf("%s %zu %s on %s?", name, total, what, on));
    add(ud, TS_DIALOG, xasprintf("selected by the store: %s, %zu read from %zu page%s%s", s->selection ? s->selection : s->what,
                                 s->read, s->pages, s->pages == 1 ? "" : "s", s->past ? ", to the window's start" : ""));
    if (s->capped)
        add(ud, TS_DIALOG_DANGER, xasprintf("capped at %ld %s: older ones were not read", s->capped,
                                            s->dlq ? "entries" : "executions"));
    add(ud, TS_DIALOG, xasprintf("frozen as batch %s: %zu to send", s->id, s->send));
    if (s->open_line)
        add(ud, TS_DIALOG_DANGER, xasprintf("%s", s->open_line));
    char eta[24];
    eta_text(s->rate > 0 ? (double)s->send / s->rate : -1, eta, sizeof eta);
    add(ud, TS_DIALOG, xasprintf("rate %g/s, %d in flight at most, ETA %s (at the rate, if the core keeps up)",
                                 s->rate, s->concurrency > 0 ? s->concurrency : BATCHRUN_CONCURRENCY, eta));
}

void setretry_held_lines(ui_app *app, setretry_add add, void *ud)
{
    const ui_setretry *s = app_dialog(app)->set;
    for (size_t i = 0; i < s->n_held && i < 4; i++)
        add(ud, TS_DIALOG_DANGER, xasprintf("  %s", s->held[i]));
    size_t more = s->held_more + (s->n_held > 4 ? s->n_held - 4 : 0);
    if (more)
        add(ud, TS_DIALOG_DANGER, xasprintf("  ... and %zu more not sent", more));
}

bool setretry_busy(const ui_setretry *s)
{
    return s && (s->proc || setretry_running(s));
}

bool setretry_running(const ui_setretry *s)
{
    return s && run_running(run_of(s));
}

bool setretry_selecting(const ui_setretry *s)
{
    return s && s->proc;
}

void setretry_free(ui_setretry *s)
{
    if (!s)
        return;
    proc_cancel(s->proc);
    if (s->id[0] && !s->adopted)
        batchrec_discard(s->journal, s->id);   /* never confirmed: never a batch */
    dlgcan_free(s->can);       /* never started: still the dialog's */
    for (size_t i = 0; i < s->n_held; i++)
        free(s->held[i]);
    free(s->journal);
    free(s->what);
    free(s->selection);
    free(s->open_line);
    free(s);
}
