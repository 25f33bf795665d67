#include "sanitize.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/*
 * Strict UTF-8 decode of one code point. Returns the code point, or -1 for an
 * invalid sequence; *adv is the number of bytes consumed (the maximal invalid
 * subpart, at least 1). Overlongs, surrogates and > U+10FFFF are invalid.
 */
static long utf8_decode(const unsigned char *s, size_t len, size_t *adv)
{
    unsigned char c = s[0];
    *adv = 1;
    if (c < 0x80)
        return c;
    size_t need;
    long cp;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
        need = 1; cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 2; cp = c & 0x0F;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 3; cp = c & 0x07;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        return -1;
    }
    for (size_t i = 1; i <= need; i++) {
        if (i >= len)
            return -1;
        unsigned char b = s[i];
        unsigned char l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xBF;
        if (b < l || b > h)
            return -1;
        cp = (cp << 6) | (b & 0x3F);
        *adv = i + 1;
    }
    return cp;
}

static bool is_bidi(long cp)
{
    return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) ||
           cp == 0x200E || cp == 0x200F || cp == 0x061C ||
           cp == 0x2028 || cp == 0x2029;   /* line/paragraph separators too */
}

typedef struct sbuf { char *p; size_t n; } sbuf;

static void put(sbuf *b, const char *s, size_t n)
{
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

static void put_utf8(sbuf *b, long cp)
{
    char t[4];
    size_t n;
    if (cp < 0x80) {
        t[0] = (char)cp; n = 1;
    } else if (cp < 0x800) {
        t[0] = (char)(0xC0 | (cp >> 6)); t[1] = (char)(0x80 | (cp & 0x3F)); n = 2;
    } else if (cp < 0x10000) {
        t[0] = (char)(0xE0 | (cp >> 12)); t[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        t[2] = (char)(0x80 | (cp & 0x3F)); n = 3;
    } else {
        t[0] = (char)(0xF0 | (cp >> 18)); t[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        t[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); t[3] = (char)(0x80 | (cp & 0x3F)); n = 4;
    }
    put(b, t, n);
}

static void put_uplus(sbuf *b, long cp)
{
    char t[16];
    int n = snprintf(t, sizeof t, "<U+%04lX>", cp);
    put(b, t, (size_t)n);
}

static void put_c0(sbuf *b, long cp, unsigned flags)
{
    if (cp == '\n' && (flags & SAN_KEEP_NL)) {
        put(b, "\n", 1);
    } else if (flags & SAN_ASCII) {
        char t[2] = { '^', cp == 0x7F ? '?' : (char)(cp + 0x40) };
        put(b, t, 2);
    } else {
        put_utf8(b, cp == 0x7F ? 0x2421 : 0x2400 + cp);
    }
}

char *sanitize_bytes(const char *s, size_t len, unsigned flags)
{
    if (!s)
        len = 0;
    if (len > (SIZE_MAX - 1) / 4)
        abort();
    /* worst case: 2 input bytes (C1/U+061C) → 8 output bytes */
    sbuf b = { xmalloc(len * 4 + 1), 0 };
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        size_t adv;
        long cp = utf8_decode(u + i, len - i, &adv);
        i += adv;
        if (cp < 0)
            flags & SAN_ASCII ? put(&b, "?", 1) : put_utf8(&b, 0xFFFD);
        else if (cp < 0x20 || cp == 0x7F)
            put_c0(&b, cp, flags);
        else if (cp < 0x80)
            put_utf8(&b, cp);
        else if (cp < 0xA0 || is_bidi(cp))
            put_uplus(&b, cp);
        else if (flags & SAN_ASCII)
            put(&b, "?", 1);
        else
            put_utf8(&b, cp);
    }
    b.p[b.n] = '\0';
    return b.p;
}

char *sanitize_str(const char *s, unsigned flags)
{
    return sanitize_bytes(s ? s : "", s ? strlen(s) : 0, flags);
}

typedef struct range { long lo, hi; } range;

static const range zero_width[] = {
    { 0x0300, 0x036F }, { 0x0483, 0x0489 }, { 0x0591, 0x05BD }, { 0x05BF, 0x05BF },
    { 0x05C1, 0x05C2 }, { 0x05C4, 0x05C5 }, { 0x05C7, 0x05C7 }, { 0x0610, 0x061A },
    { 0x064B, 0x065F }, { 0x0670, 0x0670 }, { 0x06D6, 0x06DC }, { 0x06DF, 0x06E4 },
    { 0x0900, 0x0902 }, { 0x093C, 0x093C }, { 0x0941, 0x0948 }, { 0x094D, 0x094D },
    { 0x0E31, 0x0E31 }, { 0x0E34, 0x0E3A }, { 0x0E47, 0x0E4E }, { 0x1AB0, 0x1AFF },
    { 0x1DC0, 0x1DFF }, { 0x200B, 0x200D }, { 0x20D0, 0x20FF }, { 0xFE00, 0xFE0F },
    { 0xFE20, 0xFE2F }, { 0xFEFF, 0xFEFF }, { 0xE0100, 0xE01EF },
};

static const range wide[] = {
    { 0x1100, 0x115F }, { 0x231A, 0x231B }, { 0x2329, 0x232A }, { 0x23E9, 0x23EC },
    { 0x25FD, 0x25FE }, { 0x2614, 0x2615 }, { 0x2E80, 0x303E }, { 0x3041, 0x33FF },
    { 0x3400, 0x4DBF }, { 0x4E00, 0x9FFF }, { 0xA000, 0xA4CF }, { 0xA960, 0xA97F },
    { 0xAC00, 0xD7A3 }, { 0xF900, 0xFAFF }, { 0xFE10, 0xFE19 }, { 0xFE30, 0xFE6F },
    { 0xFF00, 0xFF60 }, { 0xFFE0, 0xFFE6 }, { 0x1F004, 0x1F004 }, { 0x1F0CF, 0x1F0CF },
    { 0x1F18E, 0x1F18E }, { 0x1F191, 0x1F19A }, { 0x1F200, 0x1F251 },
    { 0x1F300, 0x1F64F }, { 0x1F680, 0x1F6FF }, { 0x1F7E0, 0x1F7EB },
    { 0x1F900, 0x1F9FF }, { 0x1FA70, 0x1FAFF }, { 0x20000, 0x2FFFD }, { 0x30000, 0x3FFFD },
};

static bool in_ranges(long cp, const range *r, size_t n)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < r[mid].lo)
            hi = mid;
        else if (cp > r[mid].hi)
            lo = mid + 1;
        else
            return true;
    }
    return false;
}

