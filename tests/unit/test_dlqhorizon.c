/* When each DLQ's oldest dead letter is deleted (core/dlqhorizon.h): one row per rule and
 * per boundary, the whole basis and the screen's text compared. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dlqhorizon.h"
#include "model_tables.h"
#include "xalloc.h"

#define NOW 1767225600.0

/* One DLQ as a source publishes it, and what its peek read (owner's entries). */
typedef struct qcase {
    const char *name;
    const char *owner;          /* "rabbitmq", "sqs" */
    long depth, ttl_ms, max_length, expires_ms, retention_s;
    double publish_rate;
    bool rejects;
    const char *ttl_from, *limits_note;
    int n_entries;              /* -1: no peek at all */
    double entry_t[3];          /* rabbit: last_death_at; sqs: sent_at (0 none) */
    const char *expiration;     /* on the first entry */
    bool peek_off;
    /* expected */
    double in_s, within_s;
    bool est;
    const char *basis, *text;
} qcase;

static const qcase cases[] = {
    {"ttl.dlq", "rabbitmq", 4, 3600000, -1, -1, 0, -1, false, NULL, NULL, 2, {NOW - 600, NOW - 2400},
     NULL, false, 1200, -1, false, "message-ttl 1h from x-death",
     "oldest dead letter expires in 20m (message-ttl 1h from x-death)"},
    {"pol.dlq", "rabbitmq", 1, 600000, -1, -1, 0, -1, false, "policy dlq-ttl", NULL, 1, {NOW - 60},
     NULL, false, 540, -1, false, "message-ttl 10m (policy dlq-ttl) from x-death",
     "oldest dead letter expires in 9m (message-ttl 10m (policy dlq-ttl) from x-death)"},
    /* past due: the broker deletes it now */
    {"due.dlq", "rabbitmq", 1, 1000, -1, -1, 0, -1, false, NULL, NULL, 1, {NOW - 5}, NULL, false,
     0, -1, false, "message-ttl 1s from x-death", "oldest dead letter expires now (message-ttl 1s from x-death)"},
    {"nopeek.dlq", "rabbitmq", 3, 5400000, -1, -1, 0, -1, false, NULL, NULL, -1, {0}, NULL, false,
     -1, 5400, false, "message-ttl 1h30m: unknown without a peek",
     "oldest dead letter expires within 2h (message-ttl 1h30m: unknown without a peek)"},
    {"ro.dlq", "rabbitmq", 3, 3600000, -1, -1, 0, -1, false, NULL, NULL, -1, {0}, NULL, true,
     -1, 3600, false, "message-ttl 1h: unknown without a peek, off in read-only",
     "oldest dead letter expires within 1h (message-ttl 1h: unknown without a peek, off in read-only)"},
    {"permsg.dlq", "rabbitmq", 2, 3600000, -1, -1, 0, -1, false, NULL, NULL, 2, {NOW - 60, NOW - 30},
     "60000", false, -1, 3600, false,
     "message-ttl 1h; a TTL set per message (expiration): per message, unknown",
     "oldest dead letter expires within 1h (message-ttl 1h; a TTL set per message (expiration): per message, unknown)"},
    {"permsg2.dlq", "rabbitmq", 2, -1, -1, -1, 0, -1, false, NULL, NULL, 1, {NOW - 60}, "60000", false,
     -1, -1, false, "a TTL set per message (expiration): per message, unknown",
     "a TTL set per message (expiration): per message, unknown"},
    {"noxdeath.dlq", "rabbitmq", 2, 3600000, -1, -1, 0, -1, false, NULL, NULL, 1, {0}, NULL, false,
     -1, 3600, false, "message-ttl 1h: the oldest message has no x-death time",
     "oldest dead letter expires within 1h (message-ttl 1h: the oldest message has no x-death time)"},
    /* max-length 100 holding 40 at 1 dead letter a second: the 61st pushes the oldest out */
    {"len.dlq", "rabbitmq", 40, -1, 100, -1, 0, 1, false, NULL, NULL, -1, {0}, NULL, false,
     61, -1, true, "max-length 100 drop-head at 60/min",
     "oldest dead letter expires in ~1m (max-length 100 drop-head at 60/min)"},
    {"full.dlq", "rabbitmq", 100, -1, 100, -1, 0, -1, false, NULL, NULL, -1, {0}, NULL, false,
     -1, -1, false, "max-length 100 drop-head: full, the next dead letter pushes out the oldest",
     "max-length 100 drop-head: full, the next dead letter pushes out the oldest"},
    {"room.dlq", "rabbitmq", 40, -1, 100, -1, 0, -1, false, NULL, NULL, -1, {0}, NULL, false,
     -1, -1, false, "max-length 100 drop-head: 60 more dead letters push out the oldest",
     "max-length 100 drop-head: 60 more dead letters push out the oldest"},
    {"rej.dlq", "rabbitmq", 40, -1, 100, -1, 0, 1, true, NULL, NULL, -1, {0}, NULL, false,
     -1, -1, false, "max-length 100 rejects new dead letters: kept until consumed",
     "max-length 100 rejects new dead letters: kept until consumed"},
    {"exp.dlq", "rabbitmq", 5, -1, -1, 7200000, 0, -1, false, NULL, NULL, -1, {0}, NULL, false,
     -1, 7200, false, "the queue expires after 2h unused",
     "oldest dead letter expires within 2h (the queue expires after 2h unused)"},
    /* the exact figure (20m) is later than the bound (10m): only the bound is known */
    {"both.dlq", "rabbitmq", 1, 3600000, -1, 600000, 0, -1, false, NULL, NULL, 1, {NOW - 2400}, NULL,
     false, -1, 600, false, "the queue expires after 10m unused",
     "oldest dead letter expires within 10m (the queue expires after 10m unused)"},
    {"plain.dlq", "rabbitmq", 5, -1, -1, -1, 0, -1, false, NULL, NULL, -1, {0}, NULL, false,
     -1, -1, false, "no message-ttl, max-length or expires: kept until consumed",
     "no message-ttl, max-length or expires: kept until consumed"},
    {"hidden.dlq", "rabbitmq", 5, 3600000, -1, -1, 0, -1, false, NULL,
     "the broker does not show the queue's arguments", 1, {NOW - 60}, NULL, false, -1, -1, false,
     "the broker does not show the queue's arguments: unknown",
     "the broker does not show the queue's arguments: unknown"},
    {"empty.dlq", "rabbitmq", 0, 3600000, -1, -1, 0, -1, false, NULL, NULL, -1, {0}, NULL, false,
     -1, -1, false, "empty", "empty"},
    /* SQS: retention counted from the first enqueue (SentTimestamp) */
    {"jobs-dlq", "sqs", 2, -1, -1, -1, 345600, -1, false, NULL, NULL, 2, {NOW - 86400, NOW - 60}, NULL,
     false, 259200, -1, false, "retention 4d from first enqueue",
     "oldest dead letter expires in 3d (retention 4d from first enqueue)"},
    {"part-dlq", "sqs", 5, -1, -1, -1, 3600, -1, false, NULL, NULL, 2, {NOW - 600, NOW - 60}, NULL,
     false, -1, 3000, false, "retention 1h from first enqueue, the oldest of 2 peeked",
     "oldest dead letter expires within 50m (retention 1h from first enqueue, the oldest of 2 peeked)"},
    {"nopeek-dlq", "sqs", 5, -1, -1, -1, 345600, -1, false, NULL, NULL, -1, {0}, NULL, false,
     -1, 345600, false, "retention 4d from first enqueue: unknown without a peek",
     "oldest dead letter expires within 4d (retention 4d from first enqueue: unknown without a peek)"},
    {"jobs-dlq.fifo", "sqs", 5, -1, -1, -1, 345600, -1, false, NULL, NULL, 1, {NOW - 60}, NULL, false,
     -1, 345600, false, "retention 4d from the move to the DLQ (FIFO): the move time is unknown",
     "oldest dead letter expires within 4d (retention 4d from the move to the DLQ (FIFO): the move time is unknown)"},
    {"unk-dlq", "sqs", 5, -1, -1, -1, 1, -1, false, NULL, NULL, -1, {0}, NULL, false,
     -1, -1, false, "retention period unknown", "retention period unknown"},
};

