/*
 * A batch record run from the CLI (act_priv.h: batch_exec), watched by its outcome
 * (issue 35): the canary first when asked (its items sent, their outcome waited for in the
 * store, the batch going on only if the share failing again is at most --max-refail), then
 * the rest with the breaker (once BOUT_BREAKER_MIN outcomes of this run are in, a share
 * failing again above --max-refail stops sending). Either pauses the batch: a paused line
 * with the reason in its record (batchrec.h), and the exit code 1. The outcome is read
 * from the store every OUT_TICK_S, a few pages a time (session.h: outtrack).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../actions/batchout.h"
#include "../actions/batchrec.h"
#include "../core/duration.h"
#include "../core/sanitize.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/loop.h"
#include "act_priv.h"

static const double PROGRESS_EVERY_S = 2.0;
static const double OUT_TICK_S = 1.0;
enum { OUT_PAGES_PER_TICK = 4 };   /* 2,000 items a refresh at most */

typedef struct bx {
    rd_loop *base;
    rd_batchrun *run;
    const rd_batch_info *b;
    const batch_guard *g;
    unsigned san;
    int interrupts, signo;
    double last_progress;
    rd_outtrack *track;
    rd_event *tick;
    bool breaker_on, waiting, tripped;
    double wait_until;
    char trip[600];
    double rate;              /* the run's, as recorded in its open line (a pause keeps it) */
    int concurrency;
    char track_why[400];      /* why the outcome is not read ("" while it is) */
    double next_read, backoff;   /* a store that failed is asked again later (5 s .. 30 s):
                                  * its reads block this loop, the CLI's, for their timeout */
    rd_recheck *recheck;      /* the guard at send time (a retry's), NULL none */
} bx;

bool batch_guard_parse(const char *canary, const char *wait, const char *refail,
                       const rd_system_cfg *sys, batch_guard *g)
{
    g->canary = sys->batch_canary > 0 ? (size_t)sys->batch_canary : 0;
    g->canary_wait_s = sys->batch_canary_wait_s > 0 ? sys->batch_canary_wait_s : 300;
    g->max_refail = sys->batch_max_refail >= 0 ? sys->batch_max_refail : 0.5;
    g->verbose = false;
    char *end;
    if (canary) {
        long v = strtol(canary, &end, 10);
        if (end == canary || *end || v < 0 || v > 1000000) {
            err_clean(0, "redrive: --canary: a count of items sent first, 0 to 1000000: ", canary);
            return false;
        }
        g->canary = (size_t)v;
    }
    if (wait && (!parse_duration(wait, &g->canary_wait_s) || g->canary_wait_s <= 0 ||
                 g->canary_wait_s > 86400)) {
        err_clean(0, "redrive: --canary-wait: a duration up to 24h (30s, 5m): ", wait);
        return false;
    }
    if (refail) {
        double v = strtod(refail, &end);
        if (end == refail || (*end && strcmp(end, "%") != 0) || !(v >= 0 && v <= 100)) {
            err_clean(0, "redrive: --max-refail: a share from 0 to 100 (50%): ", refail);
            return false;
        }
        g->max_refail = v / 100;
    }
    return true;
}

void act_guard_line(const batch_guard *g, size_t n)
{
    if (g->canary && g->canary < n)
        fprintf(stderr, "redrive: canary: %zu first, their outcome waited for up to %.0fs; the "
                "rest only if at most %.0f%% fail again\n", g->canary, g->canary_wait_s,
                g->max_refail * 100);
    fprintf(stderr, "redrive: breaker: pauses the batch once %d outcomes are in and more than "
            "%.0f%% fail again\n", BOUT_BREAKER_MIN, g->max_refail * 100);
}

static void progress(bx *x)
{
    double eta = batchrun_eta(x->run);
    fprintf(stderr, "redrive: batch %s: %zu/%zu sent, %zu ok, ETA %.0fs (Ctrl-C stops sending)\n",
            x->b->id, batchrun_finished(x->run), batchrun_todo(x->run), batchrun_ok(x->run),
            eta > 0 ? eta : 0);
}

