/* PostgreSQL rows → model rows (sources/pg_rows.c), on results built with libpq's own
 * constructors. Byte 0 picks the query kind (executions, workers, queues, DLQ, counts)
 * and the retry semantics; byte 1 the number of columns, then one byte per column picks
 * its name (standard names, repeats possible); the rest are the values, separated by
 * 0x1f, a row every ncols values, "\x1a" alone for NULL. Whatever the values, every
 * string is capped, numbers are in range or unknown, rows without an id are left out,
 * times are 0 or plausible, a worker's rate is -1 or 0..1, and an execution has a
 * fingerprint exactly when it has an error. */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "../../src/core/health.h"
#include "../../src/sources/pg_rows.h"
#include "fuzz.h"

static const char *const names[] = {
    "id", "parent_id", "name", "status", "chain_root", "retry_of", "reason", "error",
    "error_json", "worker", "created_at", "updated_at", "finished_at", "retry_count",
    "max_retries", "retry_at", "attempts", "max_attempts", "retryable", "last_attempted_at",
    "backoff_request_seconds", "retry_delay", "retry_policy", "superseded", "attempt",
    "reported_health", "tags", "tags_json", "heartbeat_at", "queue_depth", "in_flight",
    "capacity", "consecutive_failures", "failure_rate", "total_executions",
    "failed_executions", "depth", "ready", "unacked", "consumers", "is_dlq",
    "dead_letter_exchange", "ttl_ms", "queue", "execution_id", "count", "origin_queue",
    "first_death_at", "last_death_at", "payload", "estimated", "capped",
};
enum { NNAMES = sizeof names / sizeof *names, MAX_COLS = 16, MAX_ROWS = 64 };

static void capped(const char *s, size_t cap)
{
    FUZZ_ASSERT(!s || strlen(s) <= cap);
}

static void lower(const char *s)
{
    for (; s && *s; s++)
        FUZZ_ASSERT(!isupper((unsigned char)*s));
}

static void time_ok(double t)
{
    FUZZ_ASSERT(t == 0 || (t > 0 && t <= 1e11));
}

static void check_exec(const rd_execution *e)
{
    FUZZ_ASSERT(e->id && *e->id);
    capped(e->id, PG_CAP_ID);
    capped(e->parent_id, PG_CAP_ID);
    capped(e->name, PG_CAP_NAME);
    capped(e->status, 64);
    lower(e->status);
    capped(e->reason, PG_CAP_NAME);
    capped(e->error, PG_CAP_ERROR);
    FUZZ_ASSERT(!e->chain_root || (*e->chain_root && strcmp(e->chain_root, e->id) != 0));
    FUZZ_ASSERT((e->fingerprint != NULL) == (e->error && *e->error));
    FUZZ_ASSERT(e->attempt >= -1 && e->attempt <= 1000001);
    FUZZ_ASSERT(e->max_attempts >= -1 && e->max_attempts <= 1000001);
    time_ok(e->created_at);
    time_ok(e->updated_at);
    time_ok(e->finished_at);
    FUZZ_ASSERT(isfinite(e->next_retry_min) && isfinite(e->next_retry_max));
    FUZZ_ASSERT(e->next_retry_min <= e->next_retry_max);
    FUZZ_ASSERT(memchr(e->elig.why, '\0', sizeof e->elig.why));
}

static void check_worker(const rd_worker *w)
{
    FUZZ_ASSERT(w->id && *w->id);
    capped(w->id, PG_CAP_ID);
    capped(w->name, PG_CAP_NAME);
    lower(w->status);
    lower(w->reported_health);
    capped(w->tags, 2 * PG_CAP_NAME + 1);
    time_ok(w->heartbeat_at);
    FUZZ_ASSERT(w->queue_depth >= -1 && w->in_flight >= -1 && w->capacity >= -1 &&
                w->consecutive_failures >= -1);
    FUZZ_ASSERT(w->failure_rate == -1 || (w->failure_rate >= 0 && w->failure_rate <= 1));
    FUZZ_ASSERT(memchr(w->health_reason, '\0', sizeof w->health_reason));
}

