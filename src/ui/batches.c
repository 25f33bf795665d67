/* The console's batches (batches.h): its runs, the records read off the loop, and what
 * the :batches view and the progress dialog ask of them. */
#include "batches.h"
#include "batchcheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../actions/batchrec.h"
#include "../core/rfc3339.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "app_priv.h"
#include "bgjob.h"
#include "binding.h"
#include "dialog.h"

enum { ITEMS_MAX = 2000 };
static const double LIST_EVERY_S = 2.0;   /* the records read again while :batches shows */

struct ui_batches_st {
    ui_runs *runs;
    ui_bgjobs *jobs;
    rd_event *tick;
    bool ticking;              /* tick armed: only while :batches shows (an idle loop sleeps) */
    rd_batch_info *infos;      /* as last read, oldest first */
    size_t n_infos;
    bool list_pending, items_pending;
    char error[400];
    ui_batch_row *rows;
    size_t cap_rows;
    ui_batch_item *items;
    size_t n_items, items_total;
    char items_of[17];
    char armed[17];            /* S pressed once on this batch: the next S resumes it */
    ui_batches pub;
};

static ui_batches_st *st(ui_app *app) { return app->bst; }
ui_runs *app_runs(const ui_app *app) { return app->bst ? app->bst->runs : NULL; }

/* ---- jobs off the loop ---------------------------------------------------------------- */

typedef struct list_job {
    ui_app *app;
    char *journal;
    rd_batch_info *v;
    size_t n;
    bool ok;
    char why[400];
} list_job;

static void list_run(void *arg)
{
    list_job *j = arg;
    j->ok = j->journal && batchrec_list(j->journal, &j->v, &j->n, j->why, sizeof j->why);
    if (!j->journal)
        snprintf(j->why, sizeof j->why, "no state directory (set XDG_STATE_HOME or HOME)");
}

static void list_done(void *arg, bool cancelled)
{
    list_job *j = arg;
    if (!cancelled) {
        ui_batches_st *s = st(j->app);
        batch_infos_free(s->infos, s->n_infos);
        s->infos = j->v;
        s->n_infos = j->n;
        j->v = NULL;           /* taken */
        j->n = 0;
        s->list_pending = false;
        snprintf(s->error, sizeof s->error, "%s", j->ok ? "" : j->why);
        s->pub.read = true;
        s->pub.read_at = app_now(j->app);
        app_request_paint(j->app);
    }
    batch_infos_free(j->v, j->n);
    free(j->journal);
    free(j);
}

static void list_read(ui_app *app)
{
    ui_batches_st *s = st(app);
    if (s->list_pending)
        return;
    s->list_pending = true;
    list_job *j = xcalloc(1, sizeof *j);
    j->app = app;
    j->journal = session_journal_path();
    bgjobs_queue(s->jobs, list_run, list_done, j);
}

typedef struct items_job {
    ui_app *app;
    char *journal;
    char id[17];
    ui_batch_item *v;
    size_t n, total;
    char why[400];
} items_job;

static int group_of(unsigned char state)   /* failed first, then unknown, not sent, ok */
{
    return state == BITEM_FAILED ? 0 : state == BITEM_UNKNOWN ? 1 : state == BITEM_NONE ? 2 : 3;
}