static void on_item(rd_batchrun *r, size_t item, const rd_result *res, void *ud)
{
    bx *x = ud;
    (void)r;
    act_print_result(res, x->san);
    if (res->code == RD_RES_OK)
        outtrack_mark_ok(x->track, item);
    double now = clock_mono();
    if (now - x->last_progress >= PROGRESS_EVERY_S) {
        x->last_progress = now;
        progress(x);
    }
}

static void on_done(rd_batchrun *r, void *ud)
{
    (void)r;
    bx *x = ud;
    if (!x->waiting)
        loop_exit(x->base);
}

/* The guard at send time: the part read again from the store (a blocking read of a page:
 * this loop is the CLI's), each item no longer eligible held back with its verdict. */
static void on_check(rd_batchrun *r, const size_t *items, const rd_target *t, size_t n,
                     void *ud)
{
    bx *x = ud;
    (void)items;
    rd_verdict *v = xcalloc(n ? n : 1, sizeof *v);
    const char **why = xcalloc(n ? n : 1, sizeof *why);
    char err[400];
    if (!recheck_verdicts(x->recheck, t, n, v, err, sizeof err)) {
        batchrun_check_failed(r, err);
    } else {
        for (size_t i = 0; i < n; i++)
            why[i] = v[i].verdict == RD_ELIG_YES ? NULL : v[i].why;
        batchrun_checked(r, why);
    }
    free(why);
    free(v);
}

/* --verbose: each item held back at send time, named. */
static void on_held(rd_batchrun *r, size_t item, const rd_target *t, const char *why, void *ud)
{
    bx *x = ud;
    (void)r;
    if (!x->g->verbose)
        return;
    char line[700];
    snprintf(line, sizeof line, "  item %zu: %s%s%s: held back: %s", item, t->parent ? t->parent : "",
             t->parent ? "/" : "", t->id, why);
    err_clean(x->san, "redrive: ", line);
}

static void on_signal(int fd, short what, void *arg)
{
    bx *x = arg;
    (void)what;
    x->signo = (int)fd;
    if (fd == SIGINT && x->interrupts++ == 0 && x->run && !x->waiting) {
        fputs("redrive: interrupted: not sending the rest (a request in flight finishes)\n",
              stderr);
        batchrun_abort(x->run);
    } else {
        loop_exit(x->base);   /* batchrun_free journals what is in flight */
    }
}

/* The outcome read again (a few pages); false when it could not be (said once). */
static bool refresh(bx *x, size_t pages)
{
    char why[400];
    if (!x->track)
        return false;
    double now = clock_mono();
    if (now < x->next_read)
        return false;
    if (outtrack_refresh(x->track, pages, why, sizeof why)) {
        x->track_why[0] = 0;
        x->backoff = 0;
        return true;
    }
    x->backoff = x->backoff > 0 ? (x->backoff * 2 < 30 ? x->backoff * 2 : 30) : 5;
    x->next_read = clock_mono() + x->backoff;
    if (!x->track_why[0] || strcmp(x->track_why, why) != 0)
        err_clean(x->san, "redrive: outcome not read: ", why);
    snprintf(x->track_why, sizeof x->track_why, "%s", why);
    return false;
}

static void on_tick(int fd, short what, void *ud)
{
    bx *x = ud;
    (void)fd; (void)what;
    if (x->waiting) {          /* the canary's outcome: every item, until all are in */
        refresh(x, 0);
        rd_bout_counts c = x->track ? outtrack_counts(x->track, true) : (rd_bout_counts){0};
        if ((x->track && !c.running && !c.unread) || clock_mono() >= x->wait_until)
            loop_exit(x->base);
        else
            loop_timer_in(x->tick, OUT_TICK_S);
        return;
    }
    if (x->breaker_on && !x->tripped && refresh(x, OUT_PAGES_PER_TICK)) {
        rd_bout_counts c = outtrack_counts(x->track, true);
        if (bout_verdict(&c, x->g->max_refail, BOUT_BREAKER_MIN) == BOUT_TRIP) {
            char share[500];
            batch_share_line(&c, x->g->max_refail, share, sizeof share);
            snprintf(x->trip, sizeof x->trip, "breaker: %s", share);
            x->tripped = true;
            fprintf(stderr, "redrive: batch %s: %s: not sending the rest\n", x->b->id, x->trip);
            batchrun_abort(x->run);
            return;
        }
    }
    loop_timer_in(x->tick, OUT_TICK_S);
}

