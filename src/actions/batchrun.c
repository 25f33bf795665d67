/* A batch record run part by part (batchrun.h). */
#include "batchrun.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/guard.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "actions_priv.h"
#include "jwriter.h"

/* One part: the targets it owns (copied from the record) and their item numbers. */
typedef struct part {
    rd_target t[BATCHRUN_PART];
    size_t items[BATCHRUN_PART];
    const char *keys[BATCHRUN_PART];
    char keybuf[BATCHRUN_PART][33];
    size_t n;
} part;

enum { GUARD_REASONS = 12 };   /* the items held back at send time counted by reason */
typedef struct guard_reason {
    char why[64];
    size_t n;
} guard_reason;

struct rd_batchrun {
    rd_actor *a;
    rd_batch_info info;
    rd_batchrun_opts o;
    rd_batchrun_cbs cbs;
    void *ud;
    rd_batchrd *rd;
    unsigned char *st;          /* each item's state when the run began (batchrec.h) */
    rd_bitem_key *keys;
    size_t nkeys;
    size_t todo, finished, ok, held;
    size_t loaded;              /* items taken into parts so far (o.limit) */
    rd_batch *lane[BATCHRUN_CONCURRENCY_MAX];   /* the part's lanes still running */
    size_t lane_at[BATCHRUN_CONCURRENCY_MAX];   /* each lane's first index in the part */
    size_t nlanes, running;
    part p;
    double started, pace;       /* pace: shared by the lanes (rd_batch_opts.pace) */
    size_t started_at;          /* finished when `started` was (reset by a new pace) */
    bool aborted, done, paused;
    int lock;                   /* the record's lock while the run lives (batchrec_lock),
                                 * -1 when its caller holds it (opts.locked) */
    bool watch;                 /* between parts: its record's control line read */
    bool checking;              /* the part waits for cbs.check's answer */
    bool starting, direct;      /* in batchrun_start; its first check asked there (lanes
                                 * started outside a callback keep their order) */
    bool finish_soon;           /* ended while starting: on_done from the loop */
    rd_event *check_ev;         /* asks the check from the loop */
    size_t guarded;             /* held back at send time (cbs.check) */
    guard_reason reasons[GUARD_REASONS + 1];   /* the last: "other" */
    size_t nreasons;
    char why[256];
};

static void part_clear(part *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free((char *)(uintptr_t)p->t[i].id);
        free((char *)(uintptr_t)p->t[i].parent);
        free((char *)(uintptr_t)p->t[i].fp);
    }
    p->n = 0;
}

static const char *key_of(const rd_batchrun *r, size_t item)
{
    for (size_t k = 0; k < r->nkeys; k++)
        if (r->keys[k].item == item)
            return r->keys[k].key;
    return NULL;
}

/* Whether this run sends the item. */
static bool wanted(const rd_batchrun *r, size_t item)
{
    if (item >= r->info.total)
        return false;
    return r->o.resend_unknown ? r->st[item] == BITEM_UNKNOWN : r->st[item] == BITEM_NONE;
}

/* The next part from the record: false when nothing is left. */
static bool part_load(rd_batchrun *r)
{
    part *p = &r->p;
    part_clear(p);
    size_t item;
    rd_target t;
    while (p->n < BATCHRUN_PART && (!r->o.limit || r->loaded < r->o.limit) &&
           batchrd_next(r->rd, &item, &t)) {
        if (!wanted(r, item))
            continue;
        r->loaded++;
        const char *key = r->st[item] == BITEM_UNKNOWN ? key_of(r, item) : NULL;
        p->t[p->n] = (rd_target){.id = xstrdup(t.id), .parent = xstrdup(t.parent),
                                 .fp = xstrdup(t.fp), .attempt = t.attempt,
                                 .override_ = t.override_};
        p->items[p->n] = item;
        snprintf(p->keybuf[p->n], 33, "%s", key ? key : "");
        p->keys[p->n] = p->keybuf[p->n];
        p->n++;
    }
    return p->n > 0;
}

