/*
 * The source set of one system: the store (PostgreSQL or Redis, by the profile), the
 * broker (RabbitMQ management API, when configured) and the worker /health probes (when
 * configured). Requests go to the sources that implement them.
 */
#include "sources.h"

#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"
#include "redis_url.h"
#include "../io/loop.h"
#include "source.h"

enum { MAX_SOURCES = 5 };

struct rd_sources {
    rd_source_ctx ctx;
    rd_source *src[MAX_SOURCES];
    size_t n;
    rd_source *store, *broker, *sqs;
    bool read_only;            /* no peek with side effects (sources_set_read_only) */
};

static void add(rd_sources *s, rd_source *src)
{
    if (src && s->n < MAX_SOURCES)
        s->src[s->n++] = src;
}

rd_sources *sources_new(rd_loop *base, rd_http *http, const rd_system_cfg *cfg,
                        const rd_profile *prof, rd_model *model,
                        rd_change_cb on_change, void *ud)
{
    rd_sources *s = xcalloc(1, sizeof *s);
    s->ctx = (rd_source_ctx){ .base = base, .http = http, .cfg = cfg, .prof = prof,
                              .model = model, .on_change = on_change, .ud = ud };
    bool redis = prof && prof->store && strcmp(prof->store, "redis") == 0;
    s->store = redis ? redis_source_new(&s->ctx) : pg_source_new(&s->ctx);
    add(s, s->store);
    if (cfg && cfg->broker.url && *cfg->broker.url && http) {
        s->broker = rabbit_source_new(&s->ctx);
        add(s, s->broker);
    }
    if (cfg && cfg->sqs.queue_url && *cfg->sqs.queue_url && http) {
        s->sqs = sqs_source_new(&s->ctx);      /* alakai's real queue and DLQ */
        add(s, s->sqs);
    }
    if (cfg && cfg->workers && *cfg->workers && http)
        add(s, probe_source_new(&s->ctx));
    return s;
}

void sources_free(rd_sources *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        s->src[i]->ops->free(s->src[i]);
    free(s);
}

const rd_profile *sources_profile(const rd_sources *s)
{
    if (s->store && s->store->ops->profile)
        return s->store->ops->profile(s->store);
    return s->ctx.prof;
}

void sources_start(rd_sources *s)
{
    for (size_t i = 0; i < s->n; i++)
        s->src[i]->ops->start(s->src[i]);
}

void sources_refresh(rd_sources *s)
{
    for (size_t i = 0; i < s->n; i++)
        s->src[i]->ops->refresh(s->src[i]);
}

double sources_interval(const rd_sources *s, double factor)
{
    return (s->ctx.cfg && s->ctx.cfg->poll_s > 0 ? s->ctx.cfg->poll_s : 2.0) * factor;
}

void sources_set_pace(rd_sources *s, double factor)
{
    double every = sources_interval(s, factor);
    for (size_t i = 0; i < s->n; i++)
        if (s->src[i]->ops->set_poll)
            s->src[i]->ops->set_poll(s->src[i], every);
}

void sources_set_filter(rd_sources *s, const rd_exec_filter *f)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->src[i]->ops->set_filter)
            s->src[i]->ops->set_filter(s->src[i], f);
}

void sources_page(rd_sources *s, int dir)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->src[i]->ops->page)
            s->src[i]->ops->page(s->src[i], dir);
}

void sources_set_interest(rd_sources *s, unsigned panels)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->src[i]->ops->set_interest)
            s->src[i]->ops->set_interest(s->src[i], panels);
}

void sources_jump(rd_sources *s, const char *id)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->src[i]->ops->jump)
            s->src[i]->ops->jump(s->src[i], id);
}

void sources_request_worker(rd_sources *s, const char *id)
{
    bool asked = false;
    for (size_t i = 0; i < s->n; i++)
        if (s->src[i]->ops->worker) {
            s->src[i]->ops->worker(s->src[i], id);
            asked = true;
        }
    if (!asked && s->n)
        model_set_running(s->src[0]->ctx.model, id, NULL, 0, false);
}

void sources_request_chain(rd_sources *s, const char *id)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->src[i]->ops->chain)
            s->src[i]->ops->chain(s->src[i], id);
}

void sources_request_detail(rd_sources *s, const char *id)
{
    bool asked = false;
    for (size_t i = 0; i < s->n; i++)
        if (s->src[i]->ops->detail) {
            s->src[i]->ops->detail(s->src[i], id);
            asked = true;
        }
    if (!asked && s->n)
        model_set_detail(s->src[0]->ctx.model, id, NULL, "no source of this system reads one execution in full");
}

void sources_dlq_page(rd_sources *s, int dir)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->src[i]->ops->dlq_page)
            s->src[i]->ops->dlq_page(s->src[i], dir);
}

void sources_dlq_order(rd_sources *s, bool oldest, const char *text)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->src[i]->ops->dlq_order)
            s->src[i]->ops->dlq_order(s->src[i], oldest, text);
}

/* The profile may say where its DLQ lives (dlq_source = store, broker or both); by
 * default every source that can peek is asked. A configured SQS DLQ is always asked: it
 * is the system's real dead-letter queue. */
void sources_set_read_only(rd_sources *s, bool read_only)
{
    s->read_only = read_only;
}

/* Read-only skips the peeks that change the queue: a RabbitMQ get requeues the messages
 * (redelivered), an SQS receive raises their receive count. A store's DLQ is a query. */
void sources_peek_dlq(rd_sources *s, bool more)
{
    bool off = false;
    for (size_t i = 0; i < s->n; i++) {
        rd_source *src = s->src[i];
        if (!src->ops->peek_dlq)
            continue;
        if (s->read_only && (src == s->sqs || src == s->broker)) {
            off = true;
            continue;
        }
        if (src == s->sqs) {
            src->ops->peek_dlq(src, more);
            continue;
        }
        if ((src == s->store && !profile_dlq_from(s->ctx.prof, "store")) ||
            (src == s->broker && !profile_dlq_from(s->ctx.prof, "broker")))
            continue;
        src->ops->peek_dlq(src, more);
    }
    model_dlq_peek_off(s->ctx.model, off);
}

bool sources_request_groups(rd_sources *s, double window_s, long cap)
{
    bool asked = false;
    for (size_t i = 0; i < s->n; i++)
        if (s->src[i]->ops->groups) {
            s->src[i]->ops->groups(s->src[i], window_s, cap);
            asked = true;
        }
    return asked;
}

bool sources_settled(const rd_sources *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (!s->src[i]->ops->settled(s->src[i]))
            return false;
    return true;
}

bool sources_idle(const rd_sources *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->src[i]->ops->idle && !s->src[i]->ops->idle(s->src[i]))
            return false;
    return true;
}

bool sources_check_url(const char *store, const char *url, char *why, size_t cap)
{
    if (store && strcmp(store, "redis") == 0)
        return redis_url_check_list(url, false, why, cap);
    return true;
}
