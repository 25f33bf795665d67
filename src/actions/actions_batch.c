/* The action layer's batches: a frozen selection sent one item at a time, rate-limited,
 * journaled ahead, each item's outcome to the caller (actions.h). The actor that runs
 * them is actions.c; actions_priv.h is what the two share. */
#include "actions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/http.h"
#include "../io/secret.h"
#include "../io/url.h"
#include "../io/loop.h"
#include "actions_priv.h"
#include "auth.h"
#include "journal.h"
#include "jwriter.h"
#include "request.h"

enum { ACT_MAX_HEADERS = 8 };
static const double IDENTITY_WAIT_S = 3.0, IDENTITY_POLL_S = 0.02;

typedef struct batch_item {
    bool auth_retried;       /* a 401 already caused one credential refresh */
    bool final;
    bool journaled;          /* its "pending" line is in the journal: it gets an outcome */
    bool in_flight;          /* sent, no response yet: it may have been applied */
    unsigned long serial;    /* auth_serial() when the 401 came: re-send only if it moved */
    rd_result unauth;        /* the 401's result, kept while credentials are renewed */
    char *fp;                /* the target's error fingerprint for the journal, or NULL */
    int attempt;             /* the target's attempt for the journal, <= 0 unknown */
    char *override_;         /* what the operator overrode to send it (journaled), or NULL */
    char *named;             /* the target as the operator named it (rd_target), or NULL */
    char *operator_;         /* who its "pending" line names: its outcome names the same */
    size_t item;             /* its number in the batch record (has_item) */
    uint64_t oticket;        /* its outcome line on its way to disk (jwriter.h), else 0 */
    struct rd_batch *owner;
} batch_item;

struct rd_batch {
    rd_batch *next;          /* in the actor's list */
    rd_actor *a;
    rd_action kind;
    rd_result *res;
    batch_item *items;
    size_t n, cursor, finished, succeeded;
    char *reason;
    rd_batch_cbs cbs;
    void *ud;
    rd_event *tick;
    double interval_s, last_send;
    double *pace;            /* shared with batches side by side (rd_batch_opts), or NULL */
    uint64_t http_id;        /* in flight */
    bool syncing;            /* the cursor's "pending" line is being written (jwriter.h) */
    uint64_t jticket;        /* its ticket (jwriter_forget) */
    bool waiting_auth, aborted, done_fired, dead;
    double who_deadline;     /* clock_mono() until which a pending line waits for /auth/me */
    int in_cb;
    bool has_item;           /* part of a batch record: items journaled with "item" */
    char id[17];             /* batch id for the journal, "" = not journaled as a batch */
};

static void batch_schedule(rd_batch *b);
static void batches_detach(rd_batch **head);

/* ---- journal ---------------------------------------------------------------------- */

/* One line for item i as it stands: "pending" before sending, then its outcome. Through
 * the actor's writer thread when it has one (done runs on the loop once the line is on
 * disk; every line of the actor goes that way, so they stay in order), else written at
 * once (done called before this returns). The ticket, 0 when written at once. */
static uint64_t journal_item(rd_batch *b, size_t i, rd_jwriter_done done, void *ud)
{
    rd_actor *a = b->a;
    const rd_result *r = &b->res[i];
    const batch_item *it = &b->items[i];
    /* a batch item as its record names it; a single action as the operator did */
    char *t = b->id[0] ? action_target_text(r->id, r->parent) : xstrdup(it->named ? it->named : r->id);
    const char *targets[] = {t};
    rd_journal_rec rec = {
        .operator_ = it->operator_ ? it->operator_ : actor_operator(a),
        .system = actor_cfg(a)->name, .action = action_name(r->action),
        .targets = targets, .n_targets = 1,
        .idempotency_key = r->idem_key[0] ? r->idem_key : NULL,
        .http_status = r->code == RD_RES_PENDING ? 0 : r->http_status,
        .result = r->code == RD_RES_PENDING ? "sending" : r->message,
        .code = result_code_name(r->code),
        .batch = b->id[0] ? b->id : NULL, .fp = it->fp, .attempt = it->attempt,
        .override_ = it->override_, .has_item = b->has_item, .item = it->item,
        .syslog = actor_cfg(a)->journal_syslog};
    uint64_t ticket = 0;
    if (actor_jwriter(a))
        ticket = jwriter_append(actor_jwriter(a), actor_journal_path(a), &rec, done, ud);
    else {
        char why[256];
        bool ok = journal_append(actor_journal_path(a), &rec, why, sizeof why);
        if (done)
            done(ok, why, ud);
    }
    free(t);
    return ticket;
}

