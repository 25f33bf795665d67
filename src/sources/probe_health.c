/* Loose decoding of a worker's /health answer (see probe_health.h). */
#include "probe_health.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"

static const cJSON *find_key(const cJSON *o, const char *const *keys, int depth)
{
    if (!cJSON_IsObject(o) || depth > 3)
        return NULL;
    for (const char *const *k = keys; *k; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, *k);
        if (cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= 0)
            return v;
    }
    const cJSON *c;
    cJSON_ArrayForEach(c, o) {
        const cJSON *v = find_key(c, keys, depth + 1);
        if (v)
            return v;
    }
    return NULL;
}

static double num_key(const cJSON *o, const char *const *keys, double cap)
{
    const cJSON *v = find_key(o, keys, 0);
    return v && v->valuedouble <= cap ? v->valuedouble : -1;
}

static void parse_rate(const cJSON *root, pr_metrics *m)
{
    static const char *const rate_k[] = { "failure_rate", "failureRate", "error_rate", NULL };
    static const char *const total_k[] = { "total_executions", "total", "processed", NULL };
    static const char *const failed_k[] = { "failed_executions", "failed", "failures", NULL };
    double r = num_key(root, rate_k, 100);
    if (r > 1)
        r /= 100;                    /* a percentage */
    if (r < 0) {
        double total = num_key(root, total_k, 1e15), failed = num_key(root, failed_k, 1e15);
        if (total > 0 && failed >= 0 && failed <= total)
            r = failed / total;
    }
    m->rate = r;
}

static void parse_health(const cJSON *root, pr_metrics *m)
{
    static const char *const depth_k[] = { "queue_depth", "queueDepth", "queue_size",
                                           "queue_length", "pending", "backlog", NULL };
    static const char *const fly_k[] = { "in_flight", "inflight", "active", "active_tasks",
                                         "active_steps", "running", NULL };
    static const char *const cap_k[] = { "capacity", "max_concurrent", "max_concurrent_steps",
                                         "max_concurrent_jobs", "concurrency", NULL };
    static const char *const fail_k[] = { "consecutive_failures", "consecutiveFailures", NULL };
    memset(m, 0, sizeof *m);
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(root, "status");
    if (!cJSON_IsString(st))
        st = cJSON_GetObjectItemCaseSensitive(root, "health");
    if (cJSON_IsString(st)) {
        snprintf(m->status, sizeof m->status, "%s", st->valuestring);
        for (char *c = m->status; *c; c++)
            *c = (char)tolower((unsigned char)*c);
    }
    m->depth = (long)num_key(root, depth_k, 1e12);
    m->in_flight = (int)num_key(root, fly_k, 1e6);
    m->capacity = (int)num_key(root, cap_k, 1e6);
    m->failures = (int)num_key(root, fail_k, 1e6);
    parse_rate(root, m);
}

bool probe_health_decode(const char *body, size_t len, pr_metrics *m)
{
    /* an exact copy: the body may hold NUL bytes, and cJSON must not read past it */
    char *buf = xmalloc(len + 1);
    if (len)
        memcpy(buf, body, len);
    buf[len] = '\0';
    cJSON *root = cJSON_ParseWithLengthOpts(buf, len + 1, NULL, 1);
    free(buf);
    bool ok = cJSON_IsObject(root);
    if (ok)
        parse_health(root, m);
    cJSON_Delete(root);
    return ok;
}
