/* Redis store URLs: the config form (no credentials) and the secret-reference form
 * (user:password@ accepted, percent-encoded or not). A parsed URL is within range and
 * reads back the same when written out again; the config form never yields
 * credentials; an error message never quotes any part of a referenced value (the userinfo,
 * the host, the path, the query), and core/redact.h names every piece of one. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/core/redact.h"
#include "../../src/sources/redis_url.h"
#include "fuzz.h"

static void check_fields(const rd_redis_url *u)
{
    FUZZ_ASSERT(memchr(u->host, '\0', sizeof u->host) && memchr(u->name, '\0', sizeof u->name));
    FUZZ_ASSERT(memchr(u->path, '\0', sizeof u->path));
    FUZZ_ASSERT(u->db >= 0 && u->db <= 1000000);
    if (u->path[0]) {
        FUZZ_ASSERT(u->path[0] == '/' && !u->host[0] && !u->tls && !u->user && !u->password);
        return;
    }
    FUZZ_ASSERT(u->port >= 1 && u->port <= 65535 && u->host[0]);
    FUZZ_ASSERT(!u->password || u->password[0]);
}

/* Writes u back as a URL (without credentials) and parses it again: same fields. */
static void check_round_trip(const rd_redis_url *u)
{
    char url[700];
    if (u->path[0])
        snprintf(url, sizeof url, "redis+unix://%s?db=%d", u->path, u->db);
    else if (strchr(u->name, ':'))
        snprintf(url, sizeof url, "%s://[%s]:%d/%d", u->tls ? "rediss" : "redis", u->name,
                 u->port, u->db);
    else
        snprintf(url, sizeof url, "%s://%s:%d/%d", u->tls ? "rediss" : "redis", u->name,
                 u->port, u->db);
    rd_redis_url v;
    char err[256];
    FUZZ_ASSERT(redis_url_parse(url, &v, err, sizeof err));
    FUZZ_ASSERT(strcmp(u->host, v.host) == 0 && strcmp(u->name, v.name) == 0 &&
                strcmp(u->path, v.path) == 0 && u->port == v.port && u->db == v.db &&
                u->tls == v.tls && u->needs_dns == v.needs_dns && !v.user && !v.password);
}

/* The same URL with its userinfo replaced by "\1\1\1\1:\1\1\1\1" (a byte the rest of
 * the URL does not hold): whatever the parser says about it never quotes a credential. */
static void check_never_quoted(const char *url)
{
    const char *rest = strncmp(url, "redis://", 8) == 0    ? url + 8
                     : strncmp(url, "rediss://", 9) == 0 ? url + 9 : NULL;
    const char *at = rest ? strrchr(rest, '@') : NULL;
    if (!at || strchr(at, '\1'))
        return;
    size_t head = (size_t)(rest - url), tail = strlen(at);
    char *p = malloc(head + 9 + tail + 1);
    if (!p)
        abort();
    memcpy(p, url, head);
    memcpy(p + head, "\1\1\1\1:\1\1\1\1", 9);
    memcpy(p + head + 9, at, tail + 1);
    rd_redis_url u;
    char err[256] = "";
    if (redis_url_parse_secret(p, &u, err, sizeof err))
        FUZZ_ASSERT(u.user && strcmp(u.user, "\1\1\1\1") == 0 && u.password &&
                    strcmp(u.password, "\1\1\1\1") == 0);
    else
        FUZZ_ASSERT(!strchr(err, '\1'));
    redis_url_clear(&u);
    err[0] = '\0';
    FUZZ_ASSERT(!redis_url_parse(p, &u, err, sizeof err) && !strchr(err, '\1'));
    free(p);
}

/* The whole referenced value, not only its userinfo: every byte after the scheme that is
 * not URL structure becomes \1 (a byte no message of ours holds); whatever either parser
 * says about the result never holds one. */
static const char STRUCTURE[] = "@:/?=&[].,%# ";