static void on_outcome_written(bool ok, const char *why, void *ud)
{
    if (!ok)
        actor_journal_failed(ud, why);
}

/* Item i's outcome line (a failure to write it reaches the status line). */
static void journal_outcome(rd_batch *b, size_t i)
{
    journal_item(b, i, on_outcome_written, b->a);
}

/* ---- batch ------------------------------------------------------------------------ */

static void batch_destroy(rd_batch *b)
{
    if (b->tick)
        loop_event_free(b->tick);
    for (size_t i = 0; i < b->n; i++) {
        free(b->res[i].id);
        free(b->res[i].parent);
        free(b->items[i].fp);
        free(b->items[i].override_);
        free(b->items[i].named);
        free(b->items[i].operator_);
    }
    free(b->res);
    free(b->items);
    free(b->reason);
    free(b);
}

static void batch_unlink(rd_batch *b)
{
    if (!b->a)
        return;
    for (rd_batch **p = actor_batches(b->a); *p; p = &(*p)->next)
        if (*p == b) {
            *p = b->next;
            break;
        }
}

/* Runs a user callback; returns false when the batch was freed meanwhile. */
static bool emit_item(rd_batch *b, size_t i)
{
    if (b->cbs.on_item) {
        b->in_cb++;
        b->cbs.on_item(b, i, &b->res[i], b->ud);
        b->in_cb--;
    }
    if (b->dead && !b->in_cb) {
        batch_destroy(b);
        return false;
    }
    return !b->dead;
}

static bool maybe_done(rd_batch *b)
{
    if (b->done_fired || b->finished < b->n)
        return true;
    b->done_fired = true;
    if (b->cbs.on_done) {
        b->in_cb++;
        b->cbs.on_done(b, b->ud);
        b->in_cb--;
    }
    if (b->dead && !b->in_cb) {
        batch_destroy(b);
        return false;
    }
    return !b->dead;
}

/* Item i counted and told to the caller. false when the batch is gone. */
static bool item_told(rd_batch *b, size_t i)
{
    b->finished++;
    if (b->res[i].code == RD_RES_OK)
        b->succeeded++;
    return emit_item(b, i);
}

/* Its outcome line is on disk: what a caller shows as done is in the journal (a kill -9
 * after it was shown cannot turn it back into "may have been applied"). */
static void on_outcome_item(bool ok, const char *why, void *ud)
{
    batch_item *it = ud;
    rd_batch *b = it->owner;
    it->oticket = 0;
    if (!ok)
        actor_journal_failed(b->a, why);
    if (item_told(b, (size_t)(it - b->items)))
        maybe_done(b);
}

/* Final result for item i: its outcome journaled, then counted and told (with the writer
 * thread, once the line is on disk). false when the batch is gone. */
static bool item_final(rd_batch *b, size_t i)
{
    b->items[i].final = true;
    b->items[i].in_flight = false;
    if (!b->a || (b->res[i].code == RD_RES_ABORTED && !b->items[i].journaled))
        return item_told(b, i);   /* never sent, no pending line: no outcome line */
    if (!actor_jwriter(b->a)) {
        journal_outcome(b, i);
        return item_told(b, i);
    }
    b->items[i].oticket = journal_item(b, i, on_outcome_item, &b->items[i]);
    return !b->dead;
}

static bool fail_rest(rd_batch *b, rd_result_code code, const char *msg)
{
    for (size_t i = b->cursor; i < b->n; i++) {
        if (b->items[i].final)
            continue;
        b->res[i].code = code;
        b->res[i].http_status = 0;
        snprintf(b->res[i].message, sizeof b->res[i].message, "%s", msg);
        b->cursor = i + 1;
        if (!item_final(b, i))
            return false;
    }
    return maybe_done(b);
}

static void on_response(const rd_http_resp *resp, void *ud);

