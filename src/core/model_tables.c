/* The field tables of the model's records (model_tables.h): one row per member. */
#include "model_tables.h"

#include <stdlib.h>
#include <string.h>

#include "model_fields.h"
#include "xalloc.h"

/* A row: record type, member, snapshot name, kind, then the optional parts by name. */
#define F(T, mem, k, ...) { .key = k, .member = #mem, .off = offsetof(T, mem), .kind = __VA_ARGS__ }

/* ---- executions ---- */

static const char *exec_root(const void *rec)
{
    const rd_execution *e = rec;
    return e->chain_root ? e->chain_root : e->id;
}

static bool exec_eligible(const void *rec)
{
    return ((const rd_execution *)rec)->elig.verdict == RD_ELIG_YES;
}

/* "retry_eligible" read back: the verdict unless "eligibility" names one (read after it) */
static void exec_set_eligible(void *rec, bool b)
{
    ((rd_execution *)rec)->elig.verdict = b ? RD_ELIG_YES : RD_ELIG_NO;
}

static const char *exec_elig_name(const void *rec)
{
    return elig_name(((const rd_execution *)rec)->elig.verdict);
}

static void exec_elig_parse(void *rec, const char *s)
{
    static const rd_elig all[] = { RD_ELIG_YES, RD_ELIG_NO, RD_ELIG_CONFIG_ERROR,
                                   RD_ELIG_UNKNOWN };
    for (size_t i = 0; s && i < sizeof all / sizeof *all; i++)
        if (strcmp(s, elig_name(all[i])) == 0)
            ((rd_execution *)rec)->elig.verdict = all[i];
}

static const rd_field exec_fields[] = {
    F(rd_execution, id, MF_ID, FK_STR),
    F(rd_execution, status, MF_STATUS, FK_STR),
    F(rd_execution, attempt, MF_ATTEMPT, FK_INT, .def = 0, .flags = FF_RAW),
    F(rd_execution, max_attempts, MF_MAX_ATTEMPTS, FK_INT, .def = -1),
    F(rd_execution, elig.verdict, MF_RETRY_ELIGIBLE, FK_TEST, .test = exec_eligible,
      .set = exec_set_eligible),
    F(rd_execution, chain_root, MF_CHAIN_ROOT, FK_STR, .name = exec_root),
    F(rd_execution, error, MF_ERROR, FK_STR),
    F(rd_execution, worker, MF_WORKER, FK_STR),
    F(rd_execution, next_retry_min, MF_NEXT_RETRY_AT, FK_TIME, .flags = FF_NOREAD),
    F(rd_execution, name, MF_NAME, FK_STR),
    F(rd_execution, parent_id, MF_PARENT_ID, FK_STR),
    F(rd_execution, elig.verdict, MF_ELIGIBILITY, FK_NAME, .name = exec_elig_name,
      .parse = exec_elig_parse),
    F(rd_execution, elig.why, MF_ELIGIBILITY_REASON, FK_BUF,
      .size = sizeof ((rd_execution *)0)->elig.why),
    F(rd_execution, elig.flagged, MF_FLAGGED, FK_BOOL),
    F(rd_execution, retry_of, MF_RETRY_OF, FK_STR),
    F(rd_execution, reason, MF_REASON, FK_STR),
    F(rd_execution, fingerprint, MF_FINGERPRINT, FK_STR),
    F(rd_execution, created_at, MF_CREATED_AT, FK_TIME),
    F(rd_execution, updated_at, MF_UPDATED_AT, FK_TIME),
    F(rd_execution, finished_at, MF_FINISHED_AT, FK_TIME),
    F(rd_execution, started_at, MF_STARTED_AT, FK_TIME),
    F(rd_execution, next_retry_min, MF_NEXT_RETRY_MIN, FK_TIME),
    F(rd_execution, next_retry_max, MF_NEXT_RETRY_MAX, FK_TIME),
    F(rd_execution, flags, MF_ORPHAN_SUSPECT, FK_FLAG, .size = RD_EXEC_ORPHAN),
    F(rd_execution, flags, MF_OVERLAPPING, FK_FLAG, .size = RD_EXEC_OVERLAP),
    F(rd_execution, flags, MF_MALFORMED, FK_FLAG, .size = RD_EXEC_MALFORMED),
    F(rd_execution, flags, MF_OVERSIZED, FK_FLAG, .size = RD_EXEC_OVERSIZED),
};

