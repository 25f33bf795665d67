/*
 * Worker /health probes (tasker: workers have no table; cfg->workers lists their base
 * URLs). Every poll: GET {url}/health with a 3 s deadline, parsed loosely (a status,
 * and whatever of queue depth / in-flight / capacity / failures it reports).
 * A worker is identified by host:port. heartbeat_at = time of the last good answer.
 *   answered 2xx with JSON  → status "active" (reported health from "status")
 *   answered non-2xx JSON   → status "error" (alive, but says it is not well)
 *   answered garbage        → status "error", health unknown ("unreadable /health")
 *   no answer               → status "offline", health unhealthy ("unreachable: ...")
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/health.h"
#include "../core/textutil.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/http.h"
#include "../io/url.h"
#include "http_poller.h"
#include "probe_health.h"

enum { PR_TIMEOUT_MS = 3000, PR_CONNECT_MS = 2000, PR_MAX_BODY = 64 << 10,
       PR_MAX_TARGETS = 256 };
static const char SRC_NAME[] = "workers-http";

typedef struct pr_target {
    struct pr_src *s;
    char *url, *health_url, *id;
    uint64_t req;
    bool answered;                   /* at least once */
    int kind;                        /* 0 none yet, 1 ok, 2 non-2xx, 3 garbage, 4 unreachable */
    double heartbeat_at;
    pr_metrics m;
    char note[160];
} pr_target;

typedef struct pr_src {
    http_poller hp;                  /* its rd_source is hp.base */
    pr_target *t;
    size_t n;
} pr_src;

/* ---- answers ------------------------------------------------------------------------------ */

static void on_health(const rd_http_resp *r, void *ud);

static void target_answer(pr_target *t, const rd_http_resp *r, double now)
{
    t->answered = true;
    t->note[0] = '\0';
    if (r->status == 0) {
        t->kind = 4;
        snprintf(t->note, sizeof t->note, "unreachable: %.140s",
                 r->timed_out ? "no answer within 3 s" : r->error[0] ? r->error : "no response");
        return;
    }
    if (!r->body || r->truncated || !probe_health_decode(r->body, r->body_len, &t->m)) {
        t->kind = 3;
        snprintf(t->note, sizeof t->note, "unreadable /health response (HTTP %ld%s)",
                 r->status, r->truncated ? ", too large" : "");
    } else {
        t->kind = r->status >= 200 && r->status <= 299 ? 1 : 2;
        t->heartbeat_at = now;
        if (t->kind == 2)
            snprintf(t->note, sizeof t->note, "/health answered HTTP %ld", r->status);
    }
}

static void worker_of(const pr_src *s, const pr_target *t, double now, rd_worker *w)
{
    static const char *const status[] = { "unknown", "active", "error", "error", "offline" };
    memset(w, 0, sizeof *w);
    w->id = xstrdup(t->id);
    w->name = xstrdup(t->url);
    w->status = xstrdup(status[t->kind]);
    w->reported_health = t->m.status[0] ? xstrdup(t->m.status) : NULL;
    w->heartbeat_at = t->heartbeat_at;
    w->queue_depth = t->m.depth;
    w->in_flight = t->m.in_flight;
    w->capacity = t->m.capacity;
    w->failure_rate = t->m.rate;
    w->consecutive_failures = t->m.failures;
    w->has_metrics = w->queue_depth >= 0 || w->failure_rate >= 0 || w->consecutive_failures >= 0;
    health_classify(&s->hp.base.ctx.cfg->health, w, now);
    if (t->kind == 4) {
        w->health = RD_HEALTH_UNHEALTHY;
        snprintf(w->health_reason, sizeof w->health_reason, "%.90s", t->note);
    } else if (t->kind == 3) {
        w->health = RD_HEALTH_UNKNOWN;
        snprintf(w->health_reason, sizeof w->health_reason, "%.90s", t->note);
    } else if (t->kind == 2 && w->health == RD_HEALTH_HEALTHY) {
        w->health = RD_HEALTH_DEGRADED;
        snprintf(w->health_reason, sizeof w->health_reason, "%.90s", t->note);
    }
}