/* Item i not sent: refused with why. false when the batch is gone. */
static bool item_refused(rd_batch *b, size_t i, const char *why)
{
    rd_result *r = &b->res[i];
    r->code = RD_RES_REFUSED;
    snprintf(r->message, sizeof r->message, "%s", why);
    b->cursor = i + 1;
    if (!item_final(b, i) || !maybe_done(b))
        return false;
    batch_schedule(b);
    return true;
}

/* Item i on its way to the core (its "pending" line is on disk). */
static bool send_request(rd_batch *b, size_t i)
{
    rd_actor *a = b->a;
    rd_result *r = &b->res[i];
    rd_route route;
    char why[256];
    char *path = NULL, *body = NULL, *url = NULL;
    char *cred[ACT_MAX_HEADERS] = {0};
    bool ok = false;
    if (!route_for(actor_profile(a), b->kind, &route)) {
        snprintf(why, sizeof why, "this system's profile has no %s action", action_name(b->kind));
        goto fail;
    }
    bool worker = action_on_worker(b->kind);
    rd_tvars v = {.id = r->id, .task = r->parent, .worker = worker ? r->id : NULL,
                  .reason = b->reason, .operator_ = actor_operator(a)};
    if (!(path = template_expand(route.path, &v, true, why, sizeof why)))
        goto fail;
    if (route.body && !(body = template_expand(route.body, &v, false, why, sizeof why)))
        goto fail;
    url = url_join(actor_cfg(a)->core.url, path);
    char idem[64];
    snprintf(idem, sizeof idem, "Idempotency-Key: %s", r->idem_key);
    size_t nc = auth_headers(actor_auth(a), cred, ACT_MAX_HEADERS - 4);
    const char *hdrs[ACT_MAX_HEADERS];
    size_t nh = 0;
    for (size_t k = 0; k < nc; k++)
        hdrs[nh++] = cred[k];
    hdrs[nh++] = idem;
    hdrs[nh++] = "Accept: application/json";
    hdrs[nh] = NULL;
    rd_http_req req = {.method = route.method, .url = url, .body = body, .headers = hdrs,
                       .cacert = actor_cfg(a)->http.cacert, .timeout_ms = actor_timeout_ms(a),
                       .max_body = 65536, .credential = nc > 0,
                       .insecure_ok = actor_cfg(a)->http.insecure, .path_as_is = true};
    b->last_send = clock_mono();
    if (b->pace && *b->pace < b->last_send)
        *b->pace = b->last_send;
    b->http_id = http_start(actor_http(a), &req, on_response, b);
    if (!b->http_id)
        snprintf(why, sizeof why, "%s", http_why(actor_http(a)));
    ok = b->http_id != 0;
    b->items[i].in_flight = ok;
fail:
    for (size_t k = 0; k < ACT_MAX_HEADERS; k++)
        secret_free(cred[k]);
    free(path);
    free(body);
    free(url);
    return ok || item_refused(b, i, why);
}

/* The "pending" line of the item at the cursor is on disk (or could not be written). */
static void on_pending_written(bool ok, const char *why, void *ud)
{
    rd_batch *b = ud;
    size_t i = b->cursor;
    b->syncing = false;
    b->jticket = 0;
    if (!ok) {
        char msg[sizeof b->res[0].message];
        actor_journal_failed(b->a, why);
        snprintf(msg, sizeof msg, "not sent: the journal cannot be written (%s)", why);
        item_refused(b, i, msg);
        return;
    }
    b->items[i].journaled = true;
    if (b->aborted)   /* aborted while its line was written: it gets an outcome, unsent */
        fail_rest(b, RD_RES_ABORTED, "aborted before sending");
    else
        send_request(b, i);
}

/* Write-ahead: no request leaves without its "pending" line on disk (a re-send after a 401
 * is the same action: its line is already there). With the writer thread the request
 * leaves from on_pending_written; the loop does not wait for the disk. */
static bool send_item(rd_batch *b, size_t i)
{
    if (b->items[i].journaled)
        return send_request(b, i);
    free(b->items[i].operator_);
    b->items[i].operator_ = xstrdup(actor_operator(b->a));
    b->syncing = true;
    b->jticket = journal_item(b, i, on_pending_written, b);
    return true;
}

