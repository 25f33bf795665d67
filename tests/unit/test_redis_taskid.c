/* Compact task ids (src/sources/redis_taskid.c): every id comes back exactly, the form
 * follows from the id alone, and the quick order agrees with strcmp. */
#include <string.h>

#include "../../src/sources/redis_taskid.h"
#include "check.h"

/* Encodes id (its prefix interned as 7 when prefixed) and decodes it again. */
static size_t roundtrip(const char *id, size_t len, uint8_t *enc, char *out)
{
    rtid_parts p;
    if (!rtid_split(id, len, &p))
        return 0;
    size_t n = rtid_encode(id, len, &p, p.prefixed ? 7 : 0, enc);
    CHECK_MSG(rtid_enc_len(enc) == n, id);
    CHECK_MSG(rtid_prefix(enc) == (p.prefixed ? 7u : 0u), id);
    rtid_decode(enc, id, p.plen, out);
    return n;
}

int main(void)
{
    static const struct { const char *id; size_t enc; } ids[] = {
        { "task-0000123", 3 },                        /* form and width, prefix id, 123 */
        { "task-1", 3 },
        { "task-0000000", 3 },                        /* zeros kept by the digit count */
        { "12345", 4 },                               /* no prefix */
        { "t9999999999999999999", 12 },               /* 19 digits: the largest number */
        { "t99999999999999999999", 23 },              /* 20 digits: raw */
        { "job-2026-11-27-7", 18 },                   /* digits in the prefix: raw */
        { "task-", 7 },                               /* no digits: raw */
        { "550e8400-e29b-41d4-a716-446655440000", 17 },   /* UUID: 16 bytes */
        { "550E8400-E29B-41D4-A716-446655440000", 38 },   /* upper case: raw, exact */
        { "550e8400-e29b-41d4-a716-44665544000g", 38 },
        { "caf\xc3\xa9-42", 3 },                      /* UTF-8 prefix */
    };
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
        uint8_t enc[RTID_ENC_MAX];
        char out[RTID_ID_MAX + 1];
        size_t n = roundtrip(ids[i].id, strlen(ids[i].id), enc, out);
        CHECK_STR(out, ids[i].id);
        CHECK_MSG(n == ids[i].enc, ids[i].id);
    }
    char longest[RTID_ID_MAX + 1];
    memset(longest, 'x', RTID_ID_MAX);
    longest[RTID_ID_MAX] = '\0';
    uint8_t enc[RTID_ENC_MAX];
    char out[RTID_ID_MAX + 1];
    CHECK(roundtrip(longest, RTID_ID_MAX, enc, out) == RTID_ID_MAX + 2);
    CHECK_STR(out, longest);
    rtid_parts p;
    CHECK(!rtid_split(longest, RTID_ID_MAX + 1, &p) && !rtid_split("", 0, &p));
    /* quick order: same prefix and width compare as numbers; otherwise "write out" (2)
     * (each pair's prefixes are the same text, interned as 7) */
    static const char *const ord[][2] = {
        { "task-0000009", "task-0000010" }, { "task-1", "task-10" }, { "a-5", "a-4" },
        { "task-0000123", "x" },
    };
    static const int want[] = { -1, 2, 1, 2 };
    for (size_t i = 0; i < sizeof ord / sizeof *ord; i++) {
        uint8_t a[RTID_ENC_MAX], b[RTID_ENC_MAX];
        rtid_parts pa, pb;
        rtid_split(ord[i][0], strlen(ord[i][0]), &pa);
        rtid_split(ord[i][1], strlen(ord[i][1]), &pb);
        rtid_encode(ord[i][0], strlen(ord[i][0]), &pa, 7, a);
        rtid_encode(ord[i][1], strlen(ord[i][1]), &pb, 7, b);
        int q = rtid_quick_cmp(a, b);
        CHECK_MSG(q == want[i], ord[i][0]);
        if (q != 2)
            CHECK(q == (strcmp(ord[i][0], ord[i][1]) > 0) - (strcmp(ord[i][0], ord[i][1]) < 0));
        CHECK(rtid_quick_cmp(a, a) == ((a[0] & 3) == 0 ? 0 : 2));
    }
    return check_done("redis_taskid");
}