static void items_run(void *arg)
{
    items_job *j = arg;
    rd_batch_info b;
    unsigned char *states = NULL;
    rd_bitem_key *keys = NULL;
    size_t nkeys = 0;
    if (!batchrec_find(j->journal, j->id, &b, j->why, sizeof j->why))
        return;
    ui_batch_item *g[4] = {0};
    size_t n[4] = {0}, cap[4] = {0};
    rd_batchrd *rd = NULL;
    if (batchrec_states(j->journal, &b, &states, &keys, &nkeys, j->why, sizeof j->why) &&
        (rd = batchrd_open(b.path, j->why, sizeof j->why))) {
        size_t item;
        rd_target t;
        while (batchrd_next(rd, &item, &t)) {
            if (item >= b.total)
                continue;
            int k = group_of(states[item]);
            if (n[k] >= ITEMS_MAX)    /* each group's first ones: the screen's share */
                continue;
            xgrow(&g[k], &cap[k], n[k] + 1, sizeof *g[k]);
            g[k][n[k]++] = (ui_batch_item){.item = item, .state = states[item],
                                           .target = t.parent ? xasprintf("%s/%s", t.parent, t.id)
                                                              : xstrdup(t.id)};
        }
    }
    batchrd_close(rd);
    j->total = b.total;
    size_t vcap = 0;
    for (int k = 0; k < 4; k++) {
        for (size_t i = 0; i < n[k]; i++) {
            if (j->n < ITEMS_MAX) {
                xgrow(&j->v, &vcap, j->n + 1, sizeof *j->v);
                j->v[j->n++] = g[k][i];
            } else {
                free(g[k][i].target);
            }
        }
        free(g[k]);
    }
    free(states);
    free(keys);
    batch_info_clear(&b);
}

static void items_free(ui_batch_item *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].target);
    free(v);
}

static void items_done(void *arg, bool cancelled)
{
    items_job *j = arg;
    ui_batches_st *s = cancelled ? NULL : st(j->app);
    if (s && strcmp(s->items_of, j->id) == 0) {
        items_free(s->items, s->n_items);
        s->items = j->v;
        s->n_items = j->n;
        s->items_total = j->total;
        s->items_pending = false;
        if (j->why[0])
            ctx_msg(&j->app->ctx, true, "batch %s: %s", j->id, j->why);
        j->v = NULL;           /* taken */
        j->n = 0;
        app_request_paint(j->app);
    }
    items_free(j->v, j->n);
    free(j->journal);
    free(j);
}

/* A control line (and, for a resume, the record's binding checked: the store and core its
 * system points at now must be the ones it was made against). */
typedef struct ctl_job {
    ui_app *app;
    char *journal, *operator_;
    char id[17];
    rd_batch_ctl ctl;
    bool resume;
    const rd_system_cfg *sys;  /* resume: the config's (immutable while the console runs) */
    char *store_kind;
    rd_batch_info b;           /* resume: read fresh */
    bool ok;
    char why[700];
} ctl_job;

/* The record's store and core against the system's (session_bound.c; may ask the store). */
static bool bound_here(ctl_job *j)
{
    char *store = session_store_identity(j->sys, j->store_kind);
    char *core = session_core_identity(j->sys);
    const rd_batch_info *b = &j->b;
    bool st_diff = (b->store && store && strcmp(b->store, store) != 0) || (b->store && !store);
    bool co_diff = (b->core && core && strcmp(b->core, core) != 0) || (b->core && !core);
    /* the one that differs first: a status line is short */
    if (st_diff || co_diff)
        snprintf(j->why, sizeof j->why, "refused, nothing sent: made against %s %s; %s's is %s%s%s%s%s",
                 st_diff ? "store" : "core", st_diff ? b->store : b->core, j->sys->name,
                 st_diff ? (store ? store : "(unknown)") : (core ? core : "(none)"),
                 st_diff && co_diff ? "; core " : "", st_diff && co_diff ? b->core : "",
                 st_diff && co_diff ? ", here " : "", st_diff && co_diff ? (core ? core : "(none)") : "");
    free(store);
    free(core);
    return !st_diff && !co_diff;
}

static void ctl_run(void *arg)
{
    ctl_job *j = arg;
    j->ok = batchrec_find(j->journal, j->id, &j->b, j->why, sizeof j->why) &&
            (!j->resume || bound_here(j)) &&
            batchrec_control(&j->b, &j->ctl, j->operator_, j->why, sizeof j->why);
}

