/*
 * The RabbitMQ management API source (3.10): queues (depth, ready/unacked, consumers,
 * rates, DLX/TTL arguments, DLQ or not) polled no faster than every 5 s (the broker's
 * stats refresh), and DLQ peeks on demand only (POST .../get with ack_requeue_true:
 * messages come back redelivered — the UI says so).
 *
 * Worker queue depth (attune): the per-worker queues `worker.{id}.executions` are
 * published as ordinary queues; the UI/snapshot joins them to workers by that name.
 *
 * The broker password is a secret reference resolved by io/secret.h when the source
 * starts: a cmd: runs as a child on the loop with a deadline. Until it is resolved the
 * source is pending (not settled, no poll); a failure is the source's error.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/http.h"
#include "../io/secret.h"
#include "../io/url.h"
#include "http_poller.h"
#include "rabbit_decode.h"

enum { RB_MIN_POLL_S = 5, RB_PAGE_SIZE = 500, RB_MAX_PAGES = 40, RB_PEEK_COUNT = 20,
       RB_PEEK_MAX = RD_RABBIT_PEEK_MAX, RB_PEEK_QUEUES = RD_RABBIT_PEEK_QUEUES, RB_SECRET_TIMEOUT_S = 30 };
static const char SRC_NAME[] = "rabbitmq";

typedef struct rb_src {
    http_poller hp;                  /* its rd_source is hp.base */
    char *url;                       /* base URL without trailing '/' */
    char *vhost;                     /* URL-encoded */
    char *userpwd;                   /* "user:password" (wiped on free) */
    rd_secret *secret;               /* broker_password being resolved */
    char setup_err[320];             /* secret/URL problem: reported, never polls */
    rb_globs show, dlq;

    uint64_t poll_req;               /* in flight, 0 none */
    uint64_t overview_req;           /* the version request (once), 0 none */
    bool overview_asked;
    long page;
    rb_queue_page acc;               /* queues of the poll in progress */
    char **dlq_names;                /* DLQ queues of the last good poll (the peek reads */
    size_t n_dlq;                    /* dlq_names[hp.peek.at]) */
} rb_src;

static void start_auth(rb_src *s);

/* ---- HTTP ----------------------------------------------------------------------------------- */

/* A human message for a failed answer; false when the answer is usable. */
static bool http_problem(const rd_http_resp *r, char *msg, size_t cap)
{
    if (r->status == 401)
        snprintf(msg, cap, "broker rejected credentials (401)");
    else if (r->status == 403)
        snprintf(msg, cap, "broker: this user may not read the vhost (403)");
    else if (r->status == 404)
        snprintf(msg, cap, "broker: no such vhost or queue (404)");
    else if (r->status == 0 && r->timed_out)
        snprintf(msg, cap, "broker did not answer in time");
    else if (r->status == 0)
        snprintf(msg, cap, "broker unreachable: %.200s", r->error[0] ? r->error : "no response");
    else if (r->status < 200 || r->status > 299)
        snprintf(msg, cap, "broker answered HTTP %ld", r->status);
    else if (r->truncated)
        snprintf(msg, cap, "broker answer too large (truncated)");
    else
        return false;
    return true;
}

static uint64_t start(rb_src *s, const char *method, const char *url, const char *body,
                      rd_http_cb cb, size_t max_body)
{
    static const char *const json_hdr[] = { "Content-Type: application/json",
                                            "Accept: application/json", NULL };
    rd_http_req req = {
        .method = method, .url = url, .body = body, .headers = json_hdr,
        .userpwd = s->userpwd, .cacert = s->hp.base.ctx.cfg->http.cacert,
        .timeout_ms = 8000, .connect_timeout_ms = 3000, .max_body = max_body,
        .insecure_ok = s->hp.base.ctx.cfg->http.insecure,
    };
    return http_start(s->hp.base.ctx.http, &req, cb, s);
}

/* ---- queue polling ------------------------------------------------------------------------- */

static void poll_page(rb_src *s);

static void publish_queues(rb_src *s)
{
    rd_model *m = s->hp.base.ctx.model;
    for (size_t i = 0; i < s->n_dlq; i++)
        free(s->dlq_names[i]);
    free(s->dlq_names);
    s->dlq_names = NULL;
    s->n_dlq = 0;
    long depth = 0;
    for (size_t i = 0; i < s->acc.n; i++) {
        const rd_queue *q = &s->acc.items[i];
        if (!q->is_dlq)
            continue;
        s->dlq_names = xrealloc(s->dlq_names, (s->n_dlq + 1) * sizeof *s->dlq_names);
        s->dlq_names[s->n_dlq++] = xstrdup(q->name);
        depth += q->depth > 0 ? q->depth : 0;
    }
    model_dlq_total(m, SRC_NAME, depth);
    model_set_queues(m, SRC_NAME, s->acc.items, s->acc.n);
    memset(&s->acc, 0, sizeof s->acc);
    http_poller_ok(&s->hp, clock_wall());
}