static int cp_width(long cp)
{
    if (cp < 0)
        return 1;
    if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0))
        return 0;   /* never in sanitized text */
    if (cp < 0x300)
        return 1;
    if (in_ranges(cp, zero_width, sizeof zero_width / sizeof *zero_width))
        return 0;
    if (in_ranges(cp, wide, sizeof wide / sizeof *wide))
        return 2;
    return 1;
}

int sanitize_width(const char *clean)
{
    if (!clean)
        return 0;
    const unsigned char *u = (const unsigned char *)clean;
    size_t len = strlen(clean), i = 0;
    int w = 0;
    while (i < len) {
        size_t adv;
        long cp = utf8_decode(u + i, len - i, &adv);
        i += adv;
        w += cp_width(cp);
    }
    return w;
}

int sanitize_raw_width(const char *raw, unsigned flags)
{
    if (!raw)
        return 0;
    const unsigned char *u = (const unsigned char *)raw;
    size_t len = strlen(raw), i = 0;
    int w = 0;
    while (i < len) {   /* each case as sanitize_bytes writes it, measured as sanitize_width */
        size_t adv;
        long cp = utf8_decode(u + i, len - i, &adv);
        i += adv;
        if (cp < 0 || (cp >= 0xA0 && !is_bidi(cp) && (flags & SAN_ASCII)))
            w += 1;                                   /* U+FFFD or '?' */
        else if (cp < 0x20 || cp == 0x7F)
            w += cp == '\n' && (flags & SAN_KEEP_NL) ? 0 : (flags & SAN_ASCII) ? 2 : 1;
        else if (cp < 0x80)
            w += 1;
        else if (cp < 0xA0 || is_bidi(cp))
            w += 8;                                   /* "<U+202E>" */
        else
            w += cp_width(cp);
    }
    return w;
}