static void resume_start(ui_app *app, ctl_job *j)
{
    ui_batches_st *s = st(app);
    rd_session *ss = binding_session_of(app->bind, j->sys->name);
    rd_actor *a = ss ? session_actor(ss) : NULL;
    char why[600];
    rd_batchrun_opts o = {.rate = j->ctl.rate, .concurrency = j->ctl.concurrency};
    if (o.concurrency <= 0)
        o.concurrency = j->sys->batch_concurrency;
    ui_run *r = a ? runs_start(s->runs, a, j->sys->name, &j->b, &o, why, sizeof why) : NULL;
    if (!a)
        snprintf(why, sizeof why, "system %s has no core API open here", j->sys->name);
    if (!r) {
        ctx_msg(&app->ctx, true, "batch %s: not resumed: %s", j->id, why);
        return;
    }
    ui_run_info in;
    runs_info(r, &in);
    ctx_msg(&app->ctx, false, "batch %s on %s resumed: %zu to send at %g/s, %d in flight%s", j->id,
            j->sys->name, in.todo, in.rate, in.concurrency,
            in.held ? "; unknown ones held back (redrive batch resume --resend-unknown)" : "");
}

static void ctl_done(void *arg, bool cancelled)
{
    ctl_job *j = arg;
    if (!cancelled) {
        if (!j->ok)
            ctx_msg(&j->app->ctx, true, "batch %.8s: %s", j->id, j->why);
        else if (j->resume)
            resume_start(j->app, j);
        list_read(j->app);
        app_request_paint(j->app);
    }
    batch_info_clear(&j->b);
    free(j->journal);
    free(j->operator_);
    free(j->store_kind);
    free(j);
}

static void items_read(ui_app *app, const char *id)
{
    ui_batches_st *s = st(app);
    s->items_pending = true;
    items_job *j = xcalloc(1, sizeof *j);
    j->app = app;
    j->journal = session_journal_path();
    snprintf(j->id, sizeof j->id, "%s", id);
    bgjobs_queue(s->jobs, items_run, items_done, j);
}

static void ctl_queue(ui_app *app, const char *id, const rd_batch_ctl *c, const rd_system_cfg *resume_sys)
{
    ctl_job *j = xcalloc(1, sizeof *j);
    j->app = app;
    j->journal = session_journal_path();
    const char *op = session_operator(binding_session(app->bind));
    j->operator_ = xstrdup(op ? op : "?");
    snprintf(j->id, sizeof j->id, "%s", id);
    j->ctl = *c;
    if (resume_sys) {
        rd_session *ss = binding_session_of(app->bind, resume_sys->name);
        const rd_profile *p = ss ? session_profile(ss) : NULL;
        j->resume = true;
        j->sys = resume_sys;
        j->store_kind = p && p->store ? xstrdup(p->store) : NULL;
    }
    bgjobs_queue(st(app)->jobs, ctl_run, ctl_done, j);
}

/* ---- runs' callbacks --------------------------------------------------------------- */

static bool on_screen(ui_app *app, const char *system)
{
    return app_sys(app) && strcmp(app_sys(app)->name, system) == 0;
}

static void on_item(void *ud, ui_run *r, const rd_result *res)
{
    ui_app *app = ud;
    ui_run_info in;
    runs_info(r, &in);
    if (res->code == RD_RES_OK && in.kind == RD_ACT_RESOLVE && on_screen(app, in.system))
        app_dlq_resolved(app, res->id);   /* gone from the list at once */
    app_request_paint(app);
}

