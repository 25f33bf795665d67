#include "fingerprint.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

#define FP_DUP_MAX 4096
#define QUOTE_MAX 256      /* longest quoted value replaced; bounds the work per quote */
#define EMAIL_LOCAL_MAX 64
#define EMAIL_DOMAIN_MAX 255

typedef struct fpout {
    char *p;
    size_t n, cap;       /* cap includes the NUL */
    bool space;          /* a blank is pending */
} fpout;

static void emit(fpout *o, const char *s, size_t n)
{
    if (o->space && o->n > 0 && o->n + 1 < o->cap)
        o->p[o->n++] = ' ';
    o->space = false;
    if (o->n + n >= o->cap) {
        /* cut, never inside a UTF-8 sequence */
        n = o->cap - 1 - o->n;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(o->p + o->n, s, n);
    o->n += n;
}

static bool is_alnum(char c) { return isalnum((unsigned char)c) != 0; }
static bool is_hex(char c) { return isxdigit((unsigned char)c) != 0; }
static bool is_digit(char c) { return isdigit((unsigned char)c) != 0; }

static size_t count_max(const char *s, bool (*f)(char), size_t max)
{
    size_t n = 0;
    while (n < max && s[n] && f(s[n]))
        n++;
    return n;
}

static size_t count(const char *s, bool (*f)(char))
{
    return count_max(s, f, (size_t)-1);
}

/* 8-4-4-4-12 hex */
static size_t match_uuid(const char *s)
{
    static const size_t parts[] = { 8, 4, 4, 4, 12 };
    size_t i = 0;
    for (size_t k = 0; k < 5; k++) {
        if (count(s + i, is_hex) < parts[k])
            return 0;
        i += parts[k];
        if (k < 4 && s[i++] != '-')
            return 0;
    }
    return is_alnum(s[i]) ? 0 : i;
}

static bool digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!is_digit(s[i]))
            return false;
    return true;
}

/* YYYY-MM-DD[(T| )HH:MM[:SS[.frac]]][Z|±HH[:]MM] */
static size_t match_ts(const char *s)
{
    if (!digits(s, 4) || s[4] != '-' || !digits(s + 5, 2) || s[7] != '-' || !digits(s + 8, 2))
        return 0;
    size_t i = 10;
    if ((s[i] == 'T' || s[i] == ' ') && digits(s + i + 1, 2) && s[i + 3] == ':' &&
        digits(s + i + 4, 2)) {
        i += 6;
        if (s[i] == ':' && digits(s + i + 1, 2))
            i += 3;
        if ((s[i] == '.' || s[i] == ',') && is_digit(s[i + 1]))
            i += 1 + count(s + i + 1, is_digit);
        if (s[i] == 'Z')
            i++;
        else if ((s[i] == '+' || s[i] == '-') && digits(s + i + 1, 2))
            i += 3 + (s[i + 3] == ':' && digits(s + i + 4, 2) ? 3
                      : digits(s + i + 3, 2)                 ? 2
                                                             : 0);
    }
    return is_alnum(s[i]) ? 0 : i;
}

static bool is_email_local(char c) { return is_alnum(c) || strchr("._%+-", c); }
static bool is_domain(char c) { return is_alnum(c) || c == '.' || c == '-'; }

static size_t match_email(const char *s)
{
    size_t l = count_max(s, is_email_local, EMAIL_LOCAL_MAX + 1);
    if (!l || l > EMAIL_LOCAL_MAX || s[l] != '@')
        return 0;
    size_t d = count_max(s + l + 1, is_domain, EMAIL_DOMAIN_MAX);
    while (d && (s[l + d] == '.' || s[l + d] == '-'))
        d--;   /* a trailing "." ends the sentence, not the domain */
    const char *dom = s + l + 1;
    const char *dot = NULL;
    for (size_t i = 0; i < d; i++)
        if (dom[i] == '.')
            dot = dom + i;
    if (!dot || dot == dom || !isalpha((unsigned char)dot[1]))
        return 0;
    return l + 1 + d;
}