/* ---- workers ---- */

static const char *worker_health_name(const void *rec)
{
    return health_name(((const rd_worker *)rec)->health);
}

static void worker_health_parse(void *rec, const char *s)
{
    static const rd_health all[] = { RD_HEALTH_HEALTHY, RD_HEALTH_DEGRADED,
                                     RD_HEALTH_UNHEALTHY };
    rd_worker *w = rec;
    w->health = RD_HEALTH_UNKNOWN;
    for (size_t i = 0; s && i < sizeof all / sizeof *all; i++)
        if (strcmp(s, health_name(all[i])) == 0)
            w->health = all[i];
}

static const rd_field worker_fields[] = {
    F(rd_worker, id, MF_ID, FK_STR),
    F(rd_worker, name, MF_NAME, FK_STR),
    F(rd_worker, status, MF_STATUS, FK_STR),
    F(rd_worker, health, MF_HEALTH, FK_NAME, .name = worker_health_name,
      .parse = worker_health_parse),
    F(rd_worker, health_reason, MF_HEALTH_REASON, FK_BUF,
      .size = sizeof ((rd_worker *)0)->health_reason),
    F(rd_worker, heartbeat_at, MF_HEARTBEAT_AGE_S, FK_AGE),
    F(rd_worker, queue_depth, MF_QUEUE_DEPTH, FK_LONG, .def = -1),
    F(rd_worker, reported_health, MF_REPORTED_HEALTH, FK_STR),
    F(rd_worker, in_flight, MF_IN_FLIGHT, FK_INT, .def = -1),
    F(rd_worker, capacity, MF_CAPACITY, FK_INT, .def = -1),
    F(rd_worker, failure_rate, MF_FAILURE_RATE, FK_RATE),
    F(rd_worker, consecutive_failures, MF_CONSECUTIVE_FAILURES, FK_INT, .def = -1),
    F(rd_worker, tags, MF_TAGS, FK_STR),
    F(rd_worker, heartbeat_at, MF_HEARTBEAT_AT, FK_TIME),
    F(rd_worker, has_metrics, MF_HAS_METRICS, FK_BOOL),
    /* computed again on load (health.c) */
    F(rd_worker, health_until, "health_until", FK_TIME, .flags = FF_NOJSON),
};

/* ---- queues ---- */

static bool queue_is_sqs(const void *rec) { return ((const rd_queue *)rec)->retention_s > 0; }
static bool queue_max_length(const void *rec) { return ((const rd_queue *)rec)->max_length > 0; }
static bool queue_expires(const void *rec) { return ((const rd_queue *)rec)->expires_ms > 0; }
static bool queue_rejects(const void *rec) { return ((const rd_queue *)rec)->overflow_rejects; }
static bool queue_ttl_from(const void *rec) { return ((const rd_queue *)rec)->ttl_from; }
static bool queue_limits_note(const void *rec) { return ((const rd_queue *)rec)->limits_note; }

