/* The console's running batches (batchruns.h). */
#include "batchruns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"
#include "../io/clock.h"

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
    r->todo = batchrun_todo(r->run);
    r->finished = batchrun_finished(r->run);
    r->ok = batchrun_ok(r->run);
    r->held = batchrun_held(r->run);
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
    r->done = true;
    r->lanes = 0;
}

static void run_free(ui_run *r)
{
    run_release(r);
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

static void on_done(rd_batchrun *br, void *ud)
{
    ui_run *r = ud;
    (void)br;
    r->done = true;
    run_release(r);           /* its record's lock goes: a resume may run it again */
    if (r->set->cbs.on_done)
        r->set->cbs.on_done(r->set->ud, r);
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
    rd_batchrun_cbs cbs = {.on_item = on_item, .on_done = on_done};
    r->run = batchrun_start(a, b, o, &cbs, r, why, whycap);
    if (!r->run) {
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
                         .why = r->why, .total = r->total, .base_ok = r->base_ok,
                         .base_failed = r->base_failed, .base_unknown = r->base_unknown,
                         .rate_own = r->rate_own, .eta = r->run && !r->done ? batchrun_eta(r->run) : -1};
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
    batchrun_abort(r->run);    /* may call on_done at once */
}

void run_set_pace(ui_run *r, double rate, int concurrency)
{
    if (!r || r->done || !r->run)
        return;
    batchrun_set_pace(r->run, rate, concurrency);
    r->rate_own = r->rate_own || rate > 0;
    run_take(r);
}

void runs_drop_system(ui_runs *rs, const char *system)
{
    for (size_t i = 0; rs && i < rs->n; i++)
        if (strcmp(rs->v[i]->system, system) == 0 && rs->v[i]->run)
            run_release(rs->v[i]);
}