/* One run of the record (limit: the canary's size, 0 all): to its end, an abort, the
 * breaker or a signal. false when it could not start (said). */
static bool run_part(bx *x, rd_session *ss, const rd_batchrun_opts *o)
{
    char why[512];
    rd_batchrun_cbs cbs = {.on_item = on_item, .on_done = on_done,
                           .check = x->recheck ? on_check : NULL, .on_held = on_held};
    x->run = batchrun_start(session_actor(ss), x->b, o, &cbs, x, why, sizeof why);
    if (!x->run) {
        if (!x->g->canary || strcmp(why, "nothing left to send") != 0)
            err_clean(x->san, "redrive: not sent: ", why);   /* not after a whole canary */
        return false;
    }
    loop_timer_in(x->tick, OUT_TICK_S);
    loop_run(x->base);
    loop_timer_stop(x->tick);
    if (batchrun_why(x->run)[0])
        err_clean(x->san, "redrive: stopped: ", batchrun_why(x->run));
    return true;
}

/* The run's totals said; the run freed. Its exit code before the guards. */
static int run_end(bx *x, size_t *sent)
{
    size_t todo = batchrun_todo(x->run), fin = batchrun_finished(x->run), ok = batchrun_ok(x->run);
    size_t guarded = batchrun_guarded(x->run);
    rd_action kind = RD_ACT_RETRY;
    action_from_name(x->b->action, &kind);
    if (guarded) {
        char line[1200];
        batchrun_guard_line(x->run, line, sizeof line);
        char *c = sanitize_str(line, x->san);
        fprintf(stderr, "redrive: batch %s: held back at send time, no longer eligible in the "
                "store: %s (never sent%s)\n", x->b->id, c,
                x->g->verbose ? "" : "; --verbose names each");
        free(c);
    }
    fprintf(stderr, "redrive: batch %s: %zu of %zu %s", x->b->id, ok, todo, action_past(kind));
    if (fin < todo)
        fprintf(stderr, "; %zu not sent (redrive batch resume %s)", todo - fin, x->b->id);
    fputc('\n', stderr);
    batchrun_free(x->run);
    x->run = NULL;
    *sent += fin;
    return fin == todo && ok == todo && !guarded ? RD_EXIT_OK : RD_EXIT_FAIL;
}

static void pause_batch(bx *x, rd_session *ss, const char *reason)
{
    char why[512];
    rd_batch_ctl c = {.paused = true, .rate = x->rate, .concurrency = x->concurrency,
                      .reason = reason};   /* resume goes on at the rate it ran at */
    if (!batchrec_control(x->b, &c, actor_identity(session_actor(ss)), why, sizeof why))
        err_clean(x->san, "redrive: ", why);
    fprintf(stderr, "redrive: batch %s paused: redrive batch show %s; redrive batch resume %s "
            "asks again\n", x->b->id, x->b->id, x->b->id);
}

/* The canary's outcome waited for and judged: true to go on. */
static bool canary_judge(bx *x, rd_session *ss, size_t n)
{
    fprintf(stderr, "redrive: canary: %zu sent: waiting up to %.0fs for their outcome in the "
            "store\n", n, x->g->canary_wait_s);
    x->waiting = true;
    x->wait_until = clock_mono() + x->g->canary_wait_s;
    loop_timer_in(x->tick, 0.2);
    loop_run(x->base);
    loop_timer_stop(x->tick);
    x->waiting = false;
    if (x->signo)
        return false;
    char reason[1000], share[500];   /* a paused line's reason is at most 1024 bytes */
    rd_bout_counts c = x->track ? outtrack_counts(x->track, true) : (rd_bout_counts){0};
    if (!x->track || !bout_finished(&c)) {
        char line[300];
        bout_line(&c, line, sizeof line);
        snprintf(reason, sizeof reason, "canary: no outcome of its %zu retries within %.0fs%s%.200s "
                 "(%.300s)", n, x->g->canary_wait_s, x->track_why[0] ? ": " : "", x->track_why,
                 line);
    } else {
        batch_share_line(&c, x->g->max_refail, share, sizeof share);
        if (bout_verdict(&c, x->g->max_refail, 1) == BOUT_GO) {
            fprintf(stderr, "redrive: canary: %s: going on\n", share);
            return true;
        }
        snprintf(reason, sizeof reason, "canary: %.500s", share);
    }
    fprintf(stderr, "redrive: batch %s: %s\n", x->b->id, reason);
    pause_batch(x, ss, reason);
    return false;
}