static void on_done(void *ud, ui_run *r)
{
    ui_app *app = ud;
    ui_run_info in;
    runs_info(r, &in);
    char msg[1400], where[120] = "", held[160] = "";
    if (in.guarded)
        snprintf(held, sizeof held, "; %zu held back at send time (no longer eligible)", in.guarded);
    const char *how = in.paused ? " (paused: S in :batches resumes it)"
                      : in.finished < in.todo ? " (the rest not sent: redrive batch resume, or S in :batches)" : "";
    if (!on_screen(app, in.system))   /* a batch of a system not on screen: named */
        snprintf(where, sizeof where, " (batch %.8s on %s)", in.id, in.system);
    if (in.pause_reason[0])   /* the canary's or the breaker's: said as the CLI says it */
        snprintf(msg, sizeof msg, "%s: batch %s paused: %s%s", action_name(in.kind), in.id, in.pause_reason, where);
    else
        snprintf(msg, sizeof msg, "%s: %zu of %zu succeeded%s%s%s%s%s", action_name(in.kind), in.ok, in.todo, where,
                 how, in.why[0] && !in.paused ? ": " : "", in.why[0] && !in.paused ? in.why : "", held);
    bool failed = in.ok != in.todo || in.guarded;
    ctx_msg(&app->ctx, failed, "%s", msg);
    if (on_screen(app, in.system)) {
        if (in.kind == RD_ACT_RESOLVE && in.ok)
            app_dlq_reread(app);
        dialog_after_action(app, msg, failed);
    } else {
        app_journal_reload(app);
    }
    list_read(app);
}

static ui_batchcheck *check_new(void *ud, const char *batch_id)
{
    return batchcheck_new(ud, batch_id);
}

static void on_tick(int fd, short what, void *ud)
{
    ui_app *app = ud;
    (void)fd, (void)what;
    ui_batches_st *s = st(app);
    if (app->cur != VIEW_BATCHES || app->quit) {
        loop_timer_stop(s->tick);   /* armed again when :batches is painted (batches_rows) */
        s->ticking = false;
        return;
    }
    list_read(app);
    if (s->items_of[0] && !s->items_pending)   /* the batch open: its items as they move */
        items_read(app, s->items_of);
}

void batches_setup(ui_app *app)
{
    ui_batches_st *s = xcalloc(1, sizeof *s);
    app->bst = s;
    static const ui_runs_cbs cbs = {on_item, on_done, check_new};
    s->runs = runs_new(&cbs, app);
    s->jobs = bgjobs_new(app->base);
    if (app->base) {
        s->tick = loop_every_new(app->base, on_tick, app);   /* armed by batches_rows */
    }
    app->ctx.batches = &s->pub;
}

void batches_stop(ui_app *app)
{
    ui_batches_st *s = st(app);
    if (!s)
        return;
    runs_free(s->runs);        /* in flight: journaled unknown; the rest stays open */
    s->runs = NULL;
    bgjobs_free(s->jobs);      /* a control line queued is written first */
    loop_event_free(s->tick);
    batch_infos_free(s->infos, s->n_infos);
    items_free(s->items, s->n_items);
    free(s->rows);
    free(s);
    app->bst = NULL;
    app->ctx.batches = NULL;
}

void batches_drop_system(ui_app *app, const char *system)
{
    if (st(app))
        runs_drop_system(st(app)->runs, system);
}

void batches_running_text(ui_app *app, char *out, size_t cap)
{
    out[0] = 0;
    ui_runs *rs = app_runs(app);
    size_t n = runs_running(rs), at = 0;
    if (!n)
        return;
    at += (size_t)snprintf(out, cap, "%zu batch%s running (", n, n == 1 ? "" : "es");
    bool first = true;
    for (size_t i = 0; i < runs_count(rs) && at < cap; i++) {
        ui_run_info in;
        runs_info(runs_at(rs, i), &in);
        if (!in.running)
            continue;
        at += (size_t)snprintf(out + at, cap - at, "%s%.8s on %s", first ? "" : ", ", in.id, in.system);
        first = false;
    }
    if (at < cap)
        snprintf(out + at, cap - at, ")");
}

/* ---- the rows --------------------------------------------------------------------- */

static const rd_system_cfg *sys_named(ui_app *app, const char *name)
{
    rd_session *ss = name ? binding_session_of(app->bind, name) : NULL;
    return ss ? session_system(ss) : NULL;
}

static void row_live(ui_batch_row *w, const ui_run_info *in)
{
    w->live = in->running;
    w->total = in->total;
    w->ok = in->base_ok + in->ok;
    w->failed = in->base_failed + (in->finished - in->ok);
    w->unknown = in->base_unknown;
    w->sent = w->ok + w->failed + w->unknown;
    w->held = in->held;
    w->rate = in->rate;
    w->rate_own = in->rate_own;
    w->concurrency = in->concurrency;
    w->eta = in->eta;
    if (in->running)
        w->state = "running";
}