int sanitize_fit(const char *clean, int cols, char *out, size_t cap, unsigned flags)
{
    if (!out || cap == 0)
        return 0;
    out[0] = '\0';
    if (!clean || cols <= 0)
        return 0;
    size_t len = strlen(clean);
    int total = sanitize_width(clean);
    if (total <= cols && len < cap) {
        memcpy(out, clean, len + 1);
        return total;
    }
    const char *ell = (flags & SAN_ASCII) ? "~" : "\xE2\x80\xA6";
    size_t ell_len = strlen(ell);
    const unsigned char *u = (const unsigned char *)clean;
    size_t i = 0, o = 0;
    int w = 0;
    while (i < len) {
        size_t adv;
        long cp = utf8_decode(u + i, len - i, &adv);
        int cw = cp_width(cp);
        if (w + cw > cols - 1 || o + adv + ell_len + 1 > cap)
            break;
        memcpy(out + o, clean + i, adv);
        o += adv;
        i += adv;
        w += cw;
    }
    if (o + ell_len + 1 <= cap) {
        memcpy(out + o, ell, ell_len);
        o += ell_len;
        w += 1;
    }
    out[o] = '\0';
    return w;
}

int sanitize_fit_clause(const char *clean, int cols, char *out, size_t cap, unsigned flags)
{
    int w = sanitize_fit(clean, cols, out, cap, flags);
    if (!clean || w <= 0 || sanitize_width(clean) <= cols)
        return w;                                   /* not cut */
    const char *ell = (flags & SAN_ASCII) ? "~" : "\xE2\x80\xA6";
    size_t kept = strlen(out) - strlen(ell);        /* the text before the ellipsis */
    size_t open = (size_t)-1;
    int depth = 0;
    for (size_t i = 0; i < kept; i++) {             /* the outermost "(" left open by the cut */
        if (out[i] == '(' && depth++ == 0)
            open = i;
        else if (out[i] == ')' && depth > 0 && --depth == 0)
            open = (size_t)-1;
    }
    if (open == (size_t)-1)
        return w;
    size_t end = open;
    while (end > 0 && (out[end - 1] == ' ' || out[end - 1] == ':' || out[end - 1] == ','))
        end--;
    char head[1024];
    if (end == 0 || end >= sizeof head)
        return w;
    memcpy(head, out, end);
    head[end] = '\0';
    if (sanitize_width(head) * 3 < cols)            /* too little left to read: keep the cut */
        return w;
    snprintf(out, cap, "%s%s", head, ell);
    return sanitize_width(out);
}

int sanitize_fit_mid(const char *clean, int cols, char *out, size_t cap, unsigned flags)
{
    int total = clean ? sanitize_width(clean) : 0;
    if (cols < 4 || total <= cols || !out || cap == 0)
        return sanitize_fit(clean, cols, out, cap, flags);
    int head = (cols - 1) / 2, tail = cols - 1 - head;
    const unsigned char *u = (const unsigned char *)clean;
    size_t len = strlen(clean), i = 0;
    int before = 0;   /* columns before byte i: the tail starts where at most `tail` remain */
    while (i < len && total - before > tail) {
        size_t adv;
        before += cp_width(utf8_decode(u + i, len - i, &adv));
        i += adv;
    }
    int w = sanitize_fit(clean, head + 1, out, cap, flags);   /* head columns and the ellipsis */
    size_t o = strlen(out);
    if (o + (len - i) + 1 > cap)
        return w;
    memcpy(out + o, clean + i, len - i + 1);
    return w + (total - before);
}

char *sanitize_utf8(const char *s, size_t len)
{
    if (!s)
        len = 0;
    if (len > (SIZE_MAX - 1) / 3)
        abort();
    sbuf b = { xmalloc(len * 3 + 1), 0 };
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        size_t adv;
        long cp = utf8_decode(u + i, len - i, &adv);
        if (cp < 0)
            put_utf8(&b, 0xFFFD);
        else
            put(&b, s + i, adv);
        i += adv;
    }
    b.p[b.n] = '\0';
    return b.p;
}
