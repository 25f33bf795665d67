#pragma once
/*
 * Redis store URLs (SPEC §6): redis://host[:port][/db] and redis+unix:///path[?db=N].
 * The host must be an IP literal (or "localhost"): hiredis 0.14 resolves names with a
 * blocking getaddrinfo, so names are flagged for the caller to resolve first
 * (io/resolve.h).
 */
#include <stdbool.h>
#include <stddef.h>

typedef struct rd_redis_url {
    char host[256];          /* IP literal, or a name when needs_dns; "" for unix */
    char path[256];          /* unix socket path, "" for TCP */
    int port;                /* default 6379 */
    int db;                  /* default 0 */
    bool needs_dns;          /* host is a name, not an IP literal */
} rd_redis_url;

/* false with a human message in err (cap bytes) when the URL is unusable. */
bool redis_url_parse(const char *url, rd_redis_url *out, char *err, size_t cap);
