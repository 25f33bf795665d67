#include "redis_taskid.h"

#include <stdio.h>
#include <string.h>

/* The first byte: the form in its low 2 bits; a prefixed id's digit count above them. */
enum { F_PREFIXED = 0, F_UUID = 1, F_RAW = 2 };
#define FORM(e) ((e)[0] & 3)

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static int hex_val(char c)
{
    if (is_digit(c))
        return c - '0';
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Canonical lower-case 8-4-4-4-12 UUID text into 16 bytes. */
static bool uuid_parse(const char *id, size_t len, uint8_t *out)
{
    if (len != 36)
        return false;
    size_t o = 0;
    for (size_t i = 0; i < 36;) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (id[i++] != '-')
                return false;
            continue;
        }
        int hi = hex_val(id[i]), lo = hex_val(id[i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        out[o++] = (uint8_t)(hi << 4 | lo);
        i += 2;
    }
    return true;
}

bool rtid_split(const char *id, size_t len, rtid_parts *p)
{
    memset(p, 0, sizeof *p);
    if (len == 0 || len > RTID_ID_MAX)
        return false;
    size_t d = len;
    while (d > 0 && is_digit(id[d - 1]))
        d--;
    size_t nd = len - d;
    if (nd == 0 || nd > 19 || d > RTID_PREFIX_MAX || memchr(id, 0, len))
        return true;
    for (size_t i = 0; i < d; i++)
        if (is_digit(id[i]))
            return true;              /* digits inside the prefix: raw (prefixes stay few) */
    uint64_t v = 0;
    for (size_t i = d; i < len; i++)
        v = v * 10 + (uint64_t)(id[i] - '0');
    *p = (rtid_parts){ .prefixed = true, .plen = d, .num = v, .ndigits = (uint8_t)nd };
    return true;
}

static size_t varint_put(uint8_t *o, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        o[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    o[n++] = (uint8_t)v;
    return n;
}

static size_t varint_get(const uint8_t *e, uint64_t *v)
{
    size_t n = 0;
    unsigned shift = 0;
    *v = 0;
    do {
        *v |= (uint64_t)(e[n] & 0x7F) << shift;
        shift += 7;
    } while (e[n++] & 0x80);
    return n;
}

size_t rtid_encode(const char *id, size_t len, const rtid_parts *p, uint32_t prefix_id,
                   uint8_t *out)
{
    if (p->prefixed) {
        out[0] = (uint8_t)(F_PREFIXED | p->ndigits << 2);
        size_t n = 1 + varint_put(out + 1, prefix_id);
        return n + varint_put(out + n, p->num);
    }
    if (uuid_parse(id, len, out + 1)) {
        out[0] = F_UUID;
        return 17;
    }
    out[0] = F_RAW;
    out[1] = (uint8_t)len;
    memcpy(out + 2, id, len);
    return 2 + len;
}

/* A prefixed id's fields; returns the encoded length. */
static size_t prefixed_get(const uint8_t *e, uint64_t *prefix, uint8_t *nd, uint64_t *num)
{
    size_t n = 1 + varint_get(e + 1, prefix);
    *nd = e[0] >> 2;
    return n + varint_get(e + n, num);
}

size_t rtid_enc_len(const uint8_t *e)
{
    uint64_t prefix, num;
    uint8_t nd;
    switch (FORM(e)) {
    case F_PREFIXED: return prefixed_get(e, &prefix, &nd, &num);
    case F_UUID: return 17;
    default: return 2 + (size_t)e[1];
    }
}

uint32_t rtid_prefix(const uint8_t *e)
{
    if (FORM(e) != F_PREFIXED)
        return 0;
    uint64_t prefix;
    varint_get(e + 1, &prefix);
    return (uint32_t)prefix;
}

size_t rtid_decode(const uint8_t *e, const char *prefix, size_t plen, char *out)
{
    if (FORM(e) == F_UUID) {
        static const char hex[] = "0123456789abcdef";
        size_t o = 0;
        for (int i = 0; i < 16; i++) {
            if (i == 4 || i == 6 || i == 8 || i == 10)
                out[o++] = '-';
            out[o++] = hex[e[1 + i] >> 4];
            out[o++] = hex[e[1 + i] & 15];
        }
        out[o] = '\0';
        return o;
    }
    if (FORM(e) != F_PREFIXED) {
        memcpy(out, e + 2, e[1]);
        out[e[1]] = '\0';
        return e[1];
    }
    uint64_t pid, num;
    uint8_t nd;
    prefixed_get(e, &pid, &nd, &num);
    memcpy(out, prefix, plen);
    for (size_t i = nd; i-- > 0; num /= 10)
        out[plen + i] = (char)('0' + num % 10);
    out[plen + nd] = '\0';
    return plen + nd;
}

int rtid_quick_cmp(const uint8_t *a, const uint8_t *b)
{
    if (FORM(a) != F_PREFIXED || FORM(b) != F_PREFIXED)
        return 2;
    uint64_t pa, pb, na, nb;
    uint8_t da, db;
    prefixed_get(a, &pa, &da, &na);
    prefixed_get(b, &pb, &db, &nb);
    if (pa != pb || da != db)
        return 2;
    return na < nb ? -1 : na > nb;
}
