#include "pg_rows.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <stdio.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "../core/fingerprint.h"
#include "../core/health.h"
#include "../core/rfc3339.h"
#include "../core/xalloc.h"

pg_semantics pg_semantics_parse(const char *name)
{
    if (!name)
        return SEM_UNKNOWN;
    if (strcmp(name, "attune") == 0) return SEM_ATTUNE;
    if (strcmp(name, "tasker") == 0) return SEM_TASKER;
    if (strcmp(name, "openagents") == 0) return SEM_OPENAGENTS;
    if (strcmp(name, "alakai") == 0) return SEM_ALAKAI;
    return SEM_UNKNOWN;
}

/* ---- defensive parsing ---- */

bool pg_parse_long(const char *s, long lo, long hi, long *out)
{
    if (!s)
        return false;
    while (isspace((unsigned char)*s))
        s++;
    if (!*s)
        return false;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    /* numeric columns may come back as "3.0" */
    if (*end == '.') {
        char *e2 = end + 1;
        while (*e2 == '0')
            e2++;
        end = e2;
    }
    while (isspace((unsigned char)*end))
        end++;
    if (errno || *end || v < lo || v > hi)
        return false;
    *out = (long)v;
    return true;
}

bool pg_parse_double(const char *s, double *out)
{
    if (!s)
        return false;
    while (isspace((unsigned char)*s))
        s++;
    if (!*s)
        return false;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    while (isspace((unsigned char)*end))
        end++;
    if (errno || *end || !isfinite(v))
        return false;
    *out = v;
    return true;
}

double pg_parse_epoch(const char *s)
{
    double v;
    if (!pg_parse_double(s, &v) && !rfc3339_parse(s, &v))
        return 0;
    /* 1970 .. year ~5000: anything else is garbage, shown as unknown */
    if (v <= 0 || v > 1e11)
        return 0;
    return v;
}

int pg_parse_bool(const char *s)
{
    if (!s)
        return -1;
    if (!strcasecmp(s, "t") || !strcasecmp(s, "true") || !strcmp(s, "1") ||
        !strcasecmp(s, "yes") || !strcasecmp(s, "on"))
        return 1;
    if (!strcasecmp(s, "f") || !strcasecmp(s, "false") || !strcmp(s, "0") ||
        !strcasecmp(s, "no") || !strcasecmp(s, "off"))
        return 0;
    return -1;
}

char *pg_dup_capped(const char *s, size_t cap)
{
    if (!s)
        return NULL;
    size_t n = strnlen(s, cap + 1);
    if (n <= cap)
        return xstrndup(s, n);
    n = cap;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)   /* don't split a character */
        n--;
    return xstrndup(s, n);
}

bool pg_result_ok(const PGresult *r)
{
    ExecStatusType st = PQresultStatus(r);
    return st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK;
}

const char *pg_text(const PGresult *r, int row, const char *col)
{
    int k = PQfnumber(r, col);
    if (k < 0 || row < 0 || row >= PQntuples(r) || PQgetisnull(r, row, k))
        return NULL;
    return PQgetvalue(r, row, k);
}

static char *col_dup(const PGresult *r, int i, const char *col, size_t cap)
{
    return pg_dup_capped(pg_text(r, i, col), cap);
}

static char *col_lower(const PGresult *r, int i, const char *col, size_t cap)
{
    char *s = col_dup(r, i, col, cap);
    for (char *p = s; p && *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return s;
}

static long col_long(const PGresult *r, int i, const char *col, long lo, long hi)
{
    long v;
    return pg_parse_long(pg_text(r, i, col), lo, hi, &v) ? v : -1;
}

static double col_epoch(const PGresult *r, int i, const char *col)
{
    return pg_parse_epoch(pg_text(r, i, col));
}

/* ---- errors as JSON text ---- */

/* `error_json` (optional): an error as JSON text, decoded here and not by the server,
 * because PostgreSQL refuses the whole query when one json value cannot be converted to
 * text (`->>` on a "\u0000", a `::jsonb` cast of text that is not JSON): a bad value must
 * cost one field of one row. An object gives its "message" (else "data") and its "type"
 * as the reason, a string its value; anything else (an array, a number, text cut by the
 * query's cap, not JSON at all) is shown as it is. */
static void error_from_json(const char *text, char **reason, char **error)
{
    if (!text || *error)
        return;
    cJSON *j = strlen(text) <= PG_CAP_PAYLOAD ? cJSON_Parse(text) : NULL;
    const char *s = cJSON_GetStringValue(j);
    if (cJSON_IsObject(j)) {
        s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "message"));
        if (!s)
            s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "data"));
        const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "type"));
        if (type && !*reason)
            *reason = pg_dup_capped(type, PG_CAP_REASON);
    }
    *error = pg_dup_capped(s ? s : text, PG_CAP_ERROR);
    cJSON_Delete(j);
}