static void peek_next(http_poller *p);

/* The broker's version, once after the first good poll, for `redrive check`. */
static void on_overview(const rd_http_resp *r, void *ud)
{
    rb_src *s = ud;
    s->overview_req = 0;
    char msg[256];
    cJSON *o = http_problem(r, msg, sizeof msg) ? NULL
                                                : cJSON_ParseWithLength(r->body, r->body_len);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "rabbitmq_version");
    model_source_version(s->hp.base.ctx.model, SRC_NAME,
                         cJSON_IsString(v) ? v->valuestring : NULL);
    cJSON_Delete(o);
}

static void ask_overview(rb_src *s)
{
    if (s->overview_asked)
        return;
    s->overview_asked = true;
    char *url = xasprintf("%s/api/overview?columns=rabbitmq_version", s->url);
    s->overview_req = start(s, "GET", url, NULL, on_overview, 65536);
    free(url);
}

static void on_queues(const rd_http_resp *r, void *ud)
{
    rb_src *s = ud;
    s->poll_req = 0;
    char msg[256] = "";
    bool ok = !http_problem(r, msg, sizeof msg) &&
              rb_decode_queues(r->body, r->body_len, &s->show, &s->dlq, &s->acc, msg,
                               sizeof msg);
    if (!ok) {
        rb_queue_page_free(&s->acc);
        http_poller_fail(&s->hp, msg);
        http_poller_peek_drop(&s->hp);   /* nothing to peek: the source state says why */
        return;
    }
    if (s->acc.page_count > s->page && s->page < RB_MAX_PAGES) {
        s->page++;
        poll_page(s);
        return;
    }
    publish_queues(s);
    ask_overview(s);
    http_poller_round_done(&s->hp);
}

static void poll_page(rb_src *s)
{
    char *url = xasprintf("%s/api/queues/%s?page=%ld&page_size=%d&columns=name,messages,"
                          "messages_ready,messages_unacknowledged,consumers,arguments,"
                          "policy,effective_policy_definition,"
                          "message_stats.publish_details.rate,"
                          "message_stats.deliver_get_details.rate",
                          s->url, s->vhost, s->page, RB_PAGE_SIZE);
    s->poll_req = start(s, "GET", url, NULL, on_queues, (size_t)8 << 20);
    free(url);
    if (!s->poll_req) {
        rb_queue_page_free(&s->acc);
        http_poller_fail(&s->hp, http_why(s->hp.base.ctx.http));
    }
}

static rb_src *of(http_poller *p) { return p->base.impl; }

static void poll_now(http_poller *p)
{
    rb_src *s = of(p);
    if (s->setup_err[0]) {
        http_poller_fail(&s->hp, s->setup_err);
        return;
    }
    if (s->poll_req || s->secret)
        return;                      /* the previous poll is still running, or the
                                        password is still being resolved */
    rb_queue_page_free(&s->acc);
    s->page = 1;
    poll_page(s);
}

/* ---- DLQ peek (on demand only) --------------------------------------------------------------- */

static void on_peek(const rd_http_resp *r, void *ud)
{
    rb_src *s = ud;
    http_peek *k = &s->hp.peek;
    k->req = 0;
    char msg[256] = "";
    const char *q = s->dlq_names[k->at];
    if (http_problem(r, msg, sizeof msg) ||
        !rb_decode_messages(r->body, r->body_len, q, &k->got, &k->n_got, msg, sizeof msg))
        snprintf(k->err, sizeof k->err, "peek %.100s: %.140s", q, msg);
    k->at++;
    peek_next(&s->hp);
}

/* A RabbitMQ get always returns the head of the queue (requeued messages keep their
 * place), so "more" asks for a larger page from the head: 20, 40, ... up to 100
 * (peek_max_pages). */
