#include "redis_url.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/textutil.h"
#include "../core/xalloc.h"
#include "../io/resolve.h"
#include "../io/secret.h"

static bool parse_int(const char *s, size_t n, long lo, long hi, int *out)
{
    if (n == 0 || n > 9)
        return false;
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    if (v < lo || v > hi)
        return false;
    *out = (int)v;
    return true;
}

/* "?db=N" query of a unix URL (other parameters are refused). */
static bool parse_query(const char *q, rd_redis_url *out, char *err, size_t cap)
{
    if (!q || !*q)
        return true;
    if (strncmp(q, "db=", 3) != 0 || !parse_int(q + 3, strlen(q + 3), 0, 1000000, &out->db)) {
        snprintf(err, cap, "unsupported query in the URL (only ?db=N)");
        return false;
    }
    return true;
}

static bool parse_unix(const char *rest, rd_redis_url *out, char *err, size_t cap)
{
    const char *q = strchr(rest, '?');
    size_t n = q ? (size_t)(q - rest) : strlen(rest);
    if (n == 0 || rest[0] != '/') {
        snprintf(err, cap, "redis+unix URL needs an absolute socket path (redis+unix:///path)");
        return false;
    }
    if (n >= sizeof out->path) {
        snprintf(err, cap, "socket path too long");
        return false;
    }
    memcpy(out->path, rest, n);
    out->path[n] = '\0';
    return parse_query(q ? q + 1 : NULL, out, err, cap);
}

static bool parse_hostport(const char *hp, size_t n, rd_redis_url *out, char *err, size_t cap)
{
    const char *host = hp, *port = NULL;
    size_t hn = n;
    if (n > 0 && hp[0] == '[') {                       /* [v6]:port */
        const char *close = memchr(hp, ']', n);
        if (!close) {
            snprintf(err, cap, "unterminated [IPv6] host");
            return false;
        }
        host = hp + 1;
        hn = (size_t)(close - host);
        if ((size_t)(close + 1 - hp) < n) {
            if (close[1] != ':') {
                snprintf(err, cap, "junk after [IPv6] host");
                return false;
            }
            port = close + 2;
        }
    } else {
        const char *colon = memchr(hp, ':', n);
        if (colon) {
            hn = (size_t)(colon - hp);
            port = colon + 1;
        }
    }
    if (hn == 0 && host != hp) {
        snprintf(err, cap, "empty [IPv6] host");
        return false;
    }
    if (hn == 0)
        snprintf(out->host, sizeof out->host, "127.0.0.1");
    else if (hn >= sizeof out->host) {
        snprintf(err, cap, "host name too long");
        return false;
    } else {
        memcpy(out->host, host, hn);
        out->host[hn] = '\0';
    }
    if (host != hp && !resolve_ip_literal(out->host)) {   /* "[name]", "[[]" */
        snprintf(err, cap, "only an IPv6 address goes between [ ]");
        return false;
    }
    if (port && !parse_int(port, (size_t)(hp + n - port), 1, 65535, &out->port)) {
        snprintf(err, cap, "bad port");
        return false;
    }
    snprintf(out->name, sizeof out->name, "%s", out->host);
    if (strcmp(out->host, "localhost") == 0)
        snprintf(out->host, sizeof out->host, "127.0.0.1");
    out->needs_dns = !resolve_ip_literal(out->host);
    return true;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Percent-decodes s[0..n) into a new string; NULL on a bad escape or %00. */
static char *pct_decode(const char *s, size_t n)
{
    char *out = xmalloc(n + 1), *o = out;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '%') {
            *o++ = s[i];
            continue;
        }
        int hi = i + 2 < n ? hexval(s[i + 1]) : -1;
        int lo = hi >= 0 ? hexval(s[i + 2]) : -1;
        if (hi < 0 || lo < 0 || (hi | lo) == 0) {
            secret_wipe(out, n + 1);
            free(out);
            return NULL;
        }
        *o++ = (char)(hi << 4 | lo);
        i += 2;
    }
    *o = '\0';
    return out;
}

/* "user:password", ":password" or "user" (the userinfo of a secret URL). */
static bool parse_userinfo(const char *ui, size_t n, rd_redis_url *out, char *err, size_t cap)
{
    const char *colon = memchr(ui, ':', n);
    size_t un = colon ? (size_t)(colon - ui) : n;
    if (un > 0 && !(out->user = pct_decode(ui, un))) {
        snprintf(err, cap, "bad percent-escape in the user name of the store URL");
        return false;
    }
    if (colon && !(out->password = pct_decode(colon + 1, n - un - 1))) {
        redis_url_clear(out);
        snprintf(err, cap, "bad percent-escape in the password of the store URL");
        return false;
    }
    if (out->password && !*out->password) {   /* "user:@host": no password */
        secret_free(out->password);
        out->password = NULL;
    }
    return true;
}

