/* Alakai ExecutionRecord JSON (one attempt field of a Redis hash), the timestamp reader
 * and the attempt field names. Fields stay within their caps and ranges, and a record
 * is valid exactly when no reason is given. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/sources/redis_record.h"
#include "fuzz.h"

static void check_time(double t)
{
    FUZZ_ASSERT(isfinite(t) && t >= 0);
}

static bool same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Whatever the scanner accepts, cJSON's reader reads the same record from. */
static void check_scanner(const uint8_t *data, size_t size)
{
    rd_alakai_rec fast, tree;
    bool valid;
    if (!alakai_rec_scan((const char *)data, size, &fast, &valid))
        return;
    bool ok = alakai_rec_decode_tree((const char *)data, size, &tree);
    FUZZ_ASSERT(ok == valid);
    FUZZ_ASSERT(strcmp(fast.status, tree.status) == 0 && fast.attempt == tree.attempt);
    FUZZ_ASSERT(strcmp(fast.code, tree.code) == 0 && strcmp(fast.why, tree.why) == 0);
    FUZZ_ASSERT(same_text(fast.error, tree.error) && same_text(fast.name, tree.name));
    FUZZ_ASSERT(fast.dispatched_at == tree.dispatched_at && fast.resolved_at == tree.resolved_at);
    alakai_rec_clear(&fast);
    alakai_rec_clear(&tree);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    rd_alakai_rec r;
    /* the exact bytes, no terminating NUL: the decoder must go by the length */
    bool ok = alakai_rec_decode((const char *)data, size, &r);
    FUZZ_ASSERT(ok == (r.why[0] == '\0'));
    FUZZ_ASSERT(memchr(r.why, '\0', sizeof r.why) && memchr(r.status, '\0', sizeof r.status));
    FUZZ_ASSERT(memchr(r.code, '\0', sizeof r.code));
    for (const char *c = r.status; *c; c++)
        FUZZ_ASSERT(!(*c >= 'A' && *c <= 'Z'));
    FUZZ_ASSERT(r.attempt == -1 || (r.attempt >= 1 && r.attempt <= 1000000));
    FUZZ_ASSERT(!r.error || strlen(r.error) < RD_REC_ERROR_CAP);
    FUZZ_ASSERT(!r.name || (r.name[0] && strlen(r.name) < RD_REC_NAME_CAP));
    check_time(r.dispatched_at);
    check_time(r.resolved_at);
    if (ok)
        FUZZ_ASSERT(r.status[0]);
    alakai_rec_clear(&r);
    check_scanner(data, size);

    char *text = fuzz_cstr(data, size);
    double t = -1;
    if (alakai_parse_time(text, &t))
        FUZZ_ASSERT(isfinite(t) && t > 0);
    else
        FUZZ_ASSERT(t == 0);
    int v = alakai_field_num((const char *)data, size);
    if (v != -1) {               /* only the canonical spelling of 1..999999 */
        char back[16];
        snprintf(back, sizeof back, "%d", v);
        FUZZ_ASSERT(v >= 1 && v <= 999999 && strlen(back) == size &&
                    memcmp(back, data, size) == 0);
    }
    free(text);
    return 0;
}
