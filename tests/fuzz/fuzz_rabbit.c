/* RabbitMQ management answers: the paged queue list and the messages of a DLQ peek
 * (x-death headers, base64 payloads, Attune / Tasker envelopes). The first byte picks
 * the decoder, the rest is the body (exact size, not NUL-terminated). Lengths stay
 * capped, every entry is complete, and decoding twice appends as many entries again. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/sources/rabbit_decode.h"
#include "fuzz.h"

enum { NAME_CAP = 512, MAX_QUEUES = 20000 };   /* rabbit_decode.c */

static void check_queues(const rb_queue_page *p)
{
    FUZZ_ASSERT(p->n <= MAX_QUEUES && p->page_count >= -1);
    for (size_t i = 0; i < p->n; i++) {
        const rd_queue *q = &p->items[i];
        FUZZ_ASSERT(q->name && strlen(q->name) < NAME_CAP);
        FUZZ_ASSERT(q->depth >= -1 && q->ready >= -1 && q->unacked >= -1 &&
                    q->consumers >= -1 && q->ttl_ms >= -1);
        FUZZ_ASSERT(q->publish_rate >= -1 && q->deliver_rate >= -1);
        FUZZ_ASSERT(!q->dead_letter_exchange || strlen(q->dead_letter_exchange) < NAME_CAP);
    }
}

static void check_entries(const rd_dlq_entry *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const rd_dlq_entry *d = &e[i];
        FUZZ_ASSERT(d->id && strlen(d->id) < 200 && d->queue && strcmp(d->queue, "q.dlq") == 0);
        FUZZ_ASSERT(!d->reason || strlen(d->reason) < 64);
        FUZZ_ASSERT(!d->origin_queue || strlen(d->origin_queue) < NAME_CAP);
        FUZZ_ASSERT(!d->execution_id || (d->execution_id[0] && strlen(d->execution_id) < 128));
        FUZZ_ASSERT(!d->payload || strlen(d->payload) <= RB_PAYLOAD_CAP + 9);
        FUZZ_ASSERT(d->count >= -1 && d->first_death_at >= 0 && d->last_death_at >= 0);
        FUZZ_ASSERT(d->first_death_at <= d->last_death_at);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536)
        return 0;
    unsigned mode = data[0];
    char *body = malloc(size - 1 ? size - 1 : 1);
    if (!body)
        abort();
    memcpy(body, data + 1, size - 1);
    char why[128] = "";
    if (mode & 1) {
        rd_dlq_entry *items = NULL;
        size_t n = 0;
        if (rb_decode_messages(body, size - 1, "q.dlq", &items, &n, why, sizeof why)) {
            size_t first = n;
            check_entries(items, n);
            FUZZ_ASSERT(rb_decode_messages(body, size - 1, "q.dlq", &items, &n, why,
                                           sizeof why));
            FUZZ_ASSERT(n == 2 * first);
            check_entries(items, n);
        } else {
            FUZZ_ASSERT(n == 0 && why[0]);
        }
        for (size_t i = 0; i < n; i++)
            dlq_entry_clear(&items[i]);
        free(items);
    } else {
        rb_globs show, dlq;
        rb_globs_parse(&show, mode & 2 ? "orders.*, jobs ,,[a-c]?" : "");
        rb_globs_parse(&dlq, "*.dead,*-dlx");
        FUZZ_ASSERT(show.n == (mode & 2 ? 3u : 0u) && dlq.n == 2);
        rb_queue_page page = { .page_count = -1 };
        if (rb_decode_queues(body, size - 1, &show, &dlq, &page, why, sizeof why))
            check_queues(&page);
        else
            FUZZ_ASSERT(page.n == 0 && why[0]);
        rb_queue_page_free(&page);
        rb_globs_free(&show);
        rb_globs_free(&dlq);
    }
    free(body);
    return 0;
}