static void run_done(rd_batchrun *r)
{
    if (r->done)
        return;
    r->done = true;
    if (r->cbs.on_done)
        r->cbs.on_done(r, r->ud);
}

static size_t lane_of(const rd_batchrun *r, const rd_batch *b)
{
    for (size_t k = 0; k < r->nlanes; k++)
        if (r->lane[k] == b)
            return k;
    return r->nlanes;
}

static void on_part_item(rd_batch *b, size_t i, const rd_result *res, void *ud)
{
    rd_batchrun *r = ud;
    size_t k = lane_of(r, b);
    if (res->code == RD_RES_ABORTED || k == r->nlanes)
        return;               /* not sent: left for a resume */
    r->finished++;
    r->ok += res->code == RD_RES_OK;
    if (r->cbs.on_item)
        r->cbs.on_item(r, r->p.items[r->lane_at[k] + i], res, r->ud);
}

static bool part_start(rd_batchrun *r);

static void on_part_done(rd_batch *b, void *ud)
{
    rd_batchrun *r = ud;
    size_t k = lane_of(r, b);
    if (k < r->nlanes) {
        r->lane[k] = NULL;
        r->running--;
    }
    batch_free(b);
    if (r->running)
        return;               /* the part ends with its last lane */
    if (r->aborted || !part_start(r))
        run_done(r);
}

/* Stops every lane for good: what is in flight is journaled as unknown. */
static void lanes_free(rd_batchrun *r)
{
    for (size_t k = 0; k < r->nlanes; k++) {
        rd_batch *b = r->lane[k];
        r->lane[k] = NULL;
        batch_free(b);
    }
    r->running = 0;
}

/* Between parts: the record's last control line. A pause written there (this console's
 * view, another redrive) stops the run; a rate or window set there is taken up. */
static bool still_wanted(rd_batchrun *r)
{
    rd_batch_ctl c;
    bool abandoned;
    if (batchrec_control_now(r->info.path, &c, &abandoned)) {
        if (c.paused) {
            r->paused = true;
            snprintf(r->why, sizeof r->why, "paused (its record says so): resume it to go on");
            return false;
        }
        if (c.rate > 0)
            r->o.rate = c.rate;
        if (c.concurrency > 0)
            r->o.concurrency = c.concurrency;
    }
    if (abandoned) {
        snprintf(r->why, sizeof r->why, "abandoned meanwhile: nothing more sent");
        return false;
    }
    return true;
}

/* The part's lanes started; false when refused. */
static bool lanes_start(rd_batchrun *r)
{
    rd_action kind;
    if (!action_from_name(r->info.action, &kind)) {
        snprintf(r->why, sizeof r->why, "unknown action in the batch record");
        return false;
    }
    /* the part in lanes of consecutive items, as many as the window (fewer items: fewer) */
    size_t n = r->p.n, lanes = (size_t)r->o.concurrency < n ? (size_t)r->o.concurrency : n;
    rd_batch_cbs cbs = {.on_item = on_part_item, .on_done = on_part_done};
    r->nlanes = lanes;
    r->running = 0;
    for (size_t k = 0; k < lanes; k++) {   /* none runs before the loop: all set first */
        size_t at = k * n / lanes, end = (k + 1) * n / lanes;
        rd_batch_opts bo = {.id = r->info.id, .items = r->p.items + at, .rate = r->o.rate,
                            .keys = r->p.keys + at, .pace = &r->pace};
        r->lane_at[k] = at;
        r->lane[k] = actor_run_batch_opts(r->a, kind, r->p.t + at, end - at, r->info.reason,
                                          &bo, &cbs, r, r->why, sizeof r->why);
        if (!r->lane[k]) {
            lanes_free(r);    /* refused before anything of the part left */
            r->nlanes = 0;
            return false;
        }
        r->running++;
    }
    return true;
}

