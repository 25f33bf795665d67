#pragma once
/*
 * Compact task ids for the Redis task index. An id is stored in one of three canonical
 * forms, chosen from its bytes alone (so an id always encodes the same way and encoded ids
 * compare byte for byte):
 *   - prefixed number: a prefix without digits (≤ RTID_PREFIX_MAX bytes, interned by the
 *     caller) then 1–19 digits ("task-0000123" in 3 bytes: the form with the digit
 *     count, the prefix's id, 123);
 *   - UUID: 36 characters 8-4-4-4-12 of lower-case hex, kept as 16 bytes;
 *   - raw: the bytes themselves (anything else, ≤ 255 bytes).
 * The exact id always comes back. Pure (no allocation).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { RTID_PREFIX_MAX = 64, RTID_ENC_MAX = 2 + 255, RTID_ID_MAX = 255 };

typedef struct rtid_parts {
    bool prefixed;             /* a prefix (id[0..plen)) and a number */
    size_t plen;
    uint64_t num;
    uint8_t ndigits;
} rtid_parts;

/* false when the id cannot be indexed (empty or longer than RTID_ID_MAX). */
bool rtid_split(const char *id, size_t len, rtid_parts *p);
/* The encoded id into out[RTID_ENC_MAX]; prefix_id: the interned prefix when p->prefixed. */
size_t rtid_encode(const char *id, size_t len, const rtid_parts *p, uint32_t prefix_id,
                   uint8_t *out);
/* An encoded id's length in bytes. */
size_t rtid_enc_len(const uint8_t *e);
/* The interned prefix id of a prefixed id, 0 otherwise. */
uint32_t rtid_prefix(const uint8_t *e);
/* The id written out (NUL-terminated) into out[RTID_ID_MAX + 1]; prefix: the text of
 * rtid_prefix(e) (ignored otherwise). Returns its length. */
size_t rtid_decode(const uint8_t *e, const char *prefix, size_t plen, char *out);
/* The order of two encoded ids when it follows from the encodings alone (same prefix, same
 * digit count: the numbers' order): -1/0/1; 2 when the ids must be written out to compare. */
int rtid_quick_cmp(const uint8_t *a, const uint8_t *b);
