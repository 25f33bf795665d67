/* The console's running batches (batchruns.h). */
#include "batchruns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/xalloc.h"
#include "../io/clock.h"
#include "batchcheck.h"
#include "dlg_canary.h"

struct ui_run {
    ui_runs *set;
    char id[17];
    char *system;
    rd_action kind;
    rd_batchrun *run;          /* NULL once freed (its system closed) */
    size_t todo, finished, ok, held;
    size_t total, base_ok, base_failed, base_unknown;
    bool rate_own;
    double rate, started;
    int concurrency, lanes;
    bool done, paused, aborted;
    char why[200];
    char *fails[RUN_FAILS];    /* a ring */
    size_t n_fails;
    /* the canary and the breaker (runs_start_guarded), NULL: none */
    ui_canary *can;
    rd_batch_info b;           /* the record: the rest after the canary, the paused line */
    rd_actor *a;
    rd_batchrun_opts o;        /* the pace asked (the rest's) */
    int lock;                  /* the record's lock over the canary and the rest, -1 none */
    size_t fin_before, ok_before, held_before, todo_all;   /* of the parts before this one */
    bool waiting;              /* the canary's part sent, its outcome awaited */
    char reason[1000];         /* the canary's or the breaker's pause */
    ui_batchcheck *check;      /* the guard at send time (batchcheck.h), NULL: none */
    size_t guarded, guarded_before;
    char guard_line[400];
};

struct ui_runs {
    ui_run **v;
    size_t n, cap;
    ui_runs_cbs cbs;
    void *ud;
};

ui_runs *runs_new(const ui_runs_cbs *cbs, void *ud)
{
    ui_runs *rs = xcalloc(1, sizeof *rs);
    if (cbs)
        rs->cbs = *cbs;
    rs->ud = ud;
    return rs;
}

/* The figures kept once the batchrun is gone. */
static void run_take(ui_run *r)
{
    if (!r->run)
        return;
    r->todo = r->todo_all ? r->todo_all : batchrun_todo(r->run);
    r->finished = r->fin_before + batchrun_finished(r->run);
    r->ok = r->ok_before + batchrun_ok(r->run);
    r->held = r->held_before + batchrun_held(r->run);
    r->guarded = r->guarded_before + batchrun_guarded(r->run);
    if (batchrun_guarded(r->run))
        batchrun_guard_line(r->run, r->guard_line, sizeof r->guard_line);
    r->rate = batchrun_rate(r->run);
    r->concurrency = batchrun_concurrency(r->run);
    r->lanes = r->done ? 0 : batchrun_lanes(r->run);
    r->paused = r->paused || batchrun_paused(r->run);
    if (batchrun_why(r->run)[0])
        snprintf(r->why, sizeof r->why, "%s", batchrun_why(r->run));
}

static void run_release(ui_run *r)
{
    run_take(r);
    batchrun_free(r->run);     /* in flight: journaled unknown */
    r->run = NULL;
    batchcheck_free(r->check);   /* after the run: a check it waits for is cancelled */
    r->check = NULL;
    r->done = true;
    r->waiting = false;
    r->lanes = 0;
    if (r->lock >= 0)
        close(r->lock);
    r->lock = -1;
}

static void run_free(ui_run *r)
{
    run_release(r);
    dlgcan_free(r->can);
    batch_info_clear(&r->b);
    for (size_t i = 0; i < RUN_FAILS; i++)
        free(r->fails[i]);
    free(r->system);
    free(r);
}

void runs_free(ui_runs *rs)
{
    if (!rs)
        return;
    for (size_t i = 0; i < rs->n; i++)
        run_free(rs->v[i]);
    free(rs->v);
    free(rs);
}

static void on_item(rd_batchrun *br, size_t item, const rd_result *res, void *ud)
{
    ui_run *r = ud;
    (void)br, (void)item;
    run_take(r);
    if (res->code != RD_RES_OK) {
        size_t k = r->n_fails++ % RUN_FAILS;
        free(r->fails[k]);
        r->fails[k] = xasprintf("%s  %s  %s", res->id, result_code_name(res->code), res->message);
    }
    if (r->set->cbs.on_item)
        r->set->cbs.on_item(r->set->ud, r, res);
}

/* A part about to leave: asked of the store off the loop (batchcheck.h). */
static void on_check(rd_batchrun *br, const size_t *items, const rd_target *t, size_t n, void *ud)
{
    ui_run *r = ud;
    (void)t;
    batchcheck_ask(r->check, br, items, n);
}

/* Nothing more will be sent: the canary's or the breaker's pause recorded (after the run's
 * own lines, as the CLI's), the lock let go, the outcome read once more, then said. */
