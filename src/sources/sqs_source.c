/*
 * The Amazon SQS source (alakai's dispatch queue and its dead-letter queue): one
 * GetQueueAttributes per queue per poll over the JSON protocol (POST, X-Amz-Target,
 * application/x-amz-json-1.0), signed with SigV4 by io/sigv4.h (not CURLOPT_AWS_SIGV4:
 * curl 7.88 does not sort query strings), credentials from io/awscreds.h.
 *
 * DLQs come from each queue's RedrivePolicy (or sqs_dlq) and are polled in the same
 * round. Dead letters are read only on explicit request: ReceiveMessage with
 * VisibilityTimeout=0 (a receive still increments ApproximateReceiveCount), 10 a page.
 * Throttling backs off (doubling up to 60 s) and keeps the last data; every other
 * failure is the source's error, and the other sources keep going.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/health.h"
#include "../core/textutil.h"
#include "../core/xalloc.h"
#include "../io/awscreds.h"
#include "../io/clock.h"
#include "../io/http.h"
#include "../io/sigv4.h"
#include "../io/url.h"
#include "http_poller.h"
#include "sqs_decode.h"

enum { SQ_MAX_QUEUES = 16, SQ_PEEK_PAGE = 10, SQ_PEEK_MAX_PAGES = 5, SQ_BACKOFF_MAX_S = 60 };
static const char SRC_NAME[] = "sqs";

typedef struct sq_queue {
    struct sq_src *owner;            /* set with req: the request's callback data */
    char *url, *name;
    bool is_dlq;
    uint64_t req;
    bool answered, ok;
    char err[200];
    sqs_attrs a;
    rd_queue_trend trend;            /* rates and the not-draining detector (core/health.h) */
} sq_queue;

typedef struct sq_src {
    http_poller hp;                  /* its rd_source is hp.base */
    char *endpoint;                  /* request URL (override, or scheme://host of a queue) */
    char *region;
    rd_awscreds *creds;
    sq_queue q[SQ_MAX_QUEUES];
    size_t n;
    char setup_err[256];
    bool polling;
    int backoff_s;
    double resume_at;                /* mono: no poll before (throttled) */
    int peek_page;                   /* of the peek request in flight (of q[hp.peek.at]) */
} sq_src;

static void peek_next(http_poller *p);

static sq_queue *add_queue(sq_src *s, const char *url, bool is_dlq)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->q[i].url, url) == 0)
            return &s->q[i];
    char *name = sqs_queue_name(url);
    if (!name || s->n >= SQ_MAX_QUEUES) {
        free(name);
        return NULL;
    }
    sq_queue *q = &s->q[s->n++];
    memset(q, 0, sizeof *q);
    q->url = xstrdup(url);
    q->name = name;
    q->is_dlq = is_dlq;
    queue_trend_init(&q->trend);
    return q;
}

/* The URL of a queue named `name` next to queue `like` (same scheme, host, account). */
static char *sibling_url(const char *like, const char *name)
{
    const char *end = strrchr(like, '/');
    return xasprintf("%.*s/%s", end ? (int)(end - like) : 0, like, name);
}

/* ---- signed requests ----------------------------------------------------------------------- */

static uint64_t sqs_call(sq_src *s, const char *action, const char *body, rd_http_cb cb,
                         void *ud, size_t max_body, char *why, size_t cap)
{
    const rd_aws_creds *k = awscreds_get(s->creds, why, cap);
    if (!k)
        return 0;
    char target[80];
    snprintf(target, sizeof target, "X-Amz-Target: AmazonSQS.%s", action);
    const char *sign_hdrs[] = { "Content-Type: application/x-amz-json-1.0", target, NULL };
    sigv4_in in = { .method = "POST", .url = s->endpoint, .body = body,
                    .headers = sign_hdrs, .region = s->region, .service = "sqs",
                    .access_key = k->access_key, .secret_key = k->secret_key,
                    .token = k->token, .when = (time_t)clock_wall() };
    sigv4_out out;
    if (!sigv4_sign(&in, &out, why, cap))
        return 0;
    model_source_creds(s->hp.base.ctx.model, SRC_NAME, k->provider, k->expires);
    const char *hdrs[] = { sign_hdrs[0], target, out.date_hdr, out.auth_hdr,
                           out.token_hdr, NULL };
    rd_http_req req = { .method = "POST", .url = s->endpoint, .body = body, .headers = hdrs,
                        .cacert = s->hp.base.ctx.cfg->http.cacert, .timeout_ms = 8000,
                        .connect_timeout_ms = 3000, .max_body = max_body,
                        .credential = true, .insecure_ok = s->hp.base.ctx.cfg->http.insecure };
    uint64_t id = http_start(s->hp.base.ctx.http, &req, cb, ud);
    sigv4_out_free(&out);
    if (!id)
        snprintf(why, cap, "SQS request not sent: %s", http_why(s->hp.base.ctx.http));
    return id;
}