static const rd_field queue_fields[] = {
    F(rd_queue, name, MF_NAME, FK_STR),
    F(rd_queue, source, MF_SOURCE, FK_STR, .flags = FF_BORROWED),
    F(rd_queue, depth, MF_DEPTH, FK_LONG, .def = -1),
    F(rd_queue, consumers, MF_CONSUMERS, FK_INT, .def = -1),
    F(rd_queue, is_dlq, MF_IS_DLQ, FK_BOOL),
    F(rd_queue, ready, MF_READY, FK_LONG, .def = -1),
    F(rd_queue, unacked, MF_UNACKED, FK_LONG, .def = -1),
    F(rd_queue, publish_rate, MF_PUBLISH_RATE, FK_RATE),
    F(rd_queue, deliver_rate, MF_DELIVER_RATE, FK_RATE),
    F(rd_queue, dead_letter_exchange, MF_DEAD_LETTER_EXCHANGE, FK_STR),
    F(rd_queue, ttl_ms, MF_TTL_MS, FK_LONG, .def = -1),
    /* a RabbitMQ queue's other limits, written when set (dlqhorizon.h) */
    F(rd_queue, ttl_from, MF_TTL_FROM, FK_STR, .when = queue_ttl_from),
    F(rd_queue, max_length, MF_MAX_LENGTH, FK_LONG, .def = -1, .when = queue_max_length),
    F(rd_queue, overflow_rejects, MF_OVERFLOW_REJECTS, FK_BOOL, .when = queue_rejects),
    F(rd_queue, expires_ms, MF_EXPIRES_MS, FK_LONG, .def = -1, .when = queue_expires),
    F(rd_queue, limits_note, MF_LIMITS_NOTE, FK_STR, .when = queue_limits_note),
    /* an SQS queue's */
    F(rd_queue, delayed, MF_DELAYED, FK_LONG, .def = 0, .when = queue_is_sqs),
    F(rd_queue, max_receive, MF_MAX_RECEIVE, FK_LONG, .def = 0, .flags = FF_POSITIVE,
      .when = queue_is_sqs),
    F(rd_queue, retention_s, MF_RETENTION_S, FK_LONG, .def = 0, .when = queue_is_sqs),
    F(rd_queue, not_draining, MF_NOT_DRAINING, FK_BOOL, .when = queue_is_sqs),
};

/* ---- DLQ entries ---- */

static bool dlq_has_step(const void *rec) { return ((const rd_dlq_entry *)rec)->step_id; }
static bool dlq_has_source(const void *rec) { return ((const rd_dlq_entry *)rec)->source; }
static bool dlq_is_sqs(const void *rec) { return ((const rd_dlq_entry *)rec)->sent_at > 0; }
static bool dlq_has_expiration(const void *rec) { return ((const rd_dlq_entry *)rec)->expiration; }

static const rd_field dlq_fields[] = {
    F(rd_dlq_entry, id, MF_ID, FK_STR),
    F(rd_dlq_entry, queue, MF_QUEUE, FK_STR),
    F(rd_dlq_entry, execution_id, MF_EXECUTION_ID, FK_STR),
    F(rd_dlq_entry, step_id, MF_STEP_ID, FK_STR, .when = dlq_has_step),
    F(rd_dlq_entry, reason, MF_REASON, FK_STR),
    F(rd_dlq_entry, count, MF_COUNT, FK_LONG, .def = -1),
    F(rd_dlq_entry, first_death_at, MF_FIRST_DEATH_AT, FK_TIME),
    F(rd_dlq_entry, last_death_at, MF_LAST_DEATH_AT, FK_TIME),
    F(rd_dlq_entry, payload, MF_PAYLOAD, FK_STR),
    F(rd_dlq_entry, origin_queue, MF_ORIGIN_QUEUE, FK_STR),
    F(rd_dlq_entry, redelivered, MF_REDELIVERED, FK_BOOL),
    F(rd_dlq_entry, source, MF_SOURCE, FK_STR, .flags = FF_BORROWED, .when = dlq_has_source),
    /* an SQS message's */
    F(rd_dlq_entry, attempt, MF_ATTEMPT, FK_INT, .def = 0, .flags = FF_POSITIVE,
      .when = dlq_is_sqs),
    F(rd_dlq_entry, task_type, MF_TASK_TYPE, FK_STR, .when = dlq_is_sqs),
    F(rd_dlq_entry, sent_at, MF_SENT_AT, FK_TIME, .when = dlq_is_sqs),
    /* a RabbitMQ message's own TTL */
    F(rd_dlq_entry, expiration, MF_EXPIRATION, FK_STR, .when = dlq_has_expiration),
};

/* ---- status counts ---- */

static const rd_field count_fields[] = {
    F(rd_count, status, MF_STATUS, FK_BUF, .size = RD_STATUS_MAX),
    F(rd_count, count, MF_COUNT, FK_LONG, .def = -1),
    F(rd_count, estimated, MF_ESTIMATED, FK_BOOL),
    F(rd_count, capped, MF_CAPPED, FK_BOOL),
};

/* ---- the core API's state ---- */

static const char *core_name(const void *rec)
{
    return core_state_name(((const rd_core_status *)rec)->state);
}