static void run_finish(ui_run *r)
{
    r->done = true;
    run_release(r);           /* its record's lock goes: a resume may run it again */
    if (r->reason[0]) {
        char why[400];
        rd_batch_ctl c = {.paused = true, .rate = r->rate_own ? r->rate : 0, .concurrency = r->concurrency,
                          .reason = r->reason};
        r->paused = true;
        if (!batchrec_control(&r->b, &c, actor_identity(r->a), why, sizeof why))
            snprintf(r->why, sizeof r->why, "not paused: %.180s", why);
    }
    dlgcan_end(r->can);
    if (r->set->cbs.on_done)
        r->set->cbs.on_done(r->set->ud, r);
}

static void on_done(rd_batchrun *br, void *ud)
{
    ui_run *r = ud;
    run_take(r);
    if (r->can && dlgcan_size(r->can) && !r->fin_before && !r->paused && !r->aborted && !r->reason[0] &&
        !batchrun_paused(br) && !batchrun_why(br)[0] && r->finished < r->todo) {
        /* the canary's part: its outcome next, the lock kept, nothing in flight */
        size_t sent = batchrun_finished(br);
        if (r->rate_own)
            r->o.rate = batchrun_rate(br);   /* a pace changed meanwhile goes on */
        r->o.concurrency = batchrun_concurrency(br);
        batchrun_free(br);
        r->run = NULL;
        r->lanes = 0;
        r->waiting = true;
        dlgcan_wait(r->can, sent);
        return;
    }
    run_finish(r);
}

/* The canary passed: the rest of the record sent, the breaker watching. */
static void canary_go(void *ud)
{
    ui_run *r = ud;
    if (r->done || !r->waiting)
        return;
    char why[400];
    r->fin_before = r->finished;
    r->ok_before = r->ok;
    r->held_before = r->held;
    r->guarded_before = r->guarded;
    r->o.limit = 0;
    r->waiting = false;
    rd_batchrun_cbs cbs = {.on_item = on_item, .on_done = on_done, .check = r->check ? on_check : NULL};
    r->run = batchrun_start(r->a, &r->b, &r->o, &cbs, r, why, sizeof why);
    if (!r->run) {
        snprintf(r->why, sizeof r->why, "the rest refused: %.180s", why);
        run_finish(r);
        return;
    }
    run_take(r);
    dlgcan_rest(r->can);
}

/* The canary failed or the breaker tripped: paused with the reason, at once when nothing
 * is in flight (the canary's wait), else once what is in flight is in. */
static void canary_stop(void *ud, const char *reason)
{
    ui_run *r = ud;
    if (r->done)
        return;
    snprintf(r->reason, sizeof r->reason, "%s", reason);
    r->paused = true;
    if (r->run) {
        batchrun_abort(r->run);   /* on_done records the pause */
        return;
    }
    run_finish(r);
}

ui_run *runs_running_on(ui_runs *rs, const char *system)
{
    for (size_t i = 0; i < rs->n; i++)
        if (!rs->v[i]->done && strcmp(rs->v[i]->system, system) == 0)
            return rs->v[i];
    return NULL;
}

ui_run *runs_start(ui_runs *rs, rd_actor *a, const char *system, const rd_batch_info *b,
                   const rd_batchrun_opts *o, char *why, size_t whycap)
{
    ui_run *other = runs_running_on(rs, system);
    if (other) {
        snprintf(why, whycap, "batch %s is running on %s: one batch per system (pause or abort "
                 "it in :batches first)", other->id, system);
        return NULL;
    }
    ui_run *r = xcalloc(1, sizeof *r);
    r->set = rs;
    r->lock = -1;
    memcpy(r->id, b->id, sizeof r->id);
    r->system = xstrdup(system);
    r->kind = RD_ACT_RETRY;
    action_from_name(b->action, &r->kind);
    r->started = clock_wall();
    r->total = b->total;
    r->base_ok = b->ok;
    r->base_failed = b->failed;
    r->base_unknown = b->unknown;
    r->rate_own = o && o->rate > 0;
    if (r->kind == RD_ACT_RETRY && rs->cbs.check_new)
        r->check = rs->cbs.check_new(rs->ud, b->id);
    rd_batchrun_cbs cbs = {.on_item = on_item, .on_done = on_done, .check = r->check ? on_check : NULL};
    r->run = batchrun_start(a, b, o, &cbs, r, why, whycap);
    if (!r->run) {
        batchcheck_free(r->check);
        free(r->system);
        free(r);
        return NULL;
    }
    run_take(r);
    ui_run *old = runs_find(rs, b->id);   /* an earlier run of the same batch: replaced */
    if (old) {
        for (size_t i = 0; i < rs->n; i++)
            if (rs->v[i] == old)
                rs->v[i] = r;
        run_free(old);
        return r;
    }
    xgrow(&rs->v, &rs->cap, rs->n + 1, sizeof *rs->v);
    rs->v[rs->n++] = r;
    return r;
}