static rd_model *model_of(const qcase *c)
{
    rd_model *m = model_new();
    rd_queue *q = xcalloc(1, sizeof *q);
    q->name = xstrdup(c->name);
    q->depth = q->ready = c->depth;
    q->unacked = 0;
    q->is_dlq = true;
    q->ttl_ms = c->ttl_ms;
    q->max_length = c->max_length;
    q->expires_ms = c->expires_ms;
    q->retention_s = c->retention_s > 0 ? c->retention_s : 0;
    q->publish_rate = c->publish_rate;
    q->deliver_rate = -1;
    q->overflow_rejects = c->rejects;
    q->ttl_from = c->ttl_from ? xstrdup(c->ttl_from) : NULL;
    q->limits_note = c->limits_note ? xstrdup(c->limits_note) : NULL;
    model_set_queues(m, c->owner, q, 1);
    if (c->n_entries >= 0) {
        rd_dlq_entry *e = xcalloc((size_t)c->n_entries + 1, sizeof *e);
        bool sqs = strcmp(c->owner, "sqs") == 0;
        for (int i = 0; i < c->n_entries; i++) {
            e[i].id = xasprintf("m%d", i);
            e[i].queue = xstrdup(c->name);
            e[i].count = 1;
            if (sqs)
                e[i].sent_at = c->entry_t[i];
            else
                e[i].first_death_at = e[i].last_death_at = c->entry_t[i];
        }
        if (c->expiration && c->n_entries)
            e[0].expiration = xstrdup(c->expiration);
        model_dlq_set(m, c->owner, e, (size_t)c->n_entries);
    }
    model_dlq_peek_off(m, c->peek_off);
    return m;
}

