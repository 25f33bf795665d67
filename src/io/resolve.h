#pragma once
/*
 * Name resolution without blocking the loop: libevent's evdns behind a small handle.
 * libpq and hiredis 0.14 would call a blocking getaddrinfo() for a host name, so their
 * callers resolve here first and hand them an IP literal.
 *
 * Contract: a lookup's callback runs exactly once, later, from the loop (never inside
 * resolve_start), unless resolve_cancel() is called first — after which it never runs.
 * evdns itself still calls back after evdns_getaddrinfo_cancel (with EAI_CANCEL, from a
 * deferred callback that reads the evdns base): that is absorbed here, and the evdns base
 * is freed only once no such callback is outstanding. IPv4 and IPv6 are asked as two
 * single-family requests (IPv4 preferred), so no evdns callback outlives our answer.
 */
#include <stdbool.h>

struct event_base;
typedef struct rd_resolver rd_resolver;
typedef struct rd_lookup rd_lookup;

/* ip: the address as text (IPv4 preferred when the name has both), or NULL with why. */
typedef void (*rd_resolve_cb)(const char *ip, const char *why, void *ud);

rd_resolver *resolve_new(struct event_base *base);   /* nameservers read at first use */
/* Cancels every pending lookup (no callbacks). NULL ok. */
void resolve_free(rd_resolver *r);
/* Looks host up (an IP literal is answered as itself). Never NULL. */
rd_lookup *resolve_start(rd_resolver *r, const char *host, rd_resolve_cb cb, void *ud);
void resolve_cancel(rd_lookup *l);   /* no callback afterwards; NULL ok */

/* host is an IPv4 or IPv6 address literal (no brackets, no zone, no port). */
bool resolve_ip_literal(const char *host);
/* Loopback is core/hostrule.h's host_is_loopback: one test for the whole program. */