ui_run *runs_start_guarded(ui_runs *rs, rd_actor *a, const char *system, rd_batch_info *b,
                           const rd_batchrun_opts *o, ui_canary *can, char *why, size_t whycap)
{
    if (!can)
        return runs_start(rs, a, system, b, o, why, whycap);
    if (runs_running_on(rs, system))
        return runs_start(rs, a, system, b, o, why, whycap);   /* refused, the one running named */
    /* the record's lock over the canary, its wait and the rest: no resume between them */
    int lock = batchrec_lock(b->path, why, whycap);
    if (lock < 0)
        return NULL;
    rd_batchrun_opts lo = o ? *o : (rd_batchrun_opts){0};
    lo.locked = true;
    rd_batchrun_opts first = lo;
    first.limit = dlgcan_size(can);   /* the canary first */
    ui_run *r = runs_start(rs, a, system, b, &first, why, whycap);
    if (!r) {
        close(lock);
        return NULL;
    }
    r->lock = lock;
    r->a = a;
    r->o = lo;
    r->can = can;
    r->b = *b;
    memset(b, 0, sizeof *b);
    if (first.limit)
        r->todo_all = r->b.total;   /* the whole batch shown, the canary its first part */
    static const dlgcan_cbs ccbs = {canary_go, canary_stop};
    dlgcan_bind(can, &ccbs, r);
    dlgcan_sending(can, r->id);
    run_take(r);
    return r;
}

ui_run *runs_find(ui_runs *rs, const char *id)
{
    for (size_t i = 0; rs && id && i < rs->n; i++)
        if (strcmp(rs->v[i]->id, id) == 0)
            return rs->v[i];
    return NULL;
}

size_t runs_count(const ui_runs *rs) { return rs ? rs->n : 0; }
ui_run *runs_at(ui_runs *rs, size_t i) { return i < rs->n ? rs->v[i] : NULL; }
const char *run_id(const ui_run *r) { return r->id; }
bool run_running(const ui_run *r) { return r && !r->done; }
bool run_waiting(const ui_run *r) { return r && !r->done && r->waiting; }
ui_canary *run_canary(const ui_run *r) { return r ? r->can : NULL; }

size_t runs_running(const ui_runs *rs)
{
    size_t n = 0;
    for (size_t i = 0; rs && i < rs->n; i++)
        n += !rs->v[i]->done;
    return n;
}

void runs_info(const ui_run *r, ui_run_info *out)
{
    *out = (ui_run_info){.system = r->system, .kind = r->kind, .todo = r->todo,
                         .finished = r->finished, .ok = r->ok, .held = r->held, .rate = r->rate,
                         .concurrency = r->concurrency, .lanes = r->lanes, .running = !r->done,
                         .paused = r->paused, .aborted = r->aborted, .started = r->started,
                         .why = r->why, .pause_reason = r->reason, .waiting = r->waiting && !r->done,
                         .total = r->total, .base_ok = r->base_ok,
                         .base_failed = r->base_failed, .base_unknown = r->base_unknown,
                         .rate_own = r->rate_own, .eta = r->run && !r->done ? batchrun_eta(r->run) : -1,
                         .guarded = r->guarded, .guard_line = r->guard_line};
    memcpy(out->id, r->id, sizeof out->id);
    size_t n = r->n_fails < RUN_FAILS ? r->n_fails : RUN_FAILS;
    for (size_t i = 0; i < n; i++)
        out->fails[i] = r->fails[(r->n_fails - 1 - i) % RUN_FAILS];
}

void run_stop(ui_run *r, bool paused)
{
    if (!r || r->done)
        return;
    r->paused = paused;
    r->aborted = !paused;
    if (!r->run) {             /* the canary's outcome awaited: nothing in flight */
        run_finish(r);
        return;
    }
    batchrun_abort(r->run);    /* may call on_done at once */
}

void run_set_pace(ui_run *r, double rate, int concurrency)
{
    if (r && !r->done && !r->run) {   /* the canary's wait: the rest's pace */
        if (rate > 0)
            r->o.rate = r->rate = rate;
        if (concurrency > 0)
            r->o.concurrency = r->concurrency = concurrency;
        r->rate_own = r->rate_own || rate > 0;
        return;
    }
    if (!r || r->done || !r->run)
        return;
    batchrun_set_pace(r->run, rate, concurrency);
    r->rate_own = r->rate_own || rate > 0;
    run_take(r);
}

void runs_drop_system(ui_runs *rs, const char *system)
{
    for (size_t i = 0; rs && i < rs->n; i++)
        if (strcmp(rs->v[i]->system, system) == 0 && (rs->v[i]->run || !rs->v[i]->done)) {
            run_release(rs->v[i]);
            dlgcan_free(rs->v[i]->can);   /* its actor goes: no more watching */
            rs->v[i]->can = NULL;
        }
}
