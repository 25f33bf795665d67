#include "redis_url.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../io/resolve.h"

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
        snprintf(err, cap, "unsupported query '%s' (only ?db=N)", q);
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
    if (hn == 0)
        snprintf(out->host, sizeof out->host, "127.0.0.1");
    else if (hn >= sizeof out->host) {
        snprintf(err, cap, "host name too long");
        return false;
    } else {
        memcpy(out->host, host, hn);
        out->host[hn] = '\0';
    }
    if (port && !parse_int(port, (size_t)(hp + n - port), 1, 65535, &out->port)) {
        snprintf(err, cap, "bad port");
        return false;
    }
    if (strcmp(out->host, "localhost") == 0)
        snprintf(out->host, sizeof out->host, "127.0.0.1");
    out->needs_dns = !resolve_ip_literal(out->host);
    return true;
}

static bool parse_tcp(const char *rest, rd_redis_url *out, char *err, size_t cap)
{
    size_t n = strcspn(rest, "/?#");
    if (memchr(rest, '@', n)) {
        snprintf(err, cap, "credentials in the store URL are not supported "
                 "(use a loopback tunnel or an unauthenticated read-only replica)");
        return false;
    }
    if (!parse_hostport(rest, n, out, err, cap))
        return false;
    const char *p = rest + n;
    if (*p == '/' && p[1]) {
        if (!parse_int(p + 1, strlen(p + 1), 0, 1000000, &out->db)) {
            snprintf(err, cap, "bad database number '%s'", p + 1);
            return false;
        }
    } else if (*p && strcmp(p, "/") != 0) {
        snprintf(err, cap, "unexpected '%s' after the host", p);
        return false;
    }
    return true;
}

bool redis_url_parse(const char *url, rd_redis_url *out, char *err, size_t cap)
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
        return parse_tcp(url + 8, out, err, cap);
    if (strncmp(url, "rediss://", 9) == 0)
        snprintf(err, cap, "TLS is not supported by hiredis 0.14: tunnel it "
                 "(stunnel client mode or ssh -L) and use redis://127.0.0.1:PORT");
    else
        snprintf(err, cap, "not a Redis URL (redis://host:port/db or redis+unix:///path)");
    return false;
}