/* A human message for a failed answer; false when usable. */
static bool answer_problem(const rd_http_resp *r, char *msg, size_t cap, bool *throttled)
{
    *throttled = false;
    if (r->status == 0) {
        snprintf(msg, cap, "SQS endpoint %s", r->timed_out ? "did not answer in time"
                                                           : "unreachable");
        if (!r->timed_out && r->error[0])
            snprintf(msg + strlen(msg), cap - strlen(msg), ": %.150s", r->error);
        return true;
    }
    if (r->status < 200 || r->status > 299) {
        sqs_decode_error(r->body, r->body_len, r->status, msg, cap, throttled);
        return true;
    }
    if (r->truncated) {
        snprintf(msg, cap, "SQS answer too large (truncated)");
        return true;
    }
    return false;
}

/* ---- polling --------------------------------------------------------------------------------- */

static void publish(sq_src *s)
{
    rd_model *m = s->hp.base.ctx.model;
    size_t keep = 0;
    rd_queue *items = xcalloc(s->n + 1, sizeof *items);
    long dlq = 0;
    for (size_t k = 0; k < s->n; k++) {
        const sq_queue *q = &s->q[k];
        if (!q->ok && q->trend.prev_total < 0)
            continue;                /* never answered: nothing to show */
        rd_queue *o = &items[keep++];
        o->name = xstrdup(q->name);
        o->ready = q->a.visible;
        o->unacked = q->a.in_flight;
        o->delayed = q->a.delayed > 0 ? q->a.delayed : 0;
        o->depth = (q->a.visible > 0 ? q->a.visible : 0) + (q->a.in_flight > 0 ? q->a.in_flight : 0);
        o->consumers = -1;
        o->publish_rate = q->trend.in_rate;
        o->deliver_rate = q->trend.out_rate;
        o->is_dlq = q->is_dlq;
        o->dead_letter_exchange = q->a.dlq_name[0] ? xstrdup(q->a.dlq_name) : NULL;
        o->ttl_ms = o->max_length = o->expires_ms = -1;
        o->max_receive = q->a.max_receive;
        o->retention_s = q->a.retention_s > 0 ? q->a.retention_s : 1;
        o->not_draining = !q->is_dlq && q->trend.not_draining;   /* a DLQ has no consumer */
        if (q->is_dlq)
            dlq += o->ready > 0 ? o->ready : 0;
    }
    model_set_queues(m, SRC_NAME, items, keep);
    model_dlq_total(m, SRC_NAME, dlq);
}

static void round_done(sq_src *s)
{
    s->polling = false;
    char first_err[256] = "";
    for (size_t i = 0; i < s->n; i++)
        if (!s->q[i].ok && !first_err[0])
            snprintf(first_err, sizeof first_err, "%.40s: %.200s", s->q[i].name, s->q[i].err);
    publish(s);
    if (first_err[0])
        model_source_fail(s->hp.base.ctx.model, SRC_NAME, first_err, clock_wall());
    else
        http_poller_ok(&s->hp, clock_wall());
    http_poller_round_done(&s->hp);
}

static void poll_queue(sq_src *s, sq_queue *q);

static bool round_pending(const sq_src *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (!s->q[i].answered)
            return true;
    return false;
}

/* The callback data of a request is the queue (or the source) itself, never an allocation:
 * http_cancel runs no callback, so anything allocated for one would leak at teardown. */