/* ---- executions ---- */

enum { BIG = 1000000 };

static double finished_or_updated(const rd_execution *e, double now)
{
    if (e->finished_at > 0) return e->finished_at;
    if (e->updated_at > 0) return e->updated_at;
    return now;
}

static void unreadable(rd_execution *e, const char *what)
{
    e->elig.verdict = RD_ELIG_UNKNOWN;
    snprintf(e->elig.why, sizeof e->elig.why, "%s unreadable", what);
}

static void sem_attune(const PGresult *r, int i, const pg_row_ctx *x, rd_execution *e)
{
    long rc = col_long(r, i, "retry_count", 0, BIG);
    long mr = col_long(r, i, "max_retries", 0, BIG);
    e->attempt = rc >= 0 ? (int)rc + 1 : -1;
    e->max_attempts = mr >= 0 ? (int)mr + 1 : -1;
    if (rc < 0)
        unreadable(e, "retry_count");
    else
        e->elig = retry_attune(e->status, (int)rc, (int)mr);
    if (!e->reason && e->status && strcmp(e->status, "failed") == 0)
        e->reason = xstrdup(attune_classify_reason(e->error));
    double retry_at = col_epoch(r, i, "retry_at");
    if (retry_at > 0 && e->status && strcmp(e->status, "requested") == 0) {
        e->next_retry_min = e->next_retry_max = retry_at;
    } else if (e->elig.verdict == RD_ELIG_YES && e->reason && strcmp(e->reason, "unknown") != 0) {
        /* the retry manager schedules a retry only for a known reason */
        double lo, hi, t = finished_or_updated(e, x->now);
        retry_attune_delay(&x->backoff, (int)rc, &lo, &hi);
        e->next_retry_min = t + lo;
        e->next_retry_max = t + hi;
    }
}

static void sem_tasker(const PGresult *r, int i, const pg_row_ctx *x, rd_execution *e)
{
    const char *a = pg_text(r, i, "attempts"), *m = pg_text(r, i, "max_attempts");
    long attempts = col_long(r, i, "attempts", 0, BIG);
    long max = col_long(r, i, "max_attempts", 0, BIG);
    int retryable = pg_parse_bool(pg_text(r, i, "retryable"));
    e->attempt = attempts >= 0 ? (int)attempts : 0;
    e->max_attempts = max >= 0 ? (int)max : (m ? -1 : 3);
    if ((a && attempts < 0) || (m && max < 0)) {
        unreadable(e, a && attempts < 0 ? "attempts" : "max_attempts");
        return;
    }
    /* a done or in-flight step is not something to retry, whatever its budget: the
     * reason says what it is ("complete", "in progress") */
    e->elig = retry_tasker_step(e->status, (int)attempts, (int)max, retryable);
    if (e->elig.verdict == RD_ELIG_YES && e->status &&
        (strcmp(e->status, "error") == 0 || strcmp(e->status, "waiting_for_retry") == 0)) {
        long backoff = col_long(r, i, "backoff_request_seconds", 0, 100L * 365 * 86400);
        double last = col_epoch(r, i, "last_attempted_at");
        double lo = 0, hi = 0;
        retry_tasker_eta(last > 0 ? last : finished_or_updated(e, x->now), (int)backoff,
                         e->attempt, &lo, &hi);
        e->next_retry_min = lo;
        e->next_retry_max = hi;
    }
}