static ui_batch_row *row_add(ui_batches_st *s, size_t *n)
{
    xgrow(&s->rows, &s->cap_rows, *n + 1, sizeof *s->rows);
    ui_batch_row *w = &s->rows[(*n)++];
    memset(w, 0, sizeof *w);
    w->eta = -1;
    return w;
}

void batches_rows(ui_app *app)
{
    ui_batches_st *s = st(app);
    if (!s)
        return;
    if (s->tick && !s->ticking) {   /* on screen: read again every LIST_EVERY_S */
        loop_timer_in(s->tick, LIST_EVERY_S);
        s->ticking = true;
    }
    size_t n = 0;
    /* this console's runs not yet in a read (started since): first, newest */
    for (size_t i = runs_count(s->runs); i-- > 0;) {
        ui_run_info in;
        runs_info(runs_at(s->runs, i), &in);
        bool known = false;
        for (size_t k = 0; k < s->n_infos && !known; k++)
            known = strcmp(s->infos[k].id, in.id) == 0;
        if (known)
            continue;
        ui_batch_row *w = row_add(s, &n);
        memcpy(w->id, in.id, sizeof w->id);
        w->system = in.system;
        w->action = action_name(in.kind);
        w->state = in.paused ? "paused" : "open";
        w->created = in.started;
        row_live(w, &in);
    }
    for (size_t k = s->n_infos; k-- > 0;) {   /* newest first */
        const rd_batch_info *b = &s->infos[k];
        if (b->damaged)
            continue;
        ui_batch_row *w = row_add(s, &n);
        memcpy(w->id, b->id, sizeof w->id);
        w->system = b->system ? b->system : "?";
        w->action = b->action;
        w->state = batch_info_state(b);
        w->total = b->total;
        w->ok = b->ok;
        w->failed = b->failed;
        w->unknown = b->unknown;
        w->sent = b->ok + b->failed + b->unknown;
        const rd_system_cfg *sys = sys_named(app, b->system);
        w->rate_own = b->rate > 0;
        w->rate = b->rate > 0 ? b->rate : sys ? (sys->rate_limit > 0 ? sys->rate_limit : 5) : 0;
        w->concurrency = b->concurrency > 0 ? b->concurrency
                         : sys ? (sys->batch_concurrency > 0 ? sys->batch_concurrency : BATCHRUN_CONCURRENCY) : 0;
        double t;
        w->created = b->created && rfc3339_parse(b->created, &t) ? t : 0;
        /* OUTCOME (issue 35): NULL, drawn "-". batch_summary_make (batchout.h) counts it,
         * but from outtrack's store reads (3 s to connect, 5 s a query, 500 items a query):
         * not on this loop, and not on bgjob.c's one ordered thread either, where an
         * operator's pause (a control line) would wait behind them and the 2 s listing
         * with it. It needs a thread of its own keeping one outtrack per batch (a final
         * outcome is not read again); until then `redrive batch show ID` says it. */
        w->outcome = NULL;
        ui_run *r = runs_find(s->runs, b->id);
        if (r) {
            ui_run_info in;
            runs_info(r, &in);
            if (in.running)
                row_live(w, &in);
        }
    }
    size_t damaged = 0;
    for (size_t k = 0; k < s->n_infos; k++)
        damaged += s->infos[k].damaged != NULL;
    s->pub.rows = s->rows;
    s->pub.n = n;
    s->pub.damaged = damaged;
    s->pub.error = s->error[0] ? s->error : NULL;
    memcpy(s->pub.items_of, s->items_of, sizeof s->items_of);
    s->pub.items = s->items;
    s->pub.n_items = s->n_items;
    s->pub.items_total = s->items_total;
    s->pub.items_read = s->items_of[0] && !s->items_pending;
}

/* ---- what the view asks ------------------------------------------------------------- */

