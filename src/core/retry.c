#include "retry.h"

#include <cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TASKER_DEFAULT_MAX 3
#define TASKER_BACKOFF_CAP 300.0
#define POLICY_MAX_BYTES 4096

static rd_verdict verdict(rd_elig e, bool flagged, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static rd_verdict verdict(rd_elig e, bool flagged, const char *fmt, ...)
{
    rd_verdict v = { .verdict = e, .flagged = flagged };
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v.why, sizeof v.why, fmt, ap);
    va_end(ap);
    return v;
}

rd_verdict retry_tasker(int attempts, int max_attempts, int retryable)
{
    int a = attempts < 0 ? 0 : attempts;
    int m = max_attempts < 0 ? TASKER_DEFAULT_MAX : max_attempts;
    bool r = retryable != 0;   /* -1 (NULL) reads as true */
    /* Tasker's get_step_readiness_status lets the first attempt run whatever max_attempts
     * says (attempts = 0 is eligible); after it, 0 allows no retry. Shown as it behaves,
     * flagged as a configuration warning. */
    if (m == 0)
        return a == 0 ? verdict(RD_ELIG_YES, true, "first attempt runs (max_attempts = 0: "
                                "config warning, no retry after it)")
                      : verdict(RD_ELIG_NO, true, "max_attempts = 0 allows no retry "
                                "(config warning)");
    bool flagged = !r && m > 1;
    if (a == 0)
        return verdict(RD_ELIG_YES, flagged, flagged ? "not attempted yet (retryable=false, "
                       "max_attempts %d acts as 1)" : "not attempted yet (0/%d)", m);
    if (!r)
        return verdict(RD_ELIG_NO, flagged, flagged ? "not retryable (retryable=false "
                       "overrides max_attempts %d)" : "not retryable (max_attempts %d)", m);
    if (a < m)
        return verdict(RD_ELIG_YES, false, "attempt %d of %d allowed", a + 1, m);
    return verdict(RD_ELIG_NO, false, "budget exhausted (%d/%d)", a, m);
}

rd_verdict retry_tasker_step(const char *state, int attempts, int max_attempts, int retryable)
{
    static const struct { const char *state, *why; } settled[] = {
        {"complete", "complete"},
        {"resolved_manually", "resolved manually"},
        {"cancelled", "cancelled"},
        {"in_progress", "in progress"},
        {"enqueued", "enqueued: in flight"},
        {"enqueued_for_orchestration", "in flight: enqueued for orchestration"},
        {"enqueued_as_error_for_orchestration", "in flight: its error enqueued for orchestration"},
    };
    for (size_t k = 0; state && k < sizeof settled / sizeof *settled; k++)
        if (strcmp(state, settled[k].state) == 0)
            return verdict(RD_ELIG_NO, false, "%s", settled[k].why);
    return retry_tasker(attempts, max_attempts, retryable);
}

void retry_tasker_eta(double last_attempted_at, int backoff_request_seconds, int attempts,
                      double *lo, double *hi)
{
    *lo = *hi = 0;
    if (last_attempted_at <= 0)
        return;
    double d;
    if (backoff_request_seconds >= 0) {
        d = backoff_request_seconds;
    } else {
        int a = attempts < 0 ? 0 : attempts;
        d = a >= 30 ? TASKER_BACKOFF_CAP : fmin(ldexp(1.0, a), TASKER_BACKOFF_CAP);
    }
    *lo = *hi = last_attempted_at + d;
}

rd_verdict retry_attune(const char *status, int retry_count, int max_retries)
{
    int m = max_retries < 0 ? 0 : max_retries;
    int n = retry_count < 0 ? 0 : retry_count;
    if (!status || strcasecmp(status, "failed") != 0)
        return verdict(RD_ELIG_NO, false, "status %s (only failed executions retry)",
                       status ? status : "unknown");
    if (m == 0)
        return verdict(RD_ELIG_NO, false, max_retries < 0 ? "no retry budget (max_retries "
                       "NULL)" : "no retry budget (max_retries 0)");
    if (n < m)
        return verdict(RD_ELIG_YES, false, "retry %d of %d allowed", n + 1, m);
    return verdict(RD_ELIG_NO, false, "budget exhausted (%d/%d retries)", n, m);
}

void attune_backoff_defaults(rd_attune_backoff *b)
{
    b->base = 1;
    b->multiplier = 2.0;
    b->max = 300;
    b->jitter = 0.2;
}

void retry_attune_delay(const rd_attune_backoff *b, int retry_count, double *lo, double *hi)
{
    int n = retry_count < 0 ? 0 : retry_count;
    double d = b->base * pow(b->multiplier, n);
    if (!(d <= b->max))   /* also catches NaN/inf */
        d = b->max;
    double j = b->jitter < 0 ? 0 : b->jitter;
    *lo = d * (1 - j);
    *hi = d * (1 + j);
    if (*lo < 0)
        *lo = 0;
}