static pr_src *of(http_poller *p) { return p->base.impl; }

static void publish(http_poller *p)
{
    pr_src *s = of(p);
    double now = clock_wall();
    rd_worker *w = xcalloc(s->n + 1, sizeof *w);
    bool all = true;
    for (size_t i = 0; i < s->n; i++) {
        pr_target *t = &s->t[i];
        all = all && t->answered;
        if (!t->answered) {
            pr_target tmp = *t;      /* not probed yet: unknown */
            tmp.kind = 0;
            worker_of(s, &tmp, now, &w[i]);
        } else {
            worker_of(s, t, now, &w[i]);
        }
    }
    model_set_workers(s->hp.base.ctx.model, w, s->n);
    if (all)
        http_poller_ok(&s->hp, now);
    http_poller_changed(&s->hp);
}

static void on_health(const rd_http_resp *r, void *ud)
{
    pr_target *t = ud;
    t->req = 0;
    target_answer(t, r, clock_wall());
    publish(&t->s->hp);
}

static void probe_all(http_poller *p)
{
    pr_src *s = of(p);
    for (size_t i = 0; i < s->n; i++) {
        pr_target *t = &s->t[i];
        if (t->req)
            continue;                /* still waiting for the previous probe */
        static const char *const hdr[] = { "Accept: application/json", NULL };
        rd_http_req req = { .method = "GET", .url = t->health_url, .headers = hdr,
                            .cacert = s->hp.base.ctx.cfg->http.cacert, .timeout_ms = PR_TIMEOUT_MS,
                            .connect_timeout_ms = PR_CONNECT_MS, .max_body = PR_MAX_BODY };
        t->req = http_start(s->hp.base.ctx.http, &req, on_health, t);
        if (!t->req) {
            rd_http_resp fake = { .status = 0 };
            snprintf(fake.error, sizeof fake.error, "request could not be started");
            target_answer(t, &fake, clock_wall());
        }
    }
}

/* ---- the poller's hooks ------------------------------------------------------------------- */

static void hook_clear(http_poller *p)
{
    pr_src *s = of(p);
    http_poller_cancel_each(p, s->t, s->n, sizeof *s->t, offsetof(pr_target, req));
    for (size_t i = 0; i < s->n; i++) {
        free(s->t[i].url);
        free(s->t[i].health_url);
        free(s->t[i].id);
    }
    free(s->t);
}

/* It starts by publishing the configured workers, status unknown. */
static const http_poller_kind probe_kind = {
    .name = SRC_NAME, .size = sizeof(pr_src), .at = offsetof(pr_src, hp), .min_poll_s = 1,
    .poll = probe_all, .start = publish, .clear = hook_clear,
};

static void add_target(pr_src *s, const char *url, size_t n)
{
    if (s->n >= PR_MAX_TARGETS)
        return;
    pr_target *t = &s->t[s->n++];
    memset(t, 0, sizeof *t);
    t->s = s;
    while (n > 0 && url[n - 1] == '/')
        n--;
    t->url = xstrndup(url, n);
    t->health_url = url_join(t->url, "/health");
    t->id = url_host_port(t->url);   /* a worker is its host:port */
    if (!t->id)
        t->id = xstrdup(t->url);     /* unparsable: the request will say why */
    t->m.depth = t->m.in_flight = t->m.capacity = t->m.failures = -1;
    t->m.rate = -1;
}

rd_source *probe_source_new(const rd_source_ctx *ctx)
{
    const rd_system_cfg *cfg = ctx ? ctx->cfg : NULL;
    pr_src *s = http_poller_new(ctx, cfg ? cfg->workers : NULL, &probe_kind);
    if (!s)
        return NULL;
    s->t = xcalloc(PR_MAX_TARGETS, sizeof *s->t);
    text_span sp[PR_MAX_TARGETS];
    size_t n = text_split_list(cfg->workers, TEXT_LIST_WORDS, sp, PR_MAX_TARGETS);
    for (size_t i = 0; i < n && i < PR_MAX_TARGETS; i++)
        add_target(s, sp[i].s, sp[i].len);
    return &s->hp.base;
}