static const rd_batch_info *info_of(ui_batches_st *s, const char *id)
{
    for (size_t k = 0; k < s->n_infos; k++)
        if (!s->infos[k].damaged && strcmp(s->infos[k].id, id) == 0)
            return &s->infos[k];
    return NULL;
}

static const double RATES[] = {0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000};
static const int WINDOWS[] = {1, 2, 4, 8, 16, 32, 64};

static double rate_step(double now, bool up)
{
    size_t n = sizeof RATES / sizeof *RATES;
    if (up) {
        for (size_t i = 0; i < n; i++)
            if (RATES[i] > now + 1e-9)
                return RATES[i];
        return RATES[n - 1];
    }
    for (size_t i = n; i-- > 0;)
        if (RATES[i] < now - 1e-9)
            return RATES[i];
    return RATES[0];
}

static int window_step(int now, bool up)
{
    size_t n = sizeof WINDOWS / sizeof *WINDOWS;
    if (up) {
        for (size_t i = 0; i < n; i++)
            if (WINDOWS[i] > now)
                return WINDOWS[i];
        return WINDOWS[n - 1];
    }
    for (size_t i = n; i-- > 0;)
        if (WINDOWS[i] < now)
            return WINDOWS[i];
    return WINDOWS[0];
}

/* + - > <: the pace of a run here (at once) or of a record (its next resume); recorded. */
static void pace_change(ui_app *app, const char *id, int op)
{
    ui_batches_st *s = st(app);
    ui_run *r = runs_find(s->runs, id);
    const rd_batch_info *b = info_of(s, id);
    ui_run_info in = {0};
    bool live = r && run_running(r);
    if (live)
        runs_info(r, &in);
    else if (!b) {
        ctx_msg(&app->ctx, true, "batch %s: not read yet", id);
        return;
    } else if (!batch_info_open(b)) {
        ctx_msg(&app->ctx, true, "batch %s is %s: no rate to change", id, batch_info_state(b));
        return;
    }
    if (app->ctx.read_only) {
        ctx_msg(&app->ctx, true, "read-only: a batch's rate is not changed");
        return;
    }
    const rd_system_cfg *sys = sys_named(app, live ? in.system : b->system);
    double rate = live ? in.rate : b->rate > 0 ? b->rate : sys && sys->rate_limit > 0 ? sys->rate_limit : 5;
    int conc = live ? in.concurrency : b->concurrency > 0 ? b->concurrency
               : sys && sys->batch_concurrency > 0 ? sys->batch_concurrency : BATCHRUN_CONCURRENCY;
    double nrate = rate;
    int nconc = conc;
    if (op == BATCH_OP_RATE_UP || op == BATCH_OP_RATE_DOWN)
        nrate = rate_step(rate, op == BATCH_OP_RATE_UP);
    else
        nconc = window_step(conc, op == BATCH_OP_CONC_UP);
    if (live)
        run_set_pace(r, nrate != rate ? nrate : 0, nconc != conc ? nconc : 0);
    rd_batch_ctl c = {.paused = !live && b && b->paused, .rate = nrate, .concurrency = nconc};
    ctl_queue(app, id, &c, NULL);
    if (nrate != rate)
        ctx_msg(&app->ctx, false, "batch %.8s: rate %g/s (was %g/s)%s, journaled", id, nrate, rate,
                live ? " from now on" : ": its next resume");
    else if (nconc != conc)
        ctx_msg(&app->ctx, false, "batch %.8s: %d in flight at most (was %d)%s, journaled", id, nconc, conc,
                live ? " from its next part" : ": its next resume");
    else
        ctx_msg(&app->ctx, false, "batch %.8s: already at the %s", id,
                op == BATCH_OP_RATE_UP || op == BATCH_OP_CONC_UP ? "most" : "least");
}

void batches_pace(ui_app *app, ui_run *r, int op)
{
    pace_change(app, run_id(r), op);
}

/* An operator's pause: the same paused state as the canary's or the breaker's, its reason
 * what batch show, batch resume and S here say. */
