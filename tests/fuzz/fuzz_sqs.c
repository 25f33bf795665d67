/* Amazon SQS replies: GetQueueAttributes, ReceiveMessage and errors (JSON, or the XML
 * of the Query protocol). Byte 0 picks the decoder (and the HTTP status of an error),
 * the rest is the body, exact size. Fields stay in range and capped; ReceiveMessage
 * never adds a message id twice, so decoding the same answer again adds nothing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/sources/sqs_decode.h"
#include "fuzz.h"

static void check_entries(const rd_dlq_entry *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const rd_dlq_entry *d = &e[i];
        FUZZ_ASSERT(d->id && d->id[0] && strlen(d->id) <= 128);
        FUZZ_ASSERT(d->queue && strcmp(d->queue, "tasks-dlq") == 0);
        for (size_t k = 0; k < i; k++)
            FUZZ_ASSERT(strcmp(e[k].id, d->id) != 0);
        FUZZ_ASSERT(!d->execution_id || strlen(d->execution_id) <= 256);
        FUZZ_ASSERT(!d->task_type || (d->task_type[0] && strlen(d->task_type) <= 128));
        FUZZ_ASSERT(!d->payload || strlen(d->payload) <= SQS_PAYLOAD_CAP);
        FUZZ_ASSERT(!d->origin_queue || strlen(d->origin_queue) < 96);
        FUZZ_ASSERT(d->attempt >= 0 && d->attempt < 1000000 && d->count >= -1);
        FUZZ_ASSERT(d->sent_at >= 0 && d->first_death_at >= 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const long statuses[] = { 400, 403, 404, 500, 503, 200, 413, 0 };
    if (size < 1 || size > 65536)
        return 0;
    unsigned mode = data[0] & 3;
    long status = statuses[data[0] >> 2 & 7];
    size_t len = size - 1;
    char *body = malloc(len ? len : 1);
    if (!body)
        abort();
    memcpy(body, data + 1, len);
    char why[160] = "";
    if (mode == 0) {
        sqs_attrs a;
        bool ok = sqs_decode_attrs(body, len, &a, why, sizeof why);
        FUZZ_ASSERT(ok ? a.visible >= 0 : why[0] != '\0');
        FUZZ_ASSERT(a.visible >= -1 && a.in_flight >= -1 && a.delayed >= -1 &&
                    a.retention_s >= -1 && a.max_receive >= 0);
        FUZZ_ASSERT(memchr(a.dlq_name, '\0', sizeof a.dlq_name));
    } else if (mode == 1) {
        char msg[200];
        bool throttled = false;
        memset(msg, 'x', sizeof msg);
        sqs_decode_error(len ? body : NULL, len, status, msg, sizeof msg, &throttled);
        FUZZ_ASSERT(memchr(msg, '\0', sizeof msg) && msg[0]);
        if (status == 503)
            FUZZ_ASSERT(throttled);
    } else if (mode == 2) {
        rd_dlq_entry *items = NULL;
        size_t n = 0;
        if (sqs_decode_messages(body, len, "tasks-dlq", &items, &n, why, sizeof why)) {
            size_t first = n;
            check_entries(items, n);
            FUZZ_ASSERT(sqs_decode_messages(body, len, "tasks-dlq", &items, &n, why,
                                            sizeof why));
            FUZZ_ASSERT(n == first);
        } else {
            FUZZ_ASSERT(n == 0 && why[0]);
        }
        for (size_t i = 0; i < n; i++)
            dlq_entry_clear(&items[i]);
        free(items);
    } else {
        char *url = fuzz_cstr(data + 1, len);
        char *name = sqs_queue_name(url);
        FUZZ_ASSERT(!name || (name[0] && !strchr(name, '/') && strstr(url, name)));
        free(name);
        free(url);
    }
    free(body);
    return 0;
}
