/* Sanitizer, width, fit, UTF-8 repair and fingerprint on arbitrary bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fingerprint.h"
#include "fuzz.h"
#include "sanitize.h"

static void check_clean(const char *s, unsigned flags)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        FUZZ_ASSERT(*p >= 0x20 || (*p == '\n' && (flags & SAN_KEEP_NL)));
        FUZZ_ASSERT(*p != 0x7f);
        if (flags & SAN_ASCII)
            FUZZ_ASSERT(*p < 0x80);
        if (*p == 0xC2)
            FUZZ_ASSERT(p[1] >= 0xA0);                       /* no C1 */
        if (*p == 0xE2 && p[1] == 0x80)
            FUZZ_ASSERT(p[2] < 0xAA || p[2] > 0xAE);         /* no U+202A..E */
        if (*p == 0xE2 && p[1] == 0x81)
            FUZZ_ASSERT(p[2] < 0xA6 || p[2] > 0xA9);         /* no U+2066..9 */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned flags = size ? data[0] & 3u : 0;
    int cols = size > 1 ? data[1] % 90 : 10;
    /* exact-size copy: the sanitizer must not read past len */
    char *buf = calloc(1, size ? size : 1);
    if (!buf)
        abort();
    if (size)
        memcpy(buf, data, size);
    char *clean = sanitize_bytes(buf, size, flags);
    check_clean(clean, flags);
    int w = sanitize_width(clean);
    FUZZ_ASSERT(w >= 0);
    char out[64];
    int used = sanitize_fit(clean, cols, out, sizeof out, flags);
    FUZZ_ASSERT(used <= (cols > 0 ? cols : 0));
    FUZZ_ASSERT(sanitize_width(out) == used);
    FUZZ_ASSERT(strlen(out) < sizeof out);
    char *fixed = sanitize_utf8(buf, size);
    char *again = sanitize_bytes(fixed, strlen(fixed), flags);
    free(again);
    char *cstr = fuzz_cstr(data, size);
    char fp[128];
    fingerprint_make(cstr, fp, sizeof fp);
    FUZZ_ASSERT(strlen(fp) < sizeof fp);
    char *fd = fingerprint_dup(cstr);
    free(fd);
    free(cstr);
    free(fixed);
    free(clean);
    free(buf);
    return 0;
}