static void core_parse(void *rec, const char *s)
{
    static const rd_core_state all[] = { RD_CORE_CHECKING, RD_CORE_OK, RD_CORE_ERROR,
                                         RD_CORE_DOWN };
    rd_core_status *c = rec;
    c->state = RD_CORE_NONE;
    for (size_t i = 0; s && i < sizeof all / sizeof *all; i++)
        if (strcmp(s, core_state_name(all[i])) == 0)
            c->state = all[i];
}

#define CBUF(mem) sizeof ((rd_core_status *)0)->mem
static const rd_field core_fields[] = {
    F(rd_core_status, state, MF_STATE, FK_NAME, .name = core_name, .parse = core_parse),
    F(rd_core_status, identity, MF_IDENTITY, FK_BUF, .size = CBUF(identity),
      .flags = FF_EMPTY_NULL),
    F(rd_core_status, error, MF_ERROR, FK_BUF, .size = CBUF(error), .flags = FF_EMPTY_NULL),
    F(rd_core_status, checked_at, MF_CHECKED_AT, FK_TIME),
    F(rd_core_status, since, MF_SINCE, FK_TIME),
    F(rd_core_status, last_action, MF_LAST_ACTION, FK_BUF, .size = CBUF(last_action),
      .flags = FF_EMPTY_NULL),
    F(rd_core_status, last_action_failed, MF_LAST_ACTION_FAILED, FK_BOOL),
    F(rd_core_status, last_action_at, MF_LAST_ACTION_AT, FK_TIME),
};

/* ---- a source's state ---- */

static const char *source_state(const void *rec)
{
    return src_state_name(((const rd_source_status *)rec)->state);
}

static void source_state_parse(void *rec, const char *s)
{
    static const rd_src_state all[] = { RD_SRC_OK, RD_SRC_STALE, RD_SRC_DOWN };
    rd_source_status *st = rec;
    for (size_t i = 0; s && i < sizeof all / sizeof *all; i++)
        if (strcmp(s, src_state_name(all[i])) == 0)
            st->state = all[i];
}

static bool source_tls(const void *rec) { return ((const rd_source_status *)rec)->tls[0]; }
static bool source_creds(const void *rec) { return ((const rd_source_status *)rec)->creds[0]; }
static bool source_push(const void *rec) { return ((const rd_source_status *)rec)->push[0]; }
static bool source_verified(const void *rec)
{
    return !((const rd_source_status *)rec)->tls_unverified;
}

static bool source_replica(const void *rec)
{
    const rd_source_status *s = rec;
    return s->host[0] || s->role[0] || s->failover[0];
}

static bool source_reading(const void *rec)
{
    return ((const rd_source_status *)rec)->progress.active;
}

