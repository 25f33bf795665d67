/* The sweep's keys read ahead (src/sources/redis_keyq.c): first in, first out, exact keys
 * (binary, empty), and memory that follows the keys waiting, not the keys ever pushed. */
#include <stdio.h>
#include <string.h>

#include "../../src/sources/redis_keyq.h"
#include "check.h"

/* Pops one key and compares it with want (len bytes). */
static void pop_is(rs_keyq *q, const char *want, size_t len)
{
    size_t got_len = 99;
    const char *got = rs_keyq_pop(q, &got_len);
    CHECK_MSG(got && got_len == len && memcmp(got, want, len) == 0, want);
}

int main(void)
{
    rs_keyq *q = rs_keyq_new();
    size_t len;
    CHECK(rs_keyq_pop(q, &len) == NULL && rs_keyq_len(q) == 0);
    rs_keyq_push(q, "p:a", 3);
    rs_keyq_push(q, "p:\0b", 4);                   /* a NUL inside: kept by its length */
    rs_keyq_push(q, "", 0);
    CHECK(rs_keyq_len(q) == 3);
    pop_is(q, "p:a", 3);
    pop_is(q, "p:\0b", 4);
    pop_is(q, "", 0);
    CHECK(rs_keyq_pop(q, &len) == NULL);

    /* a sweep of 1,000,000 keys, 1,000 pushed a SCAN step, popped as the fetches drain
       it, never more than ~3,000 waiting: the order holds and the memory stays that of
       ~3,000 keys */
    unsigned pushed = 0, popped = 0;
    size_t most = 0;
    char key[32];
    while (popped < 1000000) {
        if (pushed < 1000000 && rs_keyq_len(q) < 2000)
            for (int i = 0; i < 1000; i++, pushed++) {
                int n = snprintf(key, sizeof key, "bench:task-%07u", pushed);
                rs_keyq_push(q, key, (size_t)n);
            }
        for (int i = 0; i < 125 && rs_keyq_len(q) > 0; i++, popped++) {
            int n = snprintf(key, sizeof key, "bench:task-%07u", popped);
            pop_is(q, key, (size_t)n);
        }
        most = rs_keyq_memory(q) > most ? rs_keyq_memory(q) : most;
    }
    CHECK(rs_keyq_len(q) == 0);
    char msg[64];
    snprintf(msg, sizeof msg, "%zu bytes", most);
    CHECK_MSG(most < 3000 * 32 * 2, msg);          /* ~3,000 keys of 18 bytes + offsets */
    rs_keyq_push(q, "x", 1);
    rs_keyq_clear(q);
    CHECK(rs_keyq_len(q) == 0 && rs_keyq_pop(q, &len) == NULL);
    rs_keyq_free(q);
    return check_done("redis_keyq");
}
