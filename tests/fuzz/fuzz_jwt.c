/* JWT claims (exp, and the identity from sub/email/...), read without verification.
 * Input byte 0 even: the rest is the token as received. Odd: the rest is a claims
 * payload, base64url-encoded into "header.PAYLOAD.signature" here, so the decoder
 * must find exactly what a JSON parser finds in it. */
#include <cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/actions/auth.h"
#include "fuzz.h"

static char *jwt_of(const uint8_t *p, size_t n)
{
    static const char tbl[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    char *t = malloc(21 + (n + 2) / 3 * 4 + 6), *o = t;   /* header, payload, ".c2ln\0" */
    if (!t)
        abort();
    memcpy(o, "eyJhbGciOiJIUzI1NiJ9.", 21);
    o += 21;
    size_t i = 0;
    for (; i + 2 < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
        *o++ = tbl[v >> 18 & 63], *o++ = tbl[v >> 12 & 63];
        *o++ = tbl[v >> 6 & 63], *o++ = tbl[v & 63];
    }
    if (n - i == 1) {
        *o++ = tbl[p[i] >> 2], *o++ = tbl[(p[i] & 3) << 4];
    } else if (n - i == 2) {
        unsigned v = (unsigned)p[i] << 8 | p[i + 1];
        *o++ = tbl[v >> 10], *o++ = tbl[v >> 4 & 63], *o++ = tbl[(v & 15) << 2];
    }
    memcpy(o, ".c2ln", 6);
    return t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 16384)
        return 0;
    bool encode = data[0] & 1;
    char *tok = encode ? jwt_of(data + 1, size - 1) : fuzz_cstr(data + 1, size - 1);
    double exp = -7;
    char *ident = strdup("previous");
    bool ok = auth_jwt_claims(tok, &exp, &ident);
    FUZZ_ASSERT(exp == -7 || (isfinite(exp) && exp > 0));
    FUZZ_ASSERT(ident && strlen(ident) <= 128);
    if (!ok)
        FUZZ_ASSERT(exp == -7 && strcmp(ident, "previous") == 0);
    if (encode) {
        cJSON *o = cJSON_ParseWithLength((const char *)data + 1, size - 1);
        FUZZ_ASSERT(ok == cJSON_IsObject(o));
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "exp");
        if (cJSON_IsNumber(e) && isfinite(e->valuedouble) && e->valuedouble > 0)
            FUZZ_ASSERT(exp == e->valuedouble);
        else
            FUZZ_ASSERT(exp == -7);
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "sub");
        if (cJSON_IsString(s) && s->valuestring[0])
            FUZZ_ASSERT(strncmp(ident, s->valuestring, 128) == 0);
        cJSON_Delete(o);
    }
    double exp2 = -7;
    auth_jwt_claims(tok, &exp2, NULL);   /* no identity wanted */
    FUZZ_ASSERT(exp2 == exp);
    free(ident);
    free(tok);
    return 0;
}