/* Whether the check is asked for this part's items (batchrun.h: not for a resend). */
static bool checks(const rd_batchrun *r)
{
    return r->cbs.check && !r->o.resend_unknown;
}

/* Sends the next part (after the check when there is one); false when there is none or it
 * was refused. */
static bool part_start(rd_batchrun *r)
{
    if (r->watch && !still_wanted(r))
        return false;
    if (!part_load(r)) {
        if (batchrd_damage(r->rd)[0])   /* changed since it was checked */
            snprintf(r->why, sizeof r->why, "batch record %s is damaged: %s", r->info.path,
                     batchrd_damage(r->rd));
        return false;
    }
    if (!checks(r))
        return lanes_start(r);
    r->checking = true;         /* its answer may come at once */
    if (r->direct) {            /* the first part: as its lanes were started before */
        r->direct = false;
        r->cbs.check(r, r->p.items, r->p.t, r->p.n, r->ud);
    } else {
        loop_timer_in(r->check_ev, 0);   /* from the loop: no recursion part after part */
    }
    return true;
}

/* The run ends: on_done now, or from the loop when batchrun_start has not returned yet. */
static void finish(rd_batchrun *r)
{
    if (!r->starting) {
        run_done(r);
        return;
    }
    r->finish_soon = true;
    loop_timer_in(r->check_ev, 0);
}

static void on_check_due(int fd, short what, void *ud)
{
    rd_batchrun *r = ud;
    (void)fd, (void)what;
    if (r->finish_soon) {
        r->finish_soon = false;
        run_done(r);
        return;
    }
    if (!r->checking || r->done)
        return;
    if (r->aborted) {
        r->checking = false;
        run_done(r);
        return;
    }
    /* every item of the part; an answer for one sent by override is not heeded */
    r->cbs.check(r, r->p.items, r->p.t, r->p.n, r->ud);
}

static void reason_count(rd_batchrun *r, const char *why)
{
    char key[64];
    guard_held_reason(why, key, sizeof key);
    size_t k = 0;
    while (k < r->nreasons && strcmp(r->reasons[k].why, key) != 0)
        k++;
    if (k == r->nreasons) {
        if (r->nreasons == GUARD_REASONS)
            k = GUARD_REASONS;
        else
            snprintf(r->reasons[r->nreasons++].why, sizeof r->reasons[0].why, "%s", key);
    }
    r->reasons[k].n++;
}

static void on_held_written(bool ok, const char *why, void *ud)
{
    if (!ok)
        actor_journal_failed(ud, why);
}

/* Item i of the part held back: its "held" line (no request made), counted. */
static void hold(rd_batchrun *r, size_t i, const char *why)
{
    rd_actor *a = r->a;
    const rd_target *t = &r->p.t[i];
    char *text = action_target_text(t->id, t->parent);
    const char *targets[] = {text};
    char result[200];
    snprintf(result, sizeof result, "held back: no longer eligible: %s", why);
    rd_journal_rec rec = {
        .operator_ = actor_operator(a), .system = actor_cfg(a)->name, .action = r->info.action,
        .targets = targets, .n_targets = 1, .result = result, .code = "held",
        .batch = r->info.id, .fp = t->fp, .attempt = t->attempt, .has_item = true,
        .item = r->p.items[i], .syslog = actor_cfg(a)->journal_syslog};
    if (actor_jwriter(a)) {
        jwriter_append(actor_jwriter(a), actor_journal_path(a), &rec, on_held_written, a);
    } else {
        char err[256];
        if (!journal_append(actor_journal_path(a), &rec, err, sizeof err))
            actor_journal_failed(a, err);
    }
    free(text);
    reason_count(r, why);
    r->guarded++;
    if (r->todo)
        r->todo--;
    if (r->cbs.on_held)
        r->cbs.on_held(r, r->p.items[i], t, why, r->ud);
}