static void check_queue(const rd_queue *q)
{
    FUZZ_ASSERT(q->name);
    capped(q->name, PG_CAP_NAME);
    capped(q->dead_letter_exchange, PG_CAP_NAME);
    FUZZ_ASSERT(q->depth >= -1 && q->ready >= -1 && q->unacked >= -1 && q->consumers >= -1 &&
                q->ttl_ms >= -1);
}

static void check_dlq(const rd_dlq_entry *d)
{
    FUZZ_ASSERT(d->id);
    capped(d->id, PG_CAP_ID);
    capped(d->execution_id, PG_CAP_ID);
    capped(d->reason, PG_CAP_NAME);
    capped(d->payload, PG_CAP_PAYLOAD);
    FUZZ_ASSERT(d->count >= -1);
    time_ok(d->first_death_at);
    time_ok(d->last_death_at);
}

static void check_count(const rd_count *c)
{
    FUZZ_ASSERT(memchr(c->status, '\0', sizeof c->status));
    lower(c->status);
    FUZZ_ASSERT(c->count >= 0 && c->count <= 1000000000000000L);
}

/* The values into res (rows of ncols); returns the number of rows. */
static int fill(PGresult *res, int ncols, const char *p, const char *end)
{
    int row = 0, col = 0;
    while (p <= end && row < MAX_ROWS) {
        const char *sep = memchr(p, 0x1f, (size_t)(end - p));
        const char *stop = sep ? sep : end;
        int len = (int)(stop - p);
        bool null = len == 1 && *p == 0x1a;
        FUZZ_ASSERT(PQsetvalue(res, row, col, null ? NULL : (char *)(uintptr_t)p,
                               null ? -1 : len));
        if (++col == ncols) {
            col = 0;
            row++;
        }
        if (!sep)
            break;
        p = sep + 1;
    }
    return PQntuples(res);
}

#define CHECK_ALL(fn, T, check, ...)                                          \
    do {                                                                      \
        T *items;                                                             \
        size_t n = fn(__VA_ARGS__, &items);                                   \
        FUZZ_ASSERT(n <= (size_t)rows && (n == 0) == (items == NULL));       \
        for (size_t k = 0; k < n; k++)                                        \
            check(&items[k]);                                                 \
        free_items(items, n, sizeof *items, clear_##T);                       \
    } while (0)

static void clear_rd_execution(void *p) { execution_clear(p); }
static void clear_rd_worker(void *p) { worker_clear(p); }
static void clear_rd_queue(void *p) { queue_clear(p); }
static void clear_rd_dlq_entry(void *p) { dlq_entry_clear(p); }
static void clear_rd_count(void *p) { (void)p; }

static void free_items(void *items, size_t n, size_t size, void (*clear)(void *))
{
    for (size_t k = 0; k < n; k++)
        clear((char *)items + k * size);
    free(items);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > 65536)
        return 0;
    int kind = data[0] % 5;
    int ncols = data[1] % MAX_COLS + 1;
    if (size < 2 + (size_t)ncols)
        return 0;
    PGresAttDesc attrs[MAX_COLS];
    memset(attrs, 0, sizeof attrs);
    for (int c = 0; c < ncols; c++) {
        attrs[c].name = (char *)(uintptr_t)names[data[2 + c] % NNAMES];
        attrs[c].typid = 25;                 /* text */
        attrs[c].typlen = -1;
        attrs[c].atttypmod = -1;
    }
    PGresult *res = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
    FUZZ_ASSERT(res && PQsetResultAttrs(res, ncols, attrs));
    const char *p = (const char *)data + 2 + ncols, *end = (const char *)data + size;
    int rows = fill(res, ncols, p, end);
    pg_row_ctx x = { .sem = (pg_semantics)(data[0] / 5 % 5), .now = 1.8e9 };
    health_defaults(&x.health);
    attune_backoff_defaults(&x.backoff);
    switch (kind) {
    case 0: CHECK_ALL(pg_rows_execs, rd_execution, check_exec, res, &x); break;
    case 1: CHECK_ALL(pg_rows_workers, rd_worker, check_worker, res, &x); break;
    case 2: CHECK_ALL(pg_rows_queues, rd_queue, check_queue, res); break;
    case 3: CHECK_ALL(pg_rows_dlq, rd_dlq_entry, check_dlq, res); break;
    default: CHECK_ALL(pg_rows_counts, rd_count, check_count, res); break;
    }
    PQclear(res);
    return 0;
}
