/* Tampered numbers in a snapshot read back (core/model_json_read.c, the last-known cache's
 * body): each is range-checked before it is kept or cast; out of range reads as unknown. */
#include "model.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model_json.h"

#define NOW 1700000000.0

static void test_rates_and_counts(void)
{
    const char *j = "{\"workers\": [{\"id\": \"w\", \"failure_rate\": 1e300, \"in_flight\": 1e300,"
                    " \"queue_depth\": -1e300, \"consecutive_failures\": 9223372036854775808},"
                    " {\"id\": \"v\", \"failure_rate\": 1.5}, {\"id\": \"u\", \"failure_rate\": 0.25}],"
                    " \"queues\": [{\"name\": \"q\", \"publish_rate\": 1e300, \"deliver_rate\": -1e300,"
                    " \"depth\": 1e300, \"consumers\": 1e19, \"ttl_ms\": 1e300},"
                    " {\"name\": \"r\", \"publish_rate\": 12.5, \"deliver_rate\": 1e12}],"
                    " \"failing_rate\": 1e300, \"dlq_total\": 1e300}";
    rd_model *m = model_new();
    char err[64];
    CHECK_MSG(model_from_json(m, j, NOW, err, sizeof err), err);
    CHECK(m->workers.n == 3);
    if (m->workers.n == 3) {
        rd_worker *w = m->workers.items;
        CHECK(w[0].failure_rate == -1 && w[0].in_flight == -1 && w[0].queue_depth == -1);
        CHECK(w[0].consecutive_failures == -1);
        CHECK(w[1].failure_rate == -1);             /* a fraction: 1.5 is no rate */
        CHECK(w[2].failure_rate == 0.25);
    }
    CHECK(m->queues.n == 2);
    if (m->queues.n == 2) {
        rd_queue *q = m->queues.items;
        CHECK(q[0].publish_rate == -1 && q[0].deliver_rate == -1 && q[0].depth == -1);
        CHECK(q[0].consumers == -1 && q[0].ttl_ms == -1);
        CHECK(q[1].publish_rate == 12.5 && q[1].deliver_rate == 1e12);
    }
    CHECK(m->failing_rate == -1);
    model_free(m);
}

/* The snapshot's "now" is a time like any other: an absurd one is not the clock ages count
 * back from (the caller's is). */
static void test_now(void)
{
    static const char *const nows[] = { "1e300", "-1e300", "1e11", "0", "-5" };
    for (size_t i = 0; i < sizeof nows / sizeof *nows; i++) {
        char j[256];
        snprintf(j, sizeof j, "{\"now\": %s, \"workers\": [{\"heartbeat_age_s\": 30}],"
                 " \"sources\": [{\"name\": \"pg\", \"age_ms\": 500}]}", nows[i]);
        rd_model *m = model_new();
        char err[64];
        CHECK_MSG(model_from_json(m, j, NOW, err, sizeof err), nows[i]);
        CHECK_MSG(m->workers.n == 1 && m->workers.items[0].heartbeat_at == NOW - 30, nows[i]);
        CHECK_MSG(m->sources.n == 1 && m->sources.items[0].last_ok == NOW - 0.5, nows[i]);
        model_free(m);
    }
}

int main(void)
{
    test_rates_and_counts();
    test_now();
    return check_done("model_read");
}