static void test_rules(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const qcase *c = &cases[i];
        rd_model *m = model_of(c);
        rd_horizon *h;
        size_t n = dlq_horizons(m, NOW, &h);
        CHECK_MSG(n == 1, c->name);
        if (n == 1) {
            CHECK_STR(h[0].queue, c->name);
            CHECK_STR(h[0].source, c->owner);
            CHECK_MSG(h[0].in_s == c->in_s, c->name);
            CHECK_MSG(h[0].within_s == c->within_s, c->name);
            CHECK_MSG(h[0].estimated == c->est, c->name);
            CHECK_STR(h[0].basis, c->basis);
            /* kept: nothing deletes them (empty, kept until consumed), nothing unknown to say */
            bool kept = strcmp(c->basis, "empty") == 0 || strstr(c->basis, "kept until consumed");
            CHECK_MSG(h[0].kept == kept, c->name);
            char t[400];
            horizon_text(&h[0], t, sizeof t);
            CHECK_STR(t, c->text);
        }
        free(h);
        model_free(m);
    }
}

/* The stores' DLQs have no retention rule; the soonest figure is picked across DLQs. */
static void test_store_and_soonest(void)
{
    rd_model *m = model_new();
    rd_dlq_entry *e = xcalloc(2, sizeof *e);
    e[0].id = xstrdup("d1");
    e[0].queue = xstrdup("tasks_dlq");
    model_dlq_set(m, "postgresql", e, 1);
    model_dlq_total(m, "postgresql", 7);
    rd_queue *q = xcalloc(3, sizeof *q);
    const char *names[] = {"a.dlq", "b.dlq", "c.dlq"};
    long ttl[] = {-1, 7200000, 3600000};
    for (int i = 0; i < 3; i++) {
        q[i].name = xstrdup(names[i]);
        q[i].depth = 3;
        q[i].is_dlq = true;
        q[i].ttl_ms = ttl[i];
        q[i].publish_rate = -1;
    }
    model_set_queues(m, "rabbitmq", q, 3);
    model_dlq_total(m, "rabbitmq", 9);
    rd_horizon *h;
    size_t n = dlq_horizons(m, NOW, &h);
    CHECK(n == 4);
    if (n == 4) {
        CHECK_STR(h[3].queue, "tasks_dlq");
        CHECK_STR(h[3].source, "postgresql");
        CHECK(h[3].depth == 7 && h[3].in_s == -1 && h[3].within_s == -1);
        CHECK_STR(h[3].basis, "no retention rule: kept until resolved");
        CHECK(h[3].kept && h[0].kept && !h[2].kept);   /* c.dlq: a TTL bounds it */
        const rd_horizon *s = dlq_horizon_soonest(h, n);
        CHECK(s == &h[2]);
        bool bound = false;
        CHECK(horizon_figure(s, &bound) == 3600 && bound);
    }
    CHECK(dlq_horizon_soonest(h, 1) == NULL);      /* a.dlq: no figure */
    free(h);
    model_free(m);
}

/* A source that no longer answers: its figure stands, said to be as it last answered. */
static void test_stale(void)
{
    rd_model *m = model_of(&cases[0]);
    model_source_ok(m, "rabbitmq", NOW - 120);
    model_source_fail(m, "rabbitmq", "connection refused", NOW - 60);
    rd_horizon *h;
    size_t n = dlq_horizons(m, NOW, &h);
    CHECK(n == 1 && h[0].in_s == 1200);
    CHECK_STR(n ? h[0].basis : NULL, "message-ttl 1h from x-death (rabbitmq stale: as it last answered)");
    free(h);
    model_free(m);
}

/* An x-death counted again keeps its first time: the figure may be early, said so. */
static void test_counted_again(void)
{
    rd_model *m2 = model_of(&cases[0]);
    rd_dlq_part *p = &m2->dlq_parts.items[0];
    rd_dlq_entry *e = xcalloc(p->n, sizeof *e);
    for (size_t i = 0; i < p->n; i++) {
        record_copy(&dlq_record, &e[i], &p->items[i]);
        e[i].count = 3;
    }
    model_dlq_set(m2, "rabbitmq", e, p->n);
    rd_horizon *h;
    size_t n = dlq_horizons(m2, NOW, &h);
    CHECK(n == 1 && h[0].in_s == 1200);
    CHECK_STR(n ? h[0].basis : NULL, "message-ttl 1h from x-death, dead-lettered 3 times: from the "
                                     "first, it may stay longer");
    free(h);
    model_free(m2);
}

static void test_dur(void)
{
    static const struct { double s; const char *want; } d[] = {
        {0.5, "500ms"}, {1, "1s"}, {60, "1m"}, {90, "1m30s"}, {3600, "1h"}, {5400, "1h30m"},
        {3661, "3661s"}, {86400, "1d"}, {345600, "4d"}, {1.5, "1500ms"},
    };
    for (size_t i = 0; i < sizeof d / sizeof *d; i++) {
        char out[32];
        horizon_dur(d[i].s, out, sizeof out);
        CHECK_STR(out, d[i].want);
    }
}

int main(void)
{
    test_rules();
    test_store_and_soonest();
    test_stale();
    test_counted_again();
    test_dur();
    return check_done("dlqhorizon");
}