#define SBUF(mem) sizeof ((rd_source_status *)0)->mem
static const rd_field source_fields[] = {
    F(rd_source_status, name, MF_NAME, FK_BUF, .size = SBUF(name)),
    F(rd_source_status, state, MF_STATE, FK_NAME, .name = source_state,
      .parse = source_state_parse),
    F(rd_source_status, error, MF_ERROR, FK_BUF, .size = SBUF(error), .flags = FF_EMPTY_NULL),
    F(rd_source_status, last_ok, MF_AGE_MS, FK_AGE, .flags = FF_MS),
    F(rd_source_status, last_ok, MF_LAST_OK, FK_TIME),
    F(rd_source_status, since, MF_SINCE, FK_TIME),
    F(rd_source_status, tls, MF_TLS, FK_BUF, .size = SBUF(tls), .when = source_tls),
    F(rd_source_status, tls_unverified, MF_TLS_VERIFIED, FK_TEST, .test = source_verified,
      .flags = FF_NOREAD, .when = source_tls),
    /* the provider's name only, never a key; not read back (the source finds it again) */
    F(rd_source_status, creds, MF_CREDENTIALS, FK_BUF, .size = SBUF(creds),
      .flags = FF_NOREAD, .when = source_creds),
    F(rd_source_status, creds_expires, MF_CREDENTIALS_EXPIRE, FK_TIME, .flags = FF_NOREAD,
      .when = source_creds),
    /* "replica": {"host", "role", "lag_s", "failover", "failover_at"} (model_json.c) */
    F(rd_source_status, host, MF_REPLICA, FK_STRUCT, .when = source_replica),
    F(rd_source_status, role, MF_ROLE, FK_STRUCT, .flags = FF_NOJSON),
    F(rd_source_status, lag_known, MF_LAG_S, FK_STRUCT, .flags = FF_NOJSON),
    F(rd_source_status, lag_s, MF_LAG_S, FK_STRUCT, .flags = FF_NOJSON),
    F(rd_source_status, failover, MF_FAILOVER, FK_STRUCT, .flags = FF_NOJSON),
    F(rd_source_status, failover_at, MF_FAILOVER_AT, FK_STRUCT, .flags = FF_NOJSON),
    F(rd_source_status, push, MF_PUSH, FK_BUF, .size = SBUF(push), .when = source_push),
    /* "progress": {"done", "total", "share", "text"} while a first read runs */
    F(rd_source_status, progress, MF_PROGRESS, FK_STRUCT, .when = source_reading),
    /* "notes": [...] (n_notes of them) */
    F(rd_source_status, notes, MF_NOTES, FK_STRUCT),
    F(rd_source_status, n_notes, MF_NOTES, FK_STRUCT, .flags = FF_NOJSON),
    /* what `redrive check` shows, not in the snapshot */
    F(rd_source_status, every_s, "every_s", FK_STRUCT, .flags = FF_NOJSON),
    F(rd_source_status, version, "version", FK_STRUCT, .flags = FF_NOJSON),
    F(rd_source_status, facts_known, "facts_known", FK_STRUCT, .flags = FF_NOJSON),
    F(rd_source_status, facts, "facts", FK_STRUCT, .flags = FF_NOJSON),
};

#define RECORD(var, T, name, tab) \
    const rd_record var = { name, sizeof(T), tab, sizeof tab / sizeof *tab }
RECORD(exec_record, rd_execution, "execution", exec_fields);
RECORD(worker_record, rd_worker, "worker", worker_fields);
RECORD(queue_record, rd_queue, "queue", queue_fields);
RECORD(dlq_record, rd_dlq_entry, "dlq_entry", dlq_fields);
RECORD(count_record, rd_count, "count", count_fields);
RECORD(core_record, rd_core_status, "core", core_fields);
RECORD(source_record, rd_source_status, "source", source_fields);

/* ---- access ---- */

const rd_field *record_field(const rd_record *r, const char *key)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->fields[i].key, key) == 0)
            return &r->fields[i];
    return NULL;
}

const char *field_str(const rd_field *f, const void *rec)
{
    const char *p = (const char *)rec + f->off;
    if (f->name)
        return f->name(rec);
    if (f->kind == FK_BUF)
        return p;
    return f->kind == FK_STR ? *(char *const *)p : NULL;
}

long field_long(const rd_field *f, const void *rec)
{
    const char *p = (const char *)rec + f->off;
    switch (f->kind) {
    case FK_INT: return *(const int *)p;
    case FK_LONG: return *(const long *)p;
    case FK_BOOL: return *(const bool *)p;
    case FK_FLAG: return (*(const unsigned *)p & f->size) != 0;
    case FK_TEST: return f->test(rec);
    default: return -1;
    }
}

double field_num(const rd_field *f, const void *rec)
{
    return *(const double *)((const char *)rec + f->off);
}

void record_copy(const rd_record *r, void *to, const void *from)
{
    memcpy(to, from, r->size);
    for (size_t i = 0; i < r->n; i++) {
        const rd_field *f = &r->fields[i];
        if (f->kind != FK_STR)
            continue;
        char **p = (char **)((char *)to + f->off);
        *p = f->flags & FF_BORROWED || !*p ? NULL : xstrdup(*p);
    }
}

void record_clear(const rd_record *r, void *rec)
{
    if (!rec)
        return;
    for (size_t i = 0; i < r->n; i++) {
        const rd_field *f = &r->fields[i];
        if (f->kind == FK_STR && !(f->flags & FF_BORROWED))
            free(*(char **)((char *)rec + f->off));
    }
    memset(rec, 0, r->size);
}
