#include "suggest.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static char fold(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static size_t min3(size_t a, size_t b, size_t c)
{
    size_t m = a < b ? a : b;
    return m < c ? m : c;
}

size_t suggest_distance(const char *a, const char *b)
{
    size_t la = strnlen(a, SUGGEST_NAME - 1), lb = strnlen(b, SUGGEST_NAME - 1);
    unsigned char d[SUGGEST_NAME][SUGGEST_NAME];   /* distances stay under SUGGEST_NAME */
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (unsigned char)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (unsigned char)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = fold(a[i - 1]) != fold(b[j - 1]);
            d[i][j] = (unsigned char)min3(d[i - 1][j] + 1u, d[i][j - 1] + 1u, d[i - 1][j - 1] + cost);
            if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) && fold(a[i - 2]) == fold(b[j - 1])
                && d[i - 2][j - 2] + 1u < d[i][j])
                d[i][j] = (unsigned char)(d[i - 2][j - 2] + 1);   /* a transposition */
        }
    return d[la][lb];
}

void suggest_init(suggest *s, const char *word)
{
    memset(s, 0, sizeof *s);
    snprintf(s->word, sizeof s->word, "%s", word ? word : "");
}

static int printable(const char *name)
{
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (*p < 0x20 || *p >= 0x7f)
            return 0;
    return 1;
}

void suggest_add(suggest *s, const char *name)
{
    size_t wl = strlen(s->word), nl = name ? strlen(name) : 0;
    if (!nl || nl >= SUGGEST_NAME || !wl || !printable(name) || strcmp(name, s->word) == 0)
        return;
    size_t limit = wl / 3 > 1 ? wl / 3 : 1, dist = suggest_distance(s->word, name);
    if (dist > limit && wl >= 2 && wl < nl && strncasecmp(name, s->word, wl) == 0)
        dist = limit;                               /* the start of a longer name */
    if (dist > limit)
        return;
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->best[i], name) == 0)
            return;                                 /* offered twice */
    if (s->n && dist > s->dist[0])
        return;                                     /* only the closest are offered */
    if (s->n && dist < s->dist[0])
        s->n = 0;
    if (s->n >= SUGGEST_MAX)
        return;
    s->dist[s->n] = dist;
    snprintf(s->best[s->n++], SUGGEST_NAME, "%s", name);
}

const char *suggest_text(const suggest *s, char *buf, size_t cap)
{
    if (!cap)
        return buf;
    buf[0] = '\0';
    if (!s->n)
        return buf;
    size_t used = (size_t)snprintf(buf, cap, " (did you mean ");
    for (size_t i = 0; i < s->n && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%s",
                                 i == 0 ? "" : i + 1 == s->n ? " or " : ", ", s->best[i]);
    if (used < cap)
        snprintf(buf + used, cap - used, "?)");
    return buf;
}

const char *suggest_among(const char *word, const char *const *names, size_t n, char *buf,
                          size_t cap)
{
    suggest s;
    suggest_init(&s, word);
    for (size_t i = 0; i < n; i++)
        suggest_add(&s, names[i]);
    return suggest_text(&s, buf, cap);
}
