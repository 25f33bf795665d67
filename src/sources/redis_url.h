#pragma once
/*
 * Redis store URLs (SPEC §6): redis://host[:port][/db], rediss://… (TLS, through the
 * io/tlsbridge.h bridge) and redis+unix:///path[?db=N]. The host must be an IP literal
 * (or "localhost"): hiredis 0.14 resolves names with a blocking getaddrinfo, so names are
 * flagged for the caller to resolve first (io/resolve.h).
 *
 * Credentials: a URL written in the config file must not carry any (redis_url_parse
 * refuses "user:password@"); a URL that came from a secret reference (store = env:…,
 * file:…, cmd:…) may (redis_url_parse_secret): "redis://user:password@host" (ACL user),
 * "redis://:password@host" (requirepass), percent-encoded or not — the userinfo ends at
 * the last '@'. Messages never quote the userinfo.
 */
#include <stdbool.h>
#include <stddef.h>

typedef struct rd_redis_url {
    char host[256];          /* IP literal, or a name when needs_dns; "" for unix */
    char name[256];          /* the host as written ("localhost" kept): TLS verification */
    char path[256];          /* unix socket path, "" for TCP */
    int port;                /* default 6379 */
    int db;                  /* default 0 */
    bool needs_dns;          /* host is a name, not an IP literal */
    bool tls;                /* rediss:// */
    char *user;              /* from the userinfo (secret URLs only); NULL = none */
    char *password;          /* idem; wiped by redis_url_clear */
} rd_redis_url;

/* false with a human message in err (cap bytes) when the URL is unusable. */
bool redis_url_parse(const char *url, rd_redis_url *out, char *err, size_t cap);
/* The same for a URL resolved from a secret reference: credentials accepted. */
bool redis_url_parse_secret(const char *url, rd_redis_url *out, char *err, size_t cap);
/* Wipes and frees the credentials (the rest stays). */
void redis_url_clear(rd_redis_url *u);