static void sem_openagents(const PGresult *r, int i, const pg_row_ctx *x, rd_execution *e)
{
    long rc = col_long(r, i, "retry_count", 0, BIG);
    long mr = col_long(r, i, "max_retries", 0, BIG);
    e->attempt = rc >= 0 ? (int)rc + 1 : -1;
    e->max_attempts = mr >= 0 ? (int)mr + 1 : -1;
    if (rc < 0 || mr < 0) {
        unreadable(e, rc < 0 ? "retry_count" : "max_retries");
        return;
    }
    e->elig = retry_openagents(e->status, (int)rc, (int)mr);
    double lo, hi;
    long delay = col_long(r, i, "retry_delay", 0, 100L * 365 * 86400);
    if (e->elig.verdict == RD_ELIG_YES &&
        retry_openagents_delay(pg_text(r, i, "retry_policy"), (int)delay, (int)rc, &lo, &hi)) {
        double t = finished_or_updated(e, x->now);
        e->next_retry_min = t + lo;
        e->next_retry_max = t + hi;
    }
}

/* One row into *item (zeroed by the caller); false: the row is left out (item zeroed again). */
typedef bool (*row_fn)(const PGresult *r, int i, const pg_row_ctx *x, void *item);

/* Every row of r converted by fn into a new array of `size`-byte items; NULL and 0 when
 * no row converts. */
static size_t rows_collect(const PGresult *r, const pg_row_ctx *x, size_t size, row_fn fn,
                           void *out_p)
{
    void **out = out_p;
    int n = PQresultStatus(r) == PGRES_TUPLES_OK ? PQntuples(r) : 0;
    *out = NULL;
    if (n <= 0)
        return 0;
    char *v = xcalloc((size_t)n, size);
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        if (fn(r, i, x, v + k * size))
            k++;
        else
            memset(v + k * size, 0, size);
    }
    if (!k) {
        free(v);
        return 0;
    }
    *out = v;
    return k;
}

/* The row's "id" into *id; false (*id NULL: the row is skipped) when it is NULL or empty. */
static bool row_id(const PGresult *r, int i, char **id)
{
    *id = col_dup(r, i, "id", PG_CAP_ID);
    if (*id && **id)
        return true;
    free(*id);
    *id = NULL;
    return false;
}

static bool exec_from_row(const PGresult *r, int i, const pg_row_ctx *x, void *item)
{
    rd_execution *e = item;
    memset(e, 0, sizeof *e);
    if (!row_id(r, i, &e->id))
        return false;
    e->parent_id = col_dup(r, i, "parent_id", PG_CAP_ID);
    e->name = col_dup(r, i, "name", PG_CAP_NAME);
    e->status = col_lower(r, i, "status", 64);
    e->chain_root = col_dup(r, i, "chain_root", PG_CAP_ID);
    e->retry_of = col_dup(r, i, "retry_of", PG_CAP_ID);
    e->reason = col_dup(r, i, "reason", PG_CAP_NAME);
    e->error = col_dup(r, i, "error", PG_CAP_ERROR);
    error_from_json(pg_text(r, i, "error_json"), &e->reason, &e->error);
    e->worker = col_dup(r, i, "worker", PG_CAP_ID);
    e->created_at = col_epoch(r, i, "created_at");
    e->updated_at = col_epoch(r, i, "updated_at");
    e->finished_at = col_epoch(r, i, "finished_at");
    e->started_at = col_epoch(r, i, "started_at");
    e->attempt = e->max_attempts = -1;
    if (e->chain_root && (!*e->chain_root || strcmp(e->chain_root, e->id) == 0)) {
        free(e->chain_root);
        e->chain_root = NULL;
    }
    switch (x->sem) {
    case SEM_ATTUNE: sem_attune(r, i, x, e); break;
    case SEM_TASKER: sem_tasker(r, i, x, e); break;
    case SEM_OPENAGENTS: sem_openagents(r, i, x, e); break;
    default: unreadable(e, "semantics"); break;
    }
    if (pg_parse_bool(pg_text(r, i, "superseded")) == 1 && e->elig.verdict == RD_ELIG_YES) {
        e->elig.verdict = RD_ELIG_NO;
        snprintf(e->elig.why, sizeof e->elig.why, "superseded by a later attempt");
        e->next_retry_min = e->next_retry_max = 0;
    }
    long v;
    if (pg_parse_long(pg_text(r, i, "attempt"), 0, BIG, &v)) e->attempt = (int)v;
    if (pg_parse_long(pg_text(r, i, "max_attempts"), 0, BIG, &v) && x->sem != SEM_TASKER)
        e->max_attempts = (int)v;
    if (e->error && *e->error)
        e->fingerprint = fingerprint_dup(e->error);
    return true;
}