static size_t match_ipv4(const char *s)
{
    size_t i = 0;
    for (int k = 0; k < 4; k++) {
        size_t n = count(s + i, is_digit);
        if (n < 1 || n > 3 || atoi(s + i) > 255)
            return 0;
        i += n;
        if (k < 3 && s[i++] != '.')
            return 0;
    }
    return is_alnum(s[i]) || (s[i] == '.' && is_digit(s[i + 1])) ? 0 : i;
}

/* 0x.. or a hex run of >= 6 with at least one digit and one letter */
static size_t match_hex(const char *s)
{
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && is_hex(s[2])) {
        size_t n = 2 + count(s + 2, is_hex);
        return is_alnum(s[n]) ? 0 : n;
    }
    size_t n = count(s, is_hex);
    if (n < 6 || is_alnum(s[n]))
        return 0;
    bool dig = false, alpha = false;
    for (size_t i = 0; i < n; i++)
        *(is_digit(s[i]) ? &dig : &alpha) = true;
    return dig && alpha ? n : 0;
}

static size_t match_number(const char *s)
{
    size_t n = count(s, is_digit);
    while (n && s[n] == '.' && is_digit(s[n + 1]))
        n += 1 + count(s + n + 1, is_digit);
    return n;
}

/* 'x' or "x" opening at a word boundary and closing before one. */
static size_t match_quoted(const char *s, bool at_word_start)
{
    char q = s[0];
    if ((q != '\'' && q != '"') || !at_word_start)
        return 0;
    for (size_t i = 1; s[i] && i <= QUOTE_MAX; i++)
        if (s[i] == q && !is_alnum(s[i + 1]))
            return i + 1;
    return 0;
}

static size_t token(const char *s, bool start, const char **ph)
{
    size_t n;
    if ((n = match_quoted(s, start)))
        *ph = s[0] == '"' ? "\"<s>\"" : "'<s>'";
    else if (!start)
        n = 0;
    else if ((n = match_uuid(s)))
        *ph = "<uuid>";
    else if ((n = match_ts(s)))
        *ph = "<ts>";
    else if ((n = match_email(s)))
        *ph = "<email>";
    else if ((n = match_ipv4(s)))
        *ph = "<ip>";
    else if ((n = match_hex(s)))
        *ph = "<hex>";
    if (!n && (n = match_number(s)))
        *ph = "<n>";
    return n;
}

void fingerprint_make(const char *msg, char *out, size_t cap)
{
    if (!out || cap == 0)
        return;
    fpout o = { out, 0, cap, false };
    const char *s = msg ? msg : "";
    size_t i = 0;
    while (s[i] && o.n + 1 < o.cap) {
        if (isspace((unsigned char)s[i])) {
            o.space = true;
            i++;
            continue;
        }
        const char *ph = NULL;
        bool start = i == 0 || !is_alnum(s[i - 1]);
        size_t n = token(s + i, start, &ph);
        if (n) {
            emit(&o, ph, strlen(ph));
            i += n;
        } else {
            /* copy one whole UTF-8 sequence so a cut never splits it */
            size_t k = 1;
            while (k < 4 && ((unsigned char)s[i + k] & 0xC0) == 0x80)
                k++;
            if (o.n + k + (o.space ? 1 : 0) >= o.cap)
                break;
            emit(&o, s + i, k);
            i += k;
        }
    }
    out[o.n] = '\0';
}

char *fingerprint_dup(const char *msg)
{
    size_t len = msg ? strlen(msg) : 0;
    size_t cap = len > (FP_DUP_MAX - 16) / 3 ? FP_DUP_MAX : len * 3 + 16;
    char *out = xmalloc(cap);
    fingerprint_make(msg, out, cap);
    return out;
}