#define PAUSE_REASON "paused by an operator (P in :batches)"

static void pause_batch(ui_app *app, const char *id)
{
    ui_batches_st *s = st(app);
    ui_run *r = runs_find(s->runs, id);
    const rd_batch_info *b = info_of(s, id);
    if (r && run_running(r)) {
        ui_run_info in;
        runs_info(r, &in);
        rd_batch_ctl c = {.paused = true, .rate = in.rate_own ? in.rate : 0, .concurrency = in.concurrency,
                          .reason = PAUSE_REASON};
        ctl_queue(app, id, &c, NULL);   /* recorded before it is freed at its end */
        run_stop(r, true);
        ctx_msg(&app->ctx, false, "batch %.8s paused: what is in flight finishes; S resumes it", id);
        return;
    }
    if (!b || !batch_info_open(b) || b->paused) {
        ctx_msg(&app->ctx, true, "batch %.8s: %s", id, !b ? "not read yet" : b->paused ? "already paused"
                                                          : "nothing left to pause");
        return;
    }
    rd_batch_ctl c = {.paused = true, .rate = b->rate, .concurrency = b->concurrency, .reason = PAUSE_REASON};
    ctl_queue(app, id, &c, NULL);
    ctx_msg(&app->ctx, false, "batch %.8s paused%s", id,
            b->running ? ": the redrive running it stops at its next part" : "");
}

static void abort_batch(ui_app *app, const char *id)
{
    ui_batches_st *s = st(app);
    ui_run *r = runs_find(s->runs, id);
    const rd_batch_info *b = info_of(s, id);
    if (r && run_running(r)) {
        run_stop(r, false);
        ctx_msg(&app->ctx, true, "batch %.8s aborted: unsent items were not sent (open: S resumes it)", id);
    } else if (b && b->running) {
        ctx_msg(&app->ctx, true, "batch %.8s runs in another redrive: pause it (P), it stops at its next part", id);
    } else {
        ctx_msg(&app->ctx, true, "batch %.8s is not running here: nothing to abort", id);
    }
}

static void resume_go(ui_app *app, const rd_batch_info *b, const rd_system_cfg *sys)
{
    rd_batch_ctl c = {.rate = b->rate, .concurrency = b->concurrency};
    ctl_queue(app, b->id, &c, sys);
    ctx_msg(&app->ctx, false, "batch %.8s: checking its store and core, then resuming ...", b->id);
}

/* S: the first press says what a resume sends, the second on the same batch sends it (or
 * asks for the count typed above confirm_over, as the confirmation dialog does). */
