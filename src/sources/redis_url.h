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

/* A store may list several URLs, tried in order (failover, docs/sources.md "Reading from
 * standbys"): "redis://replica:6380, redis://primary:6379". Splits (text_split_list, URLS) at each comma that is
 * followed (after blanks) by a scheme, so a comma inside a password stays; blanks around the
 * items are dropped. Fills up to max items (start, length); returns how many the list has. */
enum { REDIS_URL_LIST_MAX = 8 };
size_t redis_url_split(const char *list, const char **start, size_t *len, size_t max);
/* Parses item i of a list (redis_url_parse or, secret, redis_url_parse_secret). */
bool redis_url_parse_item(const char *list, size_t i, bool secret, rd_redis_url *out, char *err,
                          size_t cap);
/* Every item of a list is usable (at most REDIS_URL_LIST_MAX); false with the first
 * problem ("URL 2 of 2: bad port" when there are several). */
bool redis_url_check_list(const char *list, bool secret, char *err, size_t cap);

/* false with a human message in err (cap bytes) when the URL is unusable. */
bool redis_url_parse(const char *url, rd_redis_url *out, char *err, size_t cap);
/* The same for a URL resolved from a secret reference: credentials accepted. */
bool redis_url_parse_secret(const char *url, rd_redis_url *out, char *err, size_t cap);
/* Wipes and frees the credentials (the rest stays). */
void redis_url_clear(rd_redis_url *u);