/* After a 401 and a credential renewal: the same token again cannot do better. */
static bool resend_pointless(rd_batch *b, size_t i)
{
    batch_item *it = &b->items[i];
    if (!it->auth_retried || it->final || auth_serial(actor_auth(b->a)) != it->serial)
        return false;
    rd_result *r = &b->res[i];
    r->code = it->unauth.code;
    r->http_status = it->unauth.http_status;
    memcpy(r->message, it->unauth.message, sizeof r->message);
    b->cursor = i + 1;
    if (item_final(b, i) && maybe_done(b))
        batch_schedule(b);
    return true;
}

/* Who the core says we are (GET /auth/me) may be on its way when the credentials are in
 * hand: the pending line waits for it, at most IDENTITY_WAIT_S, so that it and its
 * outcome name the operator the core knows (else both name the local user). */
static bool identity_pending(rd_batch *b)
{
    rd_auth *au = actor_auth(b->a);
    if (b->cursor >= b->n || auth_identity(au) || !auth_identity_coming(au) ||
        b->items[b->cursor].journaled)
        return false;
    double now = clock_mono();
    if (b->who_deadline <= 0)
        b->who_deadline = now + IDENTITY_WAIT_S;
    return now < b->who_deadline;
}

static void on_auth(bool ok, const char *why, void *ud)
{
    rd_batch *b = ud;
    b->waiting_auth = false;
    if (b->cursor < b->n && ok && resend_pointless(b, b->cursor))
        return;
    if (b->aborted) {
        fail_rest(b, RD_RES_ABORTED, "aborted before sending");
        return;
    }
    if (!ok) {
        char msg[300];
        snprintf(msg, sizeof msg, "not authorized: %s", why);
        fail_rest(b, RD_RES_UNAUTHORIZED, msg);
        return;
    }
    if (identity_pending(b)) {       /* asked again shortly: on_tick, auth_ensure, here */
        loop_timer_in(b->tick, IDENTITY_POLL_S);
        return;
    }
    send_item(b, b->cursor);
}

static void on_response(const rd_http_resp *resp, void *ud)
{
    rd_batch *b = ud;
    size_t i = b->cursor;
    rd_result *r = &b->res[i];
    b->http_id = 0;
    b->items[i].in_flight = false;
    if (resp->status == 401 && !b->items[i].auth_retried) {
        /* not applied: obtain credentials again, once; re-send (same key) only when that
         * gives a different token (resend_pointless) */
        b->items[i].auth_retried = true;
        b->items[i].serial = auth_serial(actor_auth(b->a));
        b->items[i].unauth = *r;
        result_from_response(&b->items[i].unauth, resp);
        auth_invalidate(actor_auth(b->a));
        b->waiting_auth = true;
        auth_ensure(actor_auth(b->a), on_auth, b);
        return;
    }
    result_from_response(r, resp);
    b->cursor = i + 1;
    if (!item_final(b, i) || !maybe_done(b))
        return;
    batch_schedule(b);
}

static void on_tick(int fd, short what, void *arg)
{
    rd_batch *b = arg;
    (void)fd; (void)what;
    if (b->http_id || b->waiting_auth || b->syncing || b->dead)
        return;
    if (b->aborted) {
        fail_rest(b, RD_RES_ABORTED, "aborted before sending");
        return;
    }
    if (b->cursor >= b->n) {
        maybe_done(b);
        return;
    }
    double last = b->pace ? *b->pace : b->last_send, now = clock_mono();
    double wait = last + b->interval_s - now;
    if (last > 0 && wait > 0.0005) {
        loop_timer_in(b->tick, wait);
        return;
    }
    if (b->pace)             /* this slot is taken: the others wait one interval more */
        *b->pace = now;
    b->waiting_auth = true;
    auth_ensure(actor_auth(b->a), on_auth, b);
}

static void batch_schedule(rd_batch *b)
{
    if (!b->dead)
        loop_timer_in(b->tick, 0);
}