bool pg_row_exec(const PGresult *r, int i, const pg_row_ctx *x, rd_execution *e)
{
    if (exec_from_row(r, i, x, e))
        return true;
    memset(e, 0, sizeof *e);
    return false;
}

size_t pg_rows_execs(const PGresult *r, const pg_row_ctx *x, rd_execution **out)
{
    return rows_collect(r, x, sizeof **out, exec_from_row, out);
}

/* ---- workers ---- */

/* `tags_json` (optional): a JSON array whose values join the tags as one more word,
 * comma-separated (Attune's capabilities.runtimes, OpenAgents' tags). Formatted here, not
 * by the server: a subquery per row to join them cost the workers query about a third of
 * its time at 10,000 workers (the database is what many consoles share). Strings as they
 * are, other values as JSON text, null left out; anything but an array adds nothing. */
static char *tags_with_json(char *tags, const char *json)
{
    if (!json || !*json || strlen(json) > PG_CAP_PAYLOAD)
        return tags;
    cJSON *a = cJSON_Parse(json);
    if (!cJSON_IsArray(a)) {
        cJSON_Delete(a);
        return tags;
    }
    char joined[PG_CAP_NAME];
    size_t len = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, a) {
        char *own = NULL;
        const char *t = cJSON_IsString(v) ? v->valuestring
                        : cJSON_IsNull(v) ? NULL : (own = cJSON_PrintUnformatted(v));
        size_t n = t ? strlen(t) : 0;
        if (t && len + n + 2 < sizeof joined) {   /* a value that does not fit is left out */
            if (len)
                joined[len++] = ',';
            memcpy(joined + len, t, n);
            len += n;
        }
        cJSON_free(own);
    }
    cJSON_Delete(a);
    if (!len)
        return tags;
    joined[len] = '\0';
    char *both = tags && *tags ? xasprintf("%s %s", tags, joined) : xstrdup(joined);
    free(tags);
    return both;
}

static bool worker_from_row(const PGresult *r, int i, const pg_row_ctx *x, void *item)
{
    rd_worker *w = item;
    memset(w, 0, sizeof *w);
    if (!row_id(r, i, &w->id))
        return false;
    w->name = col_dup(r, i, "name", PG_CAP_NAME);
    w->status = col_lower(r, i, "status", 64);
    w->reported_health = col_lower(r, i, "reported_health", 64);
    w->tags = tags_with_json(col_dup(r, i, "tags", PG_CAP_NAME), pg_text(r, i, "tags_json"));
    w->heartbeat_at = col_epoch(r, i, "heartbeat_at");
    w->queue_depth = col_long(r, i, "queue_depth", 0, 1000000000000L);
    w->in_flight = (int)col_long(r, i, "in_flight", 0, BIG);
    w->capacity = (int)col_long(r, i, "capacity", 0, BIG);
    w->consecutive_failures = (int)col_long(r, i, "consecutive_failures", 0, 1000000000L);
    double rate;
    if (pg_parse_double(pg_text(r, i, "failure_rate"), &rate) && rate >= 0 && rate <= 1) {
        w->failure_rate = rate;
    } else {
        long total = col_long(r, i, "total_executions", 1, 1000000000000L);
        long failed = col_long(r, i, "failed_executions", 0, 1000000000000L);
        w->failure_rate = total > 0 && failed >= 0 && failed <= total
                              ? (double)failed / (double)total : -1;
    }
    w->has_metrics = w->queue_depth >= 0 || w->failure_rate >= 0 || w->consecutive_failures >= 0;
    health_classify(&x->health, w, x->now);
    return true;
}

