#pragma once
/*
 * Loose decoding of a worker's GET /health answer (tasker): a status, and whatever of
 * queue depth / in-flight / capacity / consecutive failures / failure rate it reports
 * under the usual key names, up to three objects deep. Pure (fuzzable): no I/O.
 */
#include <stdbool.h>
#include <stddef.h>

typedef struct pr_metrics {
    char status[32];                 /* reported, lower-case; "" none */
    long depth;                      /* -1 unknown (also in_flight, capacity, failures) */
    int in_flight, capacity, failures;
    double rate;                     /* failure rate 0..1, -1 unknown */
} pr_metrics;

/* Decodes body[0..len) (not NUL-terminated, may hold NUL bytes). false when it is not
 * a JSON object: m is then left as it was. */
bool probe_health_decode(const char *body, size_t len, pr_metrics *m);