static rd_batch *batch_new(rd_actor *a, rd_action kind, size_t n, const char *reason,
                           const rd_batch_cbs *cbs, void *ud)
{
    rd_batch *b = xcalloc(1, sizeof *b);
    b->a = a;
    b->kind = kind;
    b->n = n;
    b->res = xcalloc(n ? n : 1, sizeof *b->res);
    b->items = xcalloc(n ? n : 1, sizeof *b->items);
    for (size_t i = 0; i < n; i++)
        b->items[i].owner = b;
    if (reason && *reason)
        b->reason = xstrdup(reason);
    else
        b->reason = xstrdup(kind == RD_ACT_RETRY ? "manual_retry" : "operator request");
    if (cbs)
        b->cbs = *cbs;
    b->ud = ud;
    double rate = actor_cfg(a)->rate_limit > 0 ? actor_cfg(a)->rate_limit : 5;
    b->interval_s = 1.0 / rate;
    b->tick = loop_timer_new(actor_base(a), on_tick, b);
    rd_batch **head = actor_batches(a);
    actor_keep_batches(a, batches_detach);
    b->next = *head;
    *head = b;
    return b;
}

/* The options of a batch record's part: its id, item numbers, pace and keys. */
static void batch_take_opts(rd_batch *b, const rd_batch_opts *bo)
{
    if (bo->id && strlen(bo->id) == sizeof b->id - 1)
        memcpy(b->id, bo->id, sizeof b->id - 1);
    b->has_item = bo->items != NULL;
    if (bo->rate > 0)
        b->interval_s = 1.0 / bo->rate;
    b->last_send = bo->last_send;
    b->pace = bo->pace;
}

void batch_set_rate(rd_batch *b, double rate)
{
    if (!b || rate <= 0)
        return;
    b->interval_s = 1.0 / rate;
    batch_schedule(b);       /* a send waiting on the old interval is timed again now */
}

static rd_batch *run(rd_actor *a, rd_action kind, const rd_target *targets, size_t n,
                     const char *reason, const rd_batch_cbs *cbs, void *ud, bool as_batch,
                     const rd_batch_opts *bo, char *why, size_t whycap)
{
    if (actor_refuses(a, kind, targets, n, why, whycap))
        return NULL;
    rd_batch *b = batch_new(a, kind, n, reason, cbs, ud);
    if (as_batch) {
        char key[33];
        idem_key_new(key);
        memcpy(b->id, key, sizeof b->id - 1);   /* 64 random bits name the batch */
    }
    if (bo)
        batch_take_opts(b, bo);
    for (size_t i = 0; i < n; i++) {   /* the frozen selection */
        b->res[i].action = kind;
        b->res[i].id = xstrdup(targets[i].id);
        b->res[i].parent = xstrdup(targets[i].parent);
        b->res[i].code = RD_RES_PENDING;
        const char *key = bo && bo->keys ? bo->keys[i] : NULL;
        if (key && strlen(key) == sizeof b->res[i].idem_key - 1)
            memcpy(b->res[i].idem_key, key, sizeof b->res[i].idem_key);
        else
            idem_key_new(b->res[i].idem_key);
        b->items[i].item = bo && bo->items ? bo->items[i] : i;
        b->items[i].fp = xstrdup(targets[i].fp);
        b->items[i].attempt = targets[i].attempt;
        b->items[i].override_ = xstrdup(targets[i].override_);
        b->items[i].named = xstrdup(targets[i].named);
    }
    batch_schedule(b);
    return b;
}

rd_batch *actor_run(rd_actor *a, rd_action kind, const rd_target *targets, size_t n,
                    const char *reason, const rd_batch_cbs *cbs, void *ud,
                    char *why, size_t whycap)
{
    return run(a, kind, targets, n, reason, cbs, ud, false, NULL, why, whycap);
}

rd_batch *actor_run_batch(rd_actor *a, rd_action kind, const rd_target *targets, size_t n,
                          const char *reason, const rd_batch_cbs *cbs, void *ud,
                          char *why, size_t whycap)
{
    return run(a, kind, targets, n, reason, cbs, ud, true, NULL, why, whycap);
}

rd_batch *actor_run_batch_opts(rd_actor *a, rd_action kind, const rd_target *targets,
                               size_t n, const char *reason, const rd_batch_opts *bo,
                               const rd_batch_cbs *cbs, void *ud, char *why, size_t whycap)
{
    return run(a, kind, targets, n, reason, cbs, ud, true, bo, why, whycap);
}

double batch_last_send(const rd_batch *b)
{
    return b->last_send;
}