static void resume_batch(ui_app *app, const char *id)
{
    ui_batches_st *s = st(app);
    const rd_batch_info *b = info_of(s, id);
    const char *why = NULL;
    ui_run *r = runs_find(s->runs, id);
    const rd_system_cfg *sys = b ? sys_named(app, b->system) : NULL;
    rd_session *ss = sys ? binding_session_of(app->bind, sys->name) : NULL;
    ui_run *other = sys ? runs_running_on(s->runs, sys->name) : NULL;
    const rd_batch_info *elsewhere = NULL;   /* one of its system's running in another redrive */
    for (size_t k = 0; sys && k < s->n_infos && !elsewhere; k++)
        if (s->infos[k].running && s->infos[k].system && !strcmp(s->infos[k].system, sys->name) &&
            strcmp(s->infos[k].id, id) != 0 && !runs_find(s->runs, s->infos[k].id))
            elsewhere = &s->infos[k];
    char w[300];
    if (!b)
        why = "not read yet";
    else if ((r && run_running(r)) || b->running)
        why = "it is running";
    else if (!batch_info_open(b))
        why = b->abandoned ? "it was abandoned" : "nothing left to send";
    else if (app->ctx.read_only || (sys && sys->read_only))
        why = "read-only";
    else if (!sys || !ss || !session_actor(ss)) {
        snprintf(w, sizeof w, "its system %s is not open here (another config?): redrive batch resume",
                 b->system ? b->system : "?");
        why = w;
    } else if (other || elsewhere) {
        snprintf(w, sizeof w, "batch %s is running on %s%s: one batch per system", other ? run_id(other) : elsewhere->id,
                 sys->name, other ? "" : " (in another redrive)");
        why = w;
    } else {
        double made, max = sys->batch_max_age_s > 0 ? sys->batch_max_age_s : 86400;
        if (b->created && rfc3339_parse(b->created, &made) && clock_wall() - made > max) {
            snprintf(w, sizeof w, "older than batch_max_age (%.0f h): redrive batch resume --force", max / 3600);
            why = w;
        }
    }
    if (why) {
        s->armed[0] = 0;
        ctx_msg(&app->ctx, true, "batch %.8s: not resumed: %s", id, why);
        return;
    }
    size_t left = b->total - (b->ok + b->failed + b->unknown);
    double rate = b->rate > 0 ? b->rate : sys->rate_limit > 0 ? sys->rate_limit : 5;
    int conc = b->concurrency > 0 ? b->concurrency : sys->batch_concurrency > 0 ? sys->batch_concurrency
                                                                               : BATCHRUN_CONCURRENCY;
    size_t over = sys->ui.confirm_over > 0 ? (size_t)sys->ui.confirm_over : 0;
    bool typed = left > 1 && left > over;   /* the dialog's rule: above confirm_over, type it */
    if (strcmp(s->armed, id) != 0) {
        snprintf(s->armed, sizeof s->armed, "%s", id);
        ctx_msg(&app->ctx, false, "resume batch %.8s on %s: %zu to send at %g/s, %d in flight%s? S again: %s",
                id, sys->name, left, rate, conc, b->unknown ? " (unknown ones held back)" : "",
                typed ? "type the count" : "send");
        return;
    }
    s->armed[0] = 0;
    if (typed) {
        ui_prompt *p = &app->prompt;
        memset(p, 0, sizeof *p);
        p->active = true;
        p->kind = PROMPT_TYPED;
        p->hist_at = -1;
        p->want = left;
        snprintf(p->batch, sizeof p->batch, "%s", id);
        snprintf(p->lead, sizeof p->lead, "resume batch %.8s: type %zu and Enter to send %zu (Escape: not): ",
                 id, left, left);
        return;
    }
    resume_go(app, b, sys);
}

void batches_typed(ui_app *app, const char *id, const char *typed, size_t want)
{
    ui_batches_st *s = st(app);
    char w[32];
    snprintf(w, sizeof w, "%zu", want);
    const rd_batch_info *b = s ? info_of(s, id) : NULL;
    const rd_system_cfg *sys = b ? sys_named(app, b->system) : NULL;
    if (strcmp(typed, w) != 0) {
        ctx_msg(&app->ctx, true, "typed '%s', the count is %s: nothing sent", typed, w);
        return;
    }
    if (!b || !sys || !batch_info_open(b) || b->running || runs_running_on(s->runs, sys->name)) {
        ctx_msg(&app->ctx, true, "batch %.8s changed meanwhile: nothing sent (S again)", id);
        return;
    }
    resume_go(app, b, sys);
}

void batches_effect(ui_app *app, int op, const char *id)
{
    ui_batches_st *s = st(app);
    if (!s)
        return;
    if (op != BATCH_OP_RESUME)
        s->armed[0] = 0;
    switch (op) {
    case BATCH_OP_LIST: list_read(app); break;
    case BATCH_OP_ITEMS: {
        items_free(s->items, s->n_items);
        s->items = NULL;
        s->n_items = s->items_total = 0;
        snprintf(s->items_of, sizeof s->items_of, "%s", id ? id : "");
        if (s->items_of[0])
            items_read(app, s->items_of);
        break;
    }
    case BATCH_OP_RESUME: resume_batch(app, id); break;
    case BATCH_OP_PAUSE: pause_batch(app, id); break;
    case BATCH_OP_ABORT: abort_batch(app, id); break;
    default: pace_change(app, id, op); break;
    }
}