size_t pg_rows_workers(const PGresult *r, const pg_row_ctx *x, rd_worker **out)
{
    return rows_collect(r, x, sizeof **out, worker_from_row, out);
}

/* ---- queues, DLQ, counts ---- */

static bool queue_from_row(const PGresult *r, int i, const pg_row_ctx *x, void *item)
{
    rd_queue *q = item;
    q->name = col_dup(r, i, "name", PG_CAP_NAME);
    if (!q->name)
        return false;
    q->depth = col_long(r, i, "depth", 0, 1000000000000L);
    q->ready = col_long(r, i, "ready", 0, 1000000000000L);
    q->unacked = col_long(r, i, "unacked", 0, 1000000000000L);
    q->consumers = (int)col_long(r, i, "consumers", 0, BIG);
    q->publish_rate = q->deliver_rate = -1;
    q->is_dlq = pg_parse_bool(pg_text(r, i, "is_dlq")) == 1;
    q->dead_letter_exchange = col_dup(r, i, "dead_letter_exchange", PG_CAP_NAME);
    q->ttl_ms = col_long(r, i, "ttl_ms", 0, 1000000000000L);
    return true;
}

size_t pg_rows_queues(const PGresult *r, rd_queue **out)
{
    return rows_collect(r, NULL, sizeof **out, queue_from_row, out);
}

static bool dlq_from_row(const PGresult *r, int i, const pg_row_ctx *x, void *item)
{
    rd_dlq_entry *d = item;
    d->id = col_dup(r, i, "id", PG_CAP_ID);
    if (!d->id)
        return false;
    d->queue = col_dup(r, i, "queue", PG_CAP_NAME);
    d->execution_id = col_dup(r, i, "execution_id", PG_CAP_ID);
    d->step_id = col_dup(r, i, "step_id", PG_CAP_ID);
    d->reason = col_dup(r, i, "reason", PG_CAP_NAME);
    char *error = NULL;              /* only its type, as the reason */
    error_from_json(pg_text(r, i, "error_json"), &d->reason, &error);
    free(error);
    d->count = col_long(r, i, "count", 0, 1000000000000L);
    d->origin_queue = col_dup(r, i, "origin_queue", PG_CAP_NAME);
    d->first_death_at = col_epoch(r, i, "first_death_at");
    d->last_death_at = col_epoch(r, i, "last_death_at");
    d->payload = col_dup(r, i, "payload", PG_CAP_PAYLOAD);
    return true;
}

size_t pg_rows_dlq(const PGresult *r, rd_dlq_entry **out)
{
    return rows_collect(r, NULL, sizeof **out, dlq_from_row, out);
}

/* A count row; "12345+" is a capped count. A row whose count does not parse is left out
 * (its item zeroed, so nothing of it leaks into the next row's). */
static bool count_from_row(const PGresult *r, int i, const pg_row_ctx *x, void *item)
{
    rd_count *c = item;
    const char *st = pg_text(r, i, "status");
    const char *cnt = pg_text(r, i, "count");
    if (!st || !cnt)
        return false;
    snprintf(c->status, sizeof c->status, "%s", st);
    for (char *p = c->status; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    size_t len = strlen(cnt);
    char num[32];
    snprintf(num, sizeof num, "%s", cnt);
    if (len > 0 && len < sizeof num && num[len - 1] == '+') {
        num[len - 1] = '\0';
        c->capped = true;
    }
    double d;
    if (!pg_parse_double(num, &d) || d < 0 || d > 1e15)
        return false;
    c->count = (long)llround(d);
    c->estimated = pg_parse_bool(pg_text(r, i, "estimated")) == 1;
    c->capped = c->capped || pg_parse_bool(pg_text(r, i, "capped")) == 1;
    return true;
}

size_t pg_rows_counts(const PGresult *r, rd_count **out)
{
    return rows_collect(r, NULL, sizeof **out, count_from_row, out);
}