const char *batch_id(const rd_batch *b)
{
    return b->id;
}

rd_batch *actor_resend(rd_actor *a, const rd_result *prev, const char *reason,
                       const rd_batch_cbs *cbs, void *ud, char *why, size_t whycap)
{
    rd_target t = {.id = prev->id, .parent = prev->parent};
    if (actor_refuses(a, prev->action, &t, 1, why, whycap))
        return NULL;
    rd_batch *b = batch_new(a, prev->action, 1, reason, cbs, ud);
    b->res[0].action = prev->action;
    b->res[0].id = xstrdup(prev->id);
    b->res[0].parent = xstrdup(prev->parent);
    b->res[0].code = RD_RES_PENDING;
    memcpy(b->res[0].idem_key, prev->idem_key, sizeof b->res[0].idem_key);
    if (!b->res[0].idem_key[0])
        idem_key_new(b->res[0].idem_key);
    batch_schedule(b);
    return b;
}

size_t batch_count(const rd_batch *b) { return b->n; }
size_t batch_finished(const rd_batch *b) { return b->finished; }
size_t batch_succeeded(const rd_batch *b) { return b->succeeded; }
bool batch_done(const rd_batch *b) { return b->finished >= b->n; }
rd_action batch_action(const rd_batch *b) { return b->kind; }

const rd_result *batch_result(const rd_batch *b, size_t i)
{
    return i < b->n ? &b->res[i] : NULL;
}

void batch_abort(rd_batch *b)
{
    if (!b || b->aborted)
        return;
    b->aborted = true;
    if (!b->http_id && !b->waiting_auth && !b->syncing && !b->in_cb)
        batch_schedule(b);
}

/* Stops a batch for good (freed, or its actor is): the request in flight is cancelled
 * and journaled as "unknown" (it may have been applied); an item whose "pending" line is
 * written but which is not in flight (renewing credentials after a 401) was not applied. */
static void batch_stop(rd_batch *b)
{
    b->dead = true;
    rd_actor *a = b->a;
    if (!a)
        return;
    if (b->http_id)
        http_cancel(actor_http(a), b->http_id);
    b->http_id = 0;
    auth_forget(actor_auth(a), b);
    loop_timer_stop(b->tick);
    for (size_t i = 0; i < b->n; i++)   /* outcome lines still go to disk, untold */
        if (b->items[i].oticket) {
            jwriter_forget(actor_jwriter(a), b->items[i].oticket);
            b->items[i].oticket = 0;
        }
    size_t unsent = b->n;   /* its "pending" line on its way to disk: never sent */
    if (b->syncing) {
        jwriter_forget(actor_jwriter(a), b->jticket);
        b->syncing = false;
        unsent = b->cursor;
        b->items[unsent].journaled = true;   /* its outcome is queued after that line */
    }
    for (size_t i = 0; i < b->n; i++) {
        batch_item *it = &b->items[i];
        if (it->final || !it->journaled)
            continue;
        rd_result *r = &b->res[i];
        r->code = it->in_flight ? RD_RES_UNKNOWN : RD_RES_ABORTED;
        r->http_status = 0;
        snprintf(r->message, sizeof r->message, "%s",
                 it->in_flight ? "unknown: may have been applied (redrive stopped while the "
                                 "request was in flight; re-send with the same key)"
                 : i == unsent ? "not applied: redrive stopped before sending it"
                               : "not applied: redrive stopped before re-sending after a 401");
        it->final = true;
        it->in_flight = false;
        journal_outcome(b, i);
    }
}

void batch_free(rd_batch *b)
{
    if (!b || b->dead)
        return;
    if (b->a) {
        batch_stop(b);
        batch_unlink(b);
    }
    b->dead = true;
    loop_timer_stop(b->tick);
    if (!b->in_cb)
        batch_destroy(b);
}

/* The actor is being freed (actor_keep_batches): each batch in the list is stopped. */
static void batches_detach(rd_batch **head)
{
    while (*head) {
        rd_batch *b = *head;
        *head = b->next;
        b->next = NULL;
        batch_stop(b);   /* journals what is in flight, while b->a is still set */
        b->a = NULL;
        if (!b->in_cb)
            batch_destroy(b);
    }
}