const char *attune_classify_reason(const char *error)
{
    static const struct { const char *needle, *reason; } rules[] = {
        { "worker queue ttl expired", "worker_unavailable" },
        { "worker unavailable", "worker_unavailable" },
        { "timeout", "queue_timeout" },
        { "timed out", "queue_timeout" },
        { "heartbeat", "worker_heartbeat_stale" },
        { "stale", "worker_heartbeat_stale" },
        { "transient", "transient_error" },
        { "temporary", "transient_error" },
        { "connection", "transient_error" },
    };
    if (!error)
        return "unknown";
    for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
        if (strcasestr(error, rules[i].needle))
            return rules[i].reason;
    return "unknown";
}

static int alakai_budget(int max_retries)
{
    return max_retries < 0 ? 1 : max_retries;
}

bool retry_alakai_exhausted(int attempt, int max_retries)
{
    return attempt >= 1 && attempt > alakai_budget(max_retries);
}

rd_verdict retry_alakai(const char *status, int attempt, int max_retries)
{
    int m = alakai_budget(max_retries);
    if (attempt < 1)
        return verdict(RD_ELIG_UNKNOWN, false, "bad attempt number %d", attempt);
    if (!status || strcmp(status, "failed") != 0)
        return verdict(RD_ELIG_NO, false, "newest attempt is %s", status ? status : "unknown");
    if (!retry_alakai_exhausted(attempt, max_retries))
        return verdict(RD_ELIG_YES, false, "attempt %d <= MAX_RETRIES %d", attempt, m);
    return verdict(RD_ELIG_NO, false, "budget exhausted (attempt %d > MAX_RETRIES %d)",
                   attempt, m);
}

rd_verdict retry_openagents(const char *status, int retry_count, int max_retries)
{
    int m = max_retries < 0 ? 0 : max_retries;
    int n = retry_count < 0 ? 0 : retry_count;
    if (!status || strcasecmp(status, "failed") != 0)
        return verdict(RD_ELIG_NO, false, "status %s (only failed jobs retry)",
                       status ? status : "unknown");
    if (m == 0)
        return verdict(RD_ELIG_NO, false, "no retry budget (max_retries 0)");
    if (n < m)
        return verdict(RD_ELIG_YES, false, "retry %d of %d allowed", n + 1, m);
    return verdict(RD_ELIG_NO, false, "budget exhausted (%d/%d retries)", n, m);
}

/* Number field with a default; false when present but not a sane number. */
static bool num_field(const cJSON *o, const char *k, double def, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!v || cJSON_IsNull(v)) {
        *out = def;
        return true;
    }
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
        return false;
    *out = v->valuedouble;
    return true;
}

/* OpenAgents: delay * (1 ± jitter), jitter clamped to [0,1], floored at 1 s when jittered. */
static void jitter_range(double d, double jitter, double *lo, double *hi)
{
    double j = jitter > 1 ? 1 : jitter;
    *lo = *hi = d;
    if (j > 0) {
        *lo = fmax(1, d * (1 - j));
        *hi = fmax(1, d * (1 + j));
    }
}

static bool policy_range(const cJSON *o, int retry_count, double *lo, double *hi)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "type");
    double jit, d;
    if (!cJSON_IsString(t) || !num_field(o, "jitter", 0, &jit))
        return false;
    if (strcmp(t->valuestring, "fixed_delay") == 0) {
        if (!num_field(o, "delay", 30, &d))
            return false;
    } else if (strcmp(t->valuestring, "exponential_backoff") == 0) {
        double init, max, mult;
        if (!num_field(o, "initial_delay", 5, &init) || !num_field(o, "max_delay", 300, &max) ||
            !num_field(o, "multiplier", 2, &mult))
            return false;
        /* attempt is 1-based in OpenAgents: the next attempt is retry_count + 1 */
        d = init * pow(mult, retry_count < 0 ? 0 : retry_count);
        if (!(d <= max))
            d = max;
    } else {
        return false;
    }
    jitter_range(d, jit, lo, hi);
    return true;
}

bool retry_openagents_delay(const char *policy_json, int retry_delay_s, int retry_count,
                            double *lo, double *hi)
{
    *lo = *hi = 0;
    bool ok = false;
    size_t n = policy_json ? strnlen(policy_json, POLICY_MAX_BYTES + 1) : 0;
    if (n > 0 && n <= POLICY_MAX_BYTES) {
        cJSON *o = cJSON_ParseWithLength(policy_json, n);
        ok = cJSON_IsObject(o) && policy_range(o, retry_count, lo, hi);
        cJSON_Delete(o);
    }
    if (!ok && retry_delay_s >= 0) {
        *lo = *hi = retry_delay_s;
        ok = true;
    }
    if (!ok)
        *lo = *hi = 0;
    return ok;
}