static bool parse_tcp(const char *rest, bool secret, rd_redis_url *out, char *err, size_t cap)
{
    const char *at = strrchr(rest, '@');
    if (at && !secret) {
        snprintf(err, cap, "credentials in the store URL are not supported: set store_user "
                 "and store_password = env:NAME|file:PATH|cmd:COMMAND, or make the whole "
                 "store a reference (store = env:REDIS_URL)");
        return false;
    }
    if (at) {
        if (!parse_userinfo(rest, (size_t)(at - rest), out, err, cap))
            return false;
        rest = at + 1;
    }
    size_t n = strcspn(rest, "/?#");
    if (!parse_hostport(rest, n, out, err, cap))
        goto fail;
    const char *p = rest + n;
    if (*p == '/' && p[1]) {
        if (!parse_int(p + 1, strlen(p + 1), 0, 1000000, &out->db)) {
            snprintf(err, cap, "bad database number in the URL's path (only /N, no query)");
            goto fail;
        }
    } else if (*p && strcmp(p, "/") != 0) {
        snprintf(err, cap, "unexpected text after the host in the URL (only /N)");
        goto fail;
    }
    return true;
fail:
    redis_url_clear(out);
    return false;
}

static bool parse_url(const char *url, bool secret, rd_redis_url *out, char *err, size_t cap)
{
    memset(out, 0, sizeof *out);
    out->port = 6379;
    if (!url) {
        snprintf(err, cap, "no store URL");
        return false;
    }
    if (strncmp(url, "redis+unix://", 13) == 0)
        return parse_unix(url + 13, out, err, cap);
    if (strncmp(url, "unix://", 7) == 0)
        return parse_unix(url + 7, out, err, cap);
    if (strncmp(url, "redis://", 8) == 0)
        return parse_tcp(url + 8, secret, out, err, cap);
    if (strncmp(url, "rediss://", 9) == 0) {
        out->tls = true;
        return parse_tcp(url + 9, secret, out, err, cap);
    }
    snprintf(err, cap, "not a Redis URL (redis://host:port/db, rediss://host:port/db or "
             "redis+unix:///path)");
    return false;
}

size_t redis_url_split(const char *list, const char **start, size_t *len, size_t max)
{
    text_span sp[REDIS_URL_LIST_MAX];
    size_t n = text_split_list(list, TEXT_LIST_URLS, sp, REDIS_URL_LIST_MAX);
    for (size_t i = 0; i < n && i < max && i < REDIS_URL_LIST_MAX; i++) {
        start[i] = sp[i].s;
        len[i] = sp[i].len;
    }
    return n;
}

bool redis_url_parse_item(const char *list, size_t i, bool secret, rd_redis_url *out, char *err,
                          size_t cap)
{
    const char *st[REDIS_URL_LIST_MAX];
    size_t ln[REDIS_URL_LIST_MAX];
    size_t n = redis_url_split(list, st, ln, REDIS_URL_LIST_MAX);
    if (n == 0 || i >= n || i >= REDIS_URL_LIST_MAX)
        return parse_url(n == 0 ? list : NULL, secret, out, err, cap);
    char *one = xstrndup(st[i], ln[i]);
    bool ok = parse_url(one, secret, out, err, cap);
    secret_free(one);
    return ok;
}

bool redis_url_check_list(const char *list, bool secret, char *err, size_t cap)
{
    const char *st[REDIS_URL_LIST_MAX];
    size_t ln[REDIS_URL_LIST_MAX];
    size_t n = redis_url_split(list, st, ln, REDIS_URL_LIST_MAX);
    if (n > REDIS_URL_LIST_MAX) {
        snprintf(err, cap, "more than %d URLs in the store list", REDIS_URL_LIST_MAX);
        return false;
    }
    for (size_t i = 0; i < (n ? n : 1); i++) {
        rd_redis_url u;
        char why[256];
        if (!redis_url_parse_item(list, i, secret, &u, why, sizeof why)) {
            if (n > 1)
                snprintf(err, cap, "URL %zu of %zu: %s", i + 1, n, why);
            else
                snprintf(err, cap, "%s", why);
            return false;
        }
        redis_url_clear(&u);
    }
    return true;
}

bool redis_url_parse(const char *url, rd_redis_url *out, char *err, size_t cap)
{
    return parse_url(url, false, out, err, cap);
}

bool redis_url_parse_secret(const char *url, rd_redis_url *out, char *err, size_t cap)
{
    return parse_url(url, true, out, err, cap);
}

void redis_url_clear(rd_redis_url *u)
{
    secret_free(u->user);
    secret_free(u->password);
    u->user = u->password = NULL;
}