static void on_attrs_call(const rd_http_resp *r, void *ud)
{
    sq_queue *q = ud;
    sq_src *s = q->owner;
    q->req = 0;
    q->answered = true;
    bool throttled = false;
    sqs_attrs a;
    if (answer_problem(r, q->err, sizeof q->err, &throttled)) {
        q->ok = false;
        if (throttled) {
            s->backoff_s = s->backoff_s ? s->backoff_s * 2 : 2;
            if (s->backoff_s > SQ_BACKOFF_MAX_S)
                s->backoff_s = SQ_BACKOFF_MAX_S;
            s->resume_at = clock_mono() + s->backoff_s;
            snprintf(q->err + strlen(q->err), sizeof q->err - strlen(q->err),
                     " (backing off %d s, last data kept)", s->backoff_s);
        }
    } else if (!sqs_decode_attrs(r->body, r->body_len, &a, q->err, sizeof q->err)) {
        q->ok = false;
    } else {
        q->ok = true;
        q->err[0] = '\0';
        q->a = a;
        queue_trend_note(&q->trend, a.visible, a.in_flight, a.delayed, clock_mono());
        s->backoff_s = 0;
        if (a.dlq_name[0] && !s->hp.base.ctx.cfg->sqs.dlq) {
            char *u = sibling_url(q->url, a.dlq_name);
            sq_queue *d = add_queue(s, u, true);
            free(u);
            if (d && !d->answered && !d->req)
                poll_queue(s, d);
        }
    }
    if (!round_pending(s))
        round_done(s);
}

static void poll_queue(sq_src *s, sq_queue *q)
{
    char *qurl = url_escape_json(q->url, q->err, sizeof q->err);
    q->answered = false;
    if (!qurl) {
        q->answered = true;
        return;
    }
    char *body = xasprintf("{\"QueueUrl\":\"%s\",\"AttributeNames\":[\"All\"]}", qurl);
    free(qurl);
    q->owner = s;
    q->req = sqs_call(s, "GetQueueAttributes", body, on_attrs_call, q, (size_t)1 << 20,
                      q->err, sizeof q->err);
    free(body);
    if (!q->req) {
        q->ok = false;
        q->answered = true;
    }
}

static sq_src *of(http_poller *p) { return p->base.impl; }

static void poll_now(http_poller *p)
{
    sq_src *s = of(p);
    if (s->setup_err[0]) {
        http_poller_fail(&s->hp, s->setup_err);
        return;
    }
    if (s->polling || clock_mono() < s->resume_at)
        return;
    char why[256];
    if (!awscreds_get(s->creds, why, sizeof why)) {
        if (strcmp(why, "AWS credentials pending") != 0)
            http_poller_fail(&s->hp, why);
        return;                      /* pending: the credentials callback polls */
    }
    s->polling = true;
    for (size_t i = 0; i < s->n; i++)
        s->q[i].answered = false;
    size_t n = s->n;                 /* DLQs found during the round poll themselves */
    for (size_t i = 0; i < n; i++)
        poll_queue(s, &s->q[i]);
    if (s->polling && !round_pending(s))
        round_done(s);
}

static void on_creds(void *ud)
{
    sq_src *s = ud;
    poll_now(&s->hp);
}

/* ---- DLQ peek (on demand only) ---------------------------------------------------------------- */

static void on_peek(const rd_http_resp *r, void *ud)
{
    sq_src *s = ud;
    http_peek *k = &s->hp.peek;
    int page = s->peek_page;
    k->req = 0;
    const sq_queue *q = &s->q[k->at];
    char msg[200] = "";
    bool throttled;
    size_t before = k->n_got;
    if (answer_problem(r, msg, sizeof msg, &throttled) ||
        !sqs_decode_messages(r->body, r->body_len, q->name, &k->got, &k->n_got, msg,
                             sizeof msg)) {
        snprintf(k->err, sizeof k->err, "peek %.60s: %.180s", q->name, msg);
    } else if (k->n_got > before && page + 1 < k->pages) {
        /* another page of the same queue: messages stay visible, duplicates dropped */
        peek_next(&s->hp);
        return;
    }
    k->at++;
    peek_next(&s->hp);
}

static void peek_next(http_poller *p)
{
    sq_src *s = of(p);
    http_peek *k = &p->peek;
    while (k->at < s->n && !s->q[k->at].is_dlq)
        k->at++;
    if (k->at >= s->n) {
        http_poller_peek_end(p);
        return;
    }
    const sq_queue *q = &s->q[k->at];
    char *qurl = url_escape_json(q->url, k->err, sizeof k->err);
    if (!qurl) {
        http_poller_peek_end(p);
        return;
    }
    char *body = xasprintf("{\"QueueUrl\":\"%s\",\"MaxNumberOfMessages\":%d,"
                           "\"VisibilityTimeout\":0,\"WaitTimeSeconds\":0,"
                           "\"AttributeNames\":[\"All\"],"
                           "\"MessageSystemAttributeNames\":[\"All\"],"
                           "\"MessageAttributeNames\":[\"All\"]}", qurl, SQ_PEEK_PAGE);
    free(qurl);
    size_t mine = 0;
    for (size_t i = 0; i < k->n_got; i++)
        mine += strcmp(k->got[i].queue, q->name) == 0;
    s->peek_page = (int)(mine / SQ_PEEK_PAGE);
    char why[200];
    k->req = sqs_call(s, "ReceiveMessage", body, on_peek, s, (size_t)4 << 20, why, sizeof why);
    free(body);
    if (!k->req) {
        snprintf(k->err, sizeof k->err, "peek: %s", why);
        http_poller_peek_end(p);
    }
}