void batchrun_checked(rd_batchrun *r, const char *const *why)
{
    if (!r->checking || r->done)
        return;
    r->checking = false;
    part *p = &r->p;
    size_t k = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (why[i] && !p->t[i].override_) {
            hold(r, i, why[i]);
            free((char *)(uintptr_t)p->t[i].id);
            free((char *)(uintptr_t)p->t[i].parent);
            free((char *)(uintptr_t)p->t[i].fp);
            continue;
        }
        if (k != i) {
            p->t[k] = p->t[i];
            p->items[k] = p->items[i];
            memcpy(p->keybuf[k], p->keybuf[i], sizeof p->keybuf[k]);
        }
        p->keys[k] = p->keybuf[k];
        k++;
    }
    p->n = k;
    if (r->aborted || !(p->n ? lanes_start(r) : part_start(r)))
        finish(r);
}

void batchrun_check_failed(rd_batchrun *r, const char *why)
{
    if (!r->checking || r->done)
        return;
    r->checking = false;
    snprintf(r->why, sizeof r->why, "not checked against the store: %s", why);
    finish(r);
}

size_t batchrun_guarded(const rd_batchrun *r) { return r->guarded; }

void batchrun_guard_line(const rd_batchrun *r, char *out, size_t cap)
{
    size_t at = 0, order[GUARD_REASONS + 1], m = 0;
    if (cap)
        out[0] = 0;
    for (size_t k = 0; k <= GUARD_REASONS; k++)
        if (r->reasons[k].n)
            order[m++] = k;
    for (size_t i = 1; i < m; i++)        /* most first, then as met */
        for (size_t j = i; j > 0 && r->reasons[order[j]].n > r->reasons[order[j - 1]].n; j--) {
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (size_t i = 0; i < m && at < cap; i++) {
        const guard_reason *g = &r->reasons[order[i]];
        at += (size_t)snprintf(out + at, cap - at, "%s%zu %s", i ? ", " : "", g->n,
                               order[i] == GUARD_REASONS ? "other" : g->why);
    }
}

rd_batchrun *batchrun_start(rd_actor *a, const rd_batch_info *b, const rd_batchrun_opts *o,
                            const rd_batchrun_cbs *cbs, void *ud, char *why, size_t whycap)
{
    if (b->damaged) {
        snprintf(why, whycap, "%s", b->damaged);
        return NULL;
    }
    if (b->abandoned) {
        snprintf(why, whycap, "batch %s was abandoned", b->id);
        return NULL;
    }
    if (!batchrec_check_items(b, why, whycap))
        return NULL;          /* nothing is sent from a record read only in part */
    int lock = o && o->locked ? -1 : batchrec_lock(b->path, why, whycap);
    if (lock < 0 && !(o && o->locked)) {
        char w[300];
        snprintf(w, sizeof w, "%s", why);
        snprintf(why, whycap, "batch %s: %s", b->id, w);
        return NULL;
    }
    rd_batchrun *r = xcalloc(1, sizeof *r);
    r->lock = lock;
    r->a = a;
    r->info = (rd_batch_info){.total = b->total};
    memcpy(r->info.id, b->id, sizeof r->info.id);
    r->info.action = xstrdup(b->action);
    r->info.reason = xstrdup(b->reason);
    r->info.path = xstrdup(b->path);
    if (o)
        r->o = *o;
    if (r->o.concurrency <= 0)
        r->o.concurrency = BATCHRUN_CONCURRENCY;
    if (r->o.concurrency > BATCHRUN_CONCURRENCY_MAX)
        r->o.concurrency = BATCHRUN_CONCURRENCY_MAX;
    if (cbs)
        r->cbs = *cbs;
    r->ud = ud;
    if (checks(r))
        r->check_ev = loop_timer_new(actor_base(a), on_check_due, r);
    if (!batchrec_states(actor_journal_path(a), b, &r->st, &r->keys, &r->nkeys, why, whycap) ||
        !(r->rd = batchrd_open(b->path, why, whycap))) {
        batchrun_free(r);
        return NULL;
    }
    for (size_t i = 0; i < b->total; i++) {
        r->todo += wanted(r, i);
        r->held += r->st[i] == BITEM_UNKNOWN && !r->o.resend_unknown;
    }
    if (r->o.limit && r->todo > r->o.limit)
        r->todo = r->o.limit;
    r->started = clock_mono();
    size_t todo = r->todo;      /* before the first check holds any back */
    r->starting = r->direct = true;
    bool started = !todo || part_start(r);   /* the first part: the state the caller just read */
    r->starting = r->direct = false;
    r->watch = true;
    if (!started) {
        snprintf(why, whycap, "%s", r->why[0] ? r->why : "nothing to send");
        batchrun_free(r);
        return NULL;
    }
    if (!todo)
        snprintf(why, whycap, "nothing left to send");
    return todo ? r : (batchrun_free(r), NULL);
}

size_t batchrun_todo(const rd_batchrun *r) { return r->todo; }
size_t batchrun_finished(const rd_batchrun *r) { return r->finished; }
size_t batchrun_ok(const rd_batchrun *r) { return r->ok; }
size_t batchrun_held(const rd_batchrun *r) { return r->held; }
const char *batchrun_why(const rd_batchrun *r) { return r->why; }
int batchrun_concurrency(const rd_batchrun *r) { return r->o.concurrency; }
bool batchrun_paused(const rd_batchrun *r) { return r->paused; }

double batchrun_rate(const rd_batchrun *r)
{
    const rd_system_cfg *c = actor_cfg(r->a);
    return r->o.rate > 0 ? r->o.rate : c->rate_limit > 0 ? c->rate_limit : 5;
}

int batchrun_lanes(const rd_batchrun *r) { return (int)r->running; }

void batchrun_set_pace(rd_batchrun *r, double rate, int concurrency)
{
    if (rate > 0) {
        r->o.rate = rate;
        for (size_t k = 0; k < r->nlanes; k++)   /* at once: the lanes' next sends */
            if (r->lane[k])
                batch_set_rate(r->lane[k], rate);
    }
    r->started = clock_mono();  /* the ETA from the new pace's own figures */
    r->started_at = r->finished;
    if (concurrency > 0)
        r->o.concurrency = concurrency < BATCHRUN_CONCURRENCY_MAX ? concurrency
                                                                  : BATCHRUN_CONCURRENCY_MAX;
}

double batchrun_eta(const rd_batchrun *r)
{
    size_t left = r->todo > r->finished ? r->todo - r->finished : 0;
    size_t since = r->finished - r->started_at;
    if (since > 0)
        return (clock_mono() - r->started) / (double)since * (double)left;
    const rd_system_cfg *c = actor_cfg(r->a);
    double rate = r->o.rate > 0 ? r->o.rate : c->rate_limit > 0 ? c->rate_limit : 5;
    return (double)left / rate;
}

void batchrun_abort(rd_batchrun *r)
{
    if (!r || r->aborted)
        return;
    r->aborted = true;
    if (r->checking)
        return;               /* the check's answer (or its turn) ends the run */
    if (!r->running) {
        run_done(r);
        return;
    }
    for (size_t k = 0; k < r->nlanes; k++)   /* a lane may end (and be freed) meanwhile */
        if (r->lane[k])
            batch_abort(r->lane[k]);
}

void batchrun_free(rd_batchrun *r)
{
    if (!r)
        return;
    lanes_free(r);            /* what is in flight is journaled as unknown */
    if (r->check_ev)
        loop_event_free(r->check_ev);
    part_clear(&r->p);
    batchrd_close(r->rd);
    if (r->lock >= 0)
        close(r->lock);
    free(r->st);
    free(r->keys);
    batch_info_clear(&r->info);
    free(r);
}