int batch_exec(rd_session *ss, rd_loop *base, const rd_batch_info *b, const rd_batchrun_opts *o,
               const batch_guard *g, unsigned san)
{
    bx x = {.base = base, .b = b, .g = g, .san = san, .last_progress = clock_mono()};
    char why[512];
    /* the record's lock for the whole run, the canary's wait included: one run at a time */
    int lock = batchrec_lock(b->path, why, sizeof why);
    if (lock < 0) {
        char w[600];
        snprintf(w, sizeof w, "batch %s: %s", b->id, why);
        err_clean(san, "redrive: not sent: ", w);
        return RD_EXIT_FAIL;
    }
    rd_batchrun_opts lo = *o;
    lo.locked = true;
    o = &lo;
    const rd_system_cfg *sys = session_system(ss);
    x.rate = o->rate > 0 ? o->rate : sys->rate_limit > 0 ? sys->rate_limit : 5;
    x.concurrency = o->concurrency > 0 ? o->concurrency : BATCHRUN_CONCURRENCY;
    rd_batch_ctl open = {.rate = x.rate, .concurrency = x.concurrency};   /* a run starts */
    if (!batchrec_control(b, &open, actor_identity(session_actor(ss)), why, sizeof why)) {
        err_clean(san, "redrive: not sent: ", why);
        close(lock);
        return RD_EXIT_FAIL;
    }
    bool retry = b->action && !strcmp(b->action, "retry");   /* only a retry has an outcome */
    char *jpath = session_journal_path();
    x.track = retry ? outtrack_new(sys, session_profile(ss), b, jpath, x.track_why,
                                   sizeof x.track_why) : NULL;
    free(jpath);
    if (!x.track && retry)
        err_clean(san, "redrive: outcome not read: ", x.track_why);
    x.recheck = retry ? recheck_new(sys, session_profile(ss)) : NULL;
    x.tick = loop_timer_new(base, on_tick, &x);
    int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    rd_event *sig[3];
    for (int k = 0; k < 3; k++)
        sig[k] = loop_signal_new(base, sigs[k], on_signal, &x);
    int rc = RD_EXIT_OK;
    size_t sent = 0;
    bool go = true;
    size_t left = o->resend_unknown ? b->unknown : b->total - (b->ok + b->failed + b->unknown + b->held);
    if (retry && g->canary && g->canary < left) {   /* a canary of the whole batch is it */
        rd_batchrun_opts co = *o;
        co.limit = g->canary;
        go = run_part(&x, ss, &co);
        if (go) {
            size_t before = sent;
            rc = run_end(&x, &sent);
            go = !x.signo && sent - before > 0 && canary_judge(&x, ss, sent - before);
            if (!go && !x.signo)
                rc = RD_EXIT_FAIL;
        } else {
            rc = RD_EXIT_FAIL;
        }
    }
    if (go && !x.signo) {
        x.breaker_on = x.track != NULL;
        if (run_part(&x, ss, o)) {
            int rc2 = run_end(&x, &sent);
            rc = rc != RD_EXIT_OK ? rc : rc2;
        } else if (!retry || !g->canary || g->canary >= left) {
            rc = RD_EXIT_FAIL;
        }
        if (x.tripped) {
            pause_batch(&x, ss, x.trip);
            rc = RD_EXIT_FAIL;
        }
    }
    for (int k = 0; k < 3; k++)
        loop_event_free(sig[k]);
    loop_timer_free(x.tick);
    outtrack_free(x.track);
    recheck_free(x.recheck);
    close(lock);              /* the record's lock let go: it is no longer running */
    if (x.signo && x.signo != SIGINT)
        return 128 + x.signo;
    if (x.signo)
        return 128 + SIGINT;
    return rc;
}