/* ---- the poller's hooks ------------------------------------------------------------------- */

/* A configuration that never polls has no DLQ to wait for: the source's error says why. */
static bool hook_peek_hopeless(const http_poller *p)
{
    const sq_src *s = p->base.impl;
    return s->setup_err[0] != '\0';
}

static void hook_clear(http_poller *p)
{
    sq_src *s = of(p);
    http_poller_cancel_each(p, s->q, s->n, sizeof *s->q, offsetof(sq_queue, req));
    for (size_t i = 0; i < s->n; i++) {
        free(s->q[i].url);
        free(s->q[i].name);
    }
    awscreds_free(s->creds);
    free(s->endpoint);
    free(s->region);
}

static const http_poller_kind sqs_kind = {
    .name = SRC_NAME, .size = sizeof(sq_src), .at = offsetof(sq_src, hp),
    .min_poll_s = 1, .peek_max_pages = SQ_PEEK_MAX_PAGES,
    .poll = poll_now, .peek_next = peek_next, .peek_hopeless = hook_peek_hopeless,
    .clear = hook_clear,
};

static void add_list(sq_src *s, const char *list, bool is_dlq)
{
    size_t n;
    text_span *sp = text_split_all(list, TEXT_LIST_WORDS, &n);
    for (size_t i = 0; i < n; i++) {
        char *a = xstrndup(sp[i].s, sp[i].len);
        char *u = strstr(a, "://") || !s->n ? xstrdup(a) : sibling_url(s->q[0].url, a);
        if (!add_queue(s, u, is_dlq) && !s->setup_err[0])
            snprintf(s->setup_err, sizeof s->setup_err, "sqs: bad queue URL '%.150s' "
                     "(or more than %d queues)", u, SQ_MAX_QUEUES);
        free(u);
        free(a);
    }
    free(sp);
}

static char *scheme_host(const char *url)
{
    const char *s = strstr(url, "://");
    size_t n = s ? (size_t)(s + 3 - url) + strcspn(s + 3, "/?#") : strlen(url);
    return xasprintf("%.*s/", (int)n, url);
}

rd_source *sqs_source_new(const rd_source_ctx *ctx)
{
    const rd_system_cfg *cfg = ctx ? ctx->cfg : NULL;
    sq_src *s = http_poller_new(ctx, cfg ? cfg->sqs.queue_url : NULL, &sqs_kind);
    if (!s)
        return NULL;
    add_list(s, cfg->sqs.queue_url, false);
    add_list(s, cfg->sqs.dlq, true);
    s->creds = awscreds_new(ctx->base, ctx->http, cfg->sqs.aws_profile, on_creds, s);
    if (s->n == 0 && !s->setup_err[0])
        snprintf(s->setup_err, sizeof s->setup_err, "sqs: no queue URL");
    if (s->n) {
        s->endpoint = cfg->sqs.endpoint && *cfg->sqs.endpoint ? xstrdup(cfg->sqs.endpoint)
                                                              : scheme_host(s->q[0].url);
        char host[256] = "", region[64] = "";
        char *hp = url_host_port(s->q[0].url);
        if (hp)
            snprintf(host, sizeof host, "%s", hp);
        free(hp);
        if (cfg->sqs.region && *cfg->sqs.region)
            s->region = xstrdup(cfg->sqs.region);
        else if (sigv4_region_from_host(host, region, sizeof region))
            s->region = xstrdup(region);
        else if (awscreds_region(s->creds))
            s->region = xstrdup(awscreds_region(s->creds));
        else if (!s->setup_err[0])
            snprintf(s->setup_err, sizeof s->setup_err, "sqs: no region (set sqs_region, "
                     "or region in the AWS profile, or AWS_REGION)");
    }
    return &s->hp.base;
}
