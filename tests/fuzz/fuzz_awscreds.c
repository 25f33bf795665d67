/* AWS credentials from outside (io/awscreds.c): byte 0 picks the decoder.
 *   even: a credential_process / ECS / IMDS JSON answer (`awscreds_parse_json`): usable
 *         exactly when both keys are non-empty strings; on refusal nothing is handed back
 *         and the reason never quotes the answer; the expiry is finite.
 *   odd:  a shared credentials (bit 1 clear) or config (bit 1 set) file, profile picked by
 *         bits 2-3 (`awscreds_profile_parse`): every value found is free of control
 *         bytes (a tab aside) and occurs in the text, and reading the file twice gives
 *         the same values.
 * The text is exact-size (not NUL-terminated) and may hold NUL bytes. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/io/awscreds.h"
#include "../../src/io/awscreds_file.h"
#include "fuzz.h"

static void check_json(const char *text, size_t len)
{
    rd_aws_creds k;
    char why[160];
    memset(&k, 0x5A, sizeof k);
    why[0] = '\0';
    bool ok = awscreds_parse_json(text, len, &k, why, sizeof why);
    if (!ok) {
        FUZZ_ASSERT(!k.access_key && !k.secret_key && !k.token && k.expires == 0);
        FUZZ_ASSERT(why[0] && memchr(why, '\0', sizeof why));
        /* fixed wording: nothing of the answer (which may hold a secret) in it */
        FUZZ_ASSERT(!strpbrk(why, "\"{}\\"));
        return;
    }
    FUZZ_ASSERT(k.access_key && *k.access_key && k.secret_key && *k.secret_key);
    FUZZ_ASSERT(!k.token || *k.token);
    FUZZ_ASSERT(isfinite(k.expires));
    awscreds_clear(&k);
    FUZZ_ASSERT(!k.access_key && !k.secret_key && !k.token);
}

static void check_value(const char *v, const char *text, size_t len)
{
    if (!v)
        return;
    for (const unsigned char *p = (const unsigned char *)v; *p; p++)
        FUZZ_ASSERT((*p >= 0x20 || *p == '\t') && *p != 0x7f);
    FUZZ_ASSERT(memmem(text, len, v, strlen(v)));
}

static bool same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void check_file(const char *text, size_t len, bool config, const char *name)
{
    prof_vals v = { 0 }, w = { 0 };
    awscreds_profile_parse("fuzz.ini", text, len, name, config, &v);
    awscreds_profile_parse("fuzz.ini", text, len, name, config, &w);
    const char *vals[] = { v.ak, v.sk, v.tok, v.process, v.region };
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++)
        check_value(vals[i], text, len);
    FUZZ_ASSERT(same(v.ak, w.ak) && same(v.sk, w.sk) && same(v.tok, w.tok) &&
                same(v.process, w.process) && same(v.region, w.region));
    prof_vals_free(&v);
    prof_vals_free(&w);
    FUZZ_ASSERT(!v.ak && !v.sk && !v.tok && !v.process && !v.region);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536)
        return 0;
    static const char *const names[] = { "default", "prod", "a b", "profile" };
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    char *own = malloc(len ? len : 1);      /* exact size: reads past the end are caught */
    if (!own)
        abort();
    if (len)
        memcpy(own, text, len);
    if (data[0] & 1)
        check_file(len ? own : NULL, len, data[0] & 2, names[(data[0] >> 2) & 3]);
    else
        check_json(own, len);
    free(own);
    return 0;
}