static void peek_next(http_poller *p)
{
    rb_src *s = of(p);
    http_peek *k = &p->peek;
    size_t limit = s->n_dlq < RB_PEEK_QUEUES ? s->n_dlq : RB_PEEK_QUEUES;
    if (k->at >= limit) {
        http_poller_peek_end(p);
        return;
    }
    int count = RB_PEEK_COUNT * (k->pages > 0 ? k->pages : 1);
    char *qenc = url_escape_path(s->dlq_names[k->at]);
    char *url = xasprintf("%s/api/queues/%s/%s/get", s->url, s->vhost, qenc);
    char *body = xasprintf("{\"count\":%d,\"ackmode\":\"ack_requeue_true\","
                           "\"encoding\":\"auto\",\"truncate\":50000}", count);
    k->req = start(s, "POST", url, body, on_peek, (size_t)16 << 20);
    free(qenc);
    free(url);
    free(body);
    if (!k->req) {
        snprintf(k->err, sizeof k->err, "peek: request could not be started");
        http_poller_peek_end(p);
    }
}

/* ---- the poller's hooks ------------------------------------------------------------------- */

/* The broker is down (no poll running, none done): the source state says why. */
static bool hook_peek_hopeless(const http_poller *p)
{
    const rb_src *s = p->base.impl;
    return p->settled && !s->poll_req;
}

static void hook_start(http_poller *p)
{
    double every = fmax(p->base.ctx.cfg->poll_s, RB_MIN_POLL_S);
    model_source_every(p->base.ctx.model, SRC_NAME, every);   /* its freshness window */
    start_auth(of(p));
}

static void hook_clear(http_poller *p)
{
    rb_src *s = of(p);
    secret_cancel(s->secret);
    if (s->poll_req)
        http_cancel(p->base.ctx.http, s->poll_req);
    if (s->overview_req)
        http_cancel(p->base.ctx.http, s->overview_req);
    rb_queue_page_free(&s->acc);
    for (size_t i = 0; i < s->n_dlq; i++)
        free(s->dlq_names[i]);
    free(s->dlq_names);
    rb_globs_free(&s->show);
    rb_globs_free(&s->dlq);
    secret_free(s->userpwd);
    free(s->url);
    free(s->vhost);
}

static const http_poller_kind rabbit_kind = {
    .name = SRC_NAME, .size = sizeof(rb_src), .at = offsetof(rb_src, hp),
    .min_poll_s = RB_MIN_POLL_S, .peek_max_pages = RB_PEEK_MAX / RB_PEEK_COUNT,
    .poll = poll_now, .start = hook_start, .peek_next = peek_next,
    .peek_hopeless = hook_peek_hopeless, .clear = hook_clear,
};

static void on_password(bool ok, const char *pw, const char *why, void *ud)
{
    rb_src *s = ud;
    s->secret = NULL;
    const rd_system_cfg *cfg = s->hp.base.ctx.cfg;
    if (!ok) {
        char at[160];
        config_key_where(cfg, "broker_password", at, sizeof at);
        snprintf(s->setup_err, sizeof s->setup_err, "%s: %s", at, why);
        http_poller_peek_drop(&s->hp);   /* nothing to peek: the source state says why */
        http_poller_fail(&s->hp, s->setup_err);
        return;
    }
    s->userpwd = xasprintf("%s:%s", cfg->broker.user, pw);
    poll_now(&s->hp);
}

/* Without broker_user there is no auth (the broker will say 401); without a password
 * the user has an empty one. */
static void start_auth(rb_src *s)
{
    const rd_system_cfg *cfg = s->hp.base.ctx.cfg;
    if (s->setup_err[0] || s->userpwd || s->secret || !cfg->broker.user || !*cfg->broker.user)
        return;
    if (!cfg->broker.password || !*cfg->broker.password) {
        s->userpwd = xasprintf("%s:", cfg->broker.user);
        return;
    }
    s->secret = secret_resolve(s->hp.base.ctx.base, cfg->broker.password, 0,
                               RB_SECRET_TIMEOUT_S, on_password, s);
}

rd_source *rabbit_source_new(const rd_source_ctx *ctx)
{
    const rd_system_cfg *cfg = ctx ? ctx->cfg : NULL;
    rb_src *s = http_poller_new(ctx, cfg ? cfg->broker.url : NULL, &rabbit_kind);
    if (!s)
        return NULL;
    s->url = xstrdup(cfg->broker.url);
    for (size_t n = strlen(s->url); n > 0 && s->url[n - 1] == '/'; n--)
        s->url[n - 1] = '\0';
    s->vhost = url_escape_path(cfg->broker.vhost && *cfg->broker.vhost ? cfg->broker.vhost
                                                                        : "/");
    rb_globs_parse(&s->show, cfg->broker.queues);
    rb_globs_parse(&s->dlq, cfg->broker.dlq);
    if (!url_is_http(s->url) && !url_is_https(s->url))
        snprintf(s->setup_err, sizeof s->setup_err, "broker must be an http(s):// URL");
    return &s->hp.base;
}
