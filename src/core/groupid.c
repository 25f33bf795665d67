#include "groupid.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "suggest.h"

uint64_t groupid_hash(const char *fp)
{
    uint64_t h = 0xcbf29ce484222325ull;   /* FNV-1a 64: offset basis, prime 0x100000001b3 */
    for (const unsigned char *p = (const unsigned char *)(fp ? fp : ""); *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ull;
    }
    return h;
}

static void hex16(const char *fp, char out[GROUPID_MAX + 1])
{
    snprintf(out, GROUPID_MAX + 1, "%016" PRIx64, groupid_hash(fp));
}

void groupid_make(const char *fp, char out[GROUPID_LEN + 1])
{
    char h[GROUPID_MAX + 1];
    hex16(fp, h);
    memcpy(out, h, GROUPID_LEN);
    out[GROUPID_LEN] = 0;
}

bool groupid_shaped(const char *text)
{
    size_t n = text ? strlen(text) : 0;
    if (n < GROUPID_MIN || n > GROUPID_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isxdigit((unsigned char)text[i]))
            return false;
    return true;
}

static bool id_starts(const char *fp, const char *prefix)
{
    char h[GROUPID_MAX + 1];
    hex16(fp, h);
    for (size_t i = 0; prefix[i]; i++)
        if (h[i] != tolower((unsigned char)prefix[i]))
            return false;
    return true;
}

groupid_result groupid_resolve(const rd_group *g, size_t n, const char *text, size_t *at, char *why,
                               size_t cap)
{
    if (why && cap)
        why[0] = 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(g[i].fp, text) == 0) {
            *at = i;
            return GROUPID_FOUND;
        }
    if (!groupid_shaped(text))
        return GROUPID_FP;
    size_t hits = 0;
    char names[4 * (GROUPID_LEN + 2)] = "";
    suggest sg;
    suggest_init(&sg, text);
    for (size_t i = 0; i < n; i++) {
        char id[GROUPID_LEN + 1];
        groupid_make(g[i].fp, id);
        suggest_add(&sg, id);
        if (!id_starts(g[i].fp, text))
            continue;
        if (hits++ == 0)
            *at = i;
        if (hits <= 4) {
            size_t l = strlen(names);
            snprintf(names + l, sizeof names - l, "%s%s", l ? ", " : "", id);
        }
    }
    if (hits == 1)
        return GROUPID_FOUND;
    if (hits == 0) {
        char hint[200];
        snprintf(why, cap, "no error group has the id '%s' (of %zu group%s)%s", text, n, n == 1 ? "" : "s",
                 suggest_text(&sg, hint, sizeof hint));
        return GROUPID_NONE;
    }
    snprintf(why, cap, "the id '%s' names %zu groups (%s%s): give more of its digits", text, hits, names,
             hits > 4 ? ", ..." : "");
    return GROUPID_MANY;
}