static void check_value_never_quoted(const char *url)
{
    const char *rest = strstr(url, "://");
    if (!rest)
        return;
    char *p = strdup(url);
    if (!p)
        abort();
    for (char *q = p + (rest - url) + 3; *q; q++)
        if (!strchr(STRUCTURE, *q))
            *q = '\1';
    rd_redis_url u;
    char err[256] = "";
    if (!redis_url_parse_secret(p, &u, err, sizeof err))
        FUZZ_ASSERT(!strchr(err, '\1'));
    redis_url_clear(&u);
    err[0] = '\0';
    if (!redis_url_parse(p, &u, err, sizeof err))
        FUZZ_ASSERT(!strchr(err, '\1'));
    redis_url_clear(&u);
    free(p);
}

/* redact_ref names every piece of a value: each run of it between delimiters, written
 * into a message of its own, is gone from the result (the value's bytes after the scheme
 * made \x81, which no name holds). */
static void check_redacted(const char *text)
{
    size_t n = strlen(text), runs = 0;
    if (n > 300 || strchr(text, '\x81'))
        return;
    char *v = strdup(text);
    if (!v)
        abort();
    const char *scheme_end = strstr(v, "://");   /* the scheme names no secret */
    for (char *q = scheme_end ? v + (scheme_end - v) + 3 : v; *q; q++)
        if (!strchr("@:/,;?&=# \t'\"\\[]", *q))
            *q = '\x81';
    char *msg = malloc(4 * n + 16), *o = msg;
    if (!msg)
        abort();
    o += sprintf(o, "m ");
    for (const char *q = v; *q;) {
        size_t k = strspn(q, "\x81");
        if (k) {
            o += sprintf(o, "<%.*s> ", (int)k, q);
            runs++;
        }
        q += k ? k : 1;
    }
    if (runs <= 40) {
        char out[8192];
        redact_ref(msg, v, "env:X", out, sizeof out);
        FUZZ_ASSERT(!strchr(out, '\x81'));
    }
    free(msg);
    free(v);
}

/* The same text as a store list (several URLs): items lie inside the text, in order, without
 * surrounding blanks; a list that checks out parses item by item; one item alone is the
 * single-URL parse. */
static void check_list(const char *text)
{
    const char *st[REDIS_URL_LIST_MAX];
    size_t ln[REDIS_URL_LIST_MAX];
    size_t n = redis_url_split(text, st, ln, REDIS_URL_LIST_MAX), len = strlen(text);
    for (size_t i = 0; i < n && i < REDIS_URL_LIST_MAX; i++) {
        FUZZ_ASSERT(st[i] >= text && st[i] + ln[i] <= text + len);
        FUZZ_ASSERT(i == 0 || st[i] > st[i - 1] + ln[i - 1]);
        FUZZ_ASSERT(ln[i] == 0 || (st[i][0] != ' ' && st[i][ln[i] - 1] != ' '));
    }
    char err[300] = "";
    bool ok = redis_url_check_list(text, false, err, sizeof err);
    FUZZ_ASSERT(ok || err[0]);
    for (size_t i = 0; ok && i < n; i++) {
        rd_redis_url u;
        FUZZ_ASSERT(redis_url_parse_item(text, i, false, &u, err, sizeof err));
        check_fields(&u);
        redis_url_clear(&u);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *url = fuzz_cstr(data, size);
    char err[256];
    rd_redis_url u;

    err[0] = '\0';
    if (redis_url_parse(url, &u, err, sizeof err)) {
        FUZZ_ASSERT(!u.user && !u.password);
        check_fields(&u);
        check_round_trip(&u);
    } else {
        FUZZ_ASSERT(err[0] && !u.user && !u.password);
    }
    redis_url_clear(&u);

    err[0] = '\0';
    bool ok = redis_url_parse_secret(url, &u, err, sizeof err);
    if (ok) {
        check_fields(&u);
        check_round_trip(&u);
    } else {
        FUZZ_ASSERT(err[0] && !u.user && !u.password);
    }
    redis_url_clear(&u);
    FUZZ_ASSERT(!u.user && !u.password);
    check_never_quoted(url);
    check_value_never_quoted(url);
    check_redacted(url);
    check_list(url);
    free(url);
    return 0;
}
