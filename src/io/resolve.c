/* Name resolution on the loop with evdns (see resolve.h). */
#include "resolve.h"

#include <arpa/inet.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/util.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "../core/xalloc.h"

/* One address family of a lookup. A single-family evdns request has one DNS query, so
 * its callback is the last thing evdns does with it: once every request has called back,
 * evdns holds nothing of ours and the evdns base may be freed at once. (With AF_UNSPEC,
 * evdns may answer from a timer and still run a deferred callback for the other family
 * afterwards, reading the base.) */
typedef struct rd_sub {
    rd_lookup *l;
    int family;
    struct evdns_getaddrinfo_request *req;
    bool in_evdns;                   /* evdns still owes this callback */
    bool answered, ok;
    int err;
    char ip[INET6_ADDRSTRLEN];
} rd_sub;

struct rd_lookup {
    rd_lookup *next, *prev;          /* the resolver's list */
    rd_resolver *r;
    rd_sub sub[2];                   /* IPv4, IPv6 */
    bool starting;                   /* inside resolve_start */
    bool settled;                    /* answered or cancelled: cb is spent */
    struct event *deliver;           /* answer held for the next loop turn */
    bool ok;
    char ip[INET6_ADDRSTRLEN];
    char host[256];
    char why[300];
    rd_resolve_cb cb;
    void *ud;
};

struct rd_resolver {
    struct event_base *base;
    struct evdns_base *dns;          /* created at the first lookup of a name */
    rd_lookup *lookups;
    size_t owed;                     /* evdns callbacks outstanding (cancelled included) */
    bool dying;                      /* resolve_free called while callbacks were owed */
};

bool resolve_ip_literal(const char *host)
{
    unsigned char buf[sizeof(struct in6_addr)];
    return host && (inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1);
}

rd_resolver *resolve_new(struct event_base *base)
{
    rd_resolver *r = xcalloc(1, sizeof *r);
    r->base = base;
    return r;
}

static void resolver_destroy(rd_resolver *r)
{
    if (r->dns)
        evdns_base_free(r->dns, 0);
    free(r);
}

static bool in_evdns(const rd_lookup *l)
{
    return l->sub[0].in_evdns || l->sub[1].in_evdns;
}

static void lookup_unlink(rd_lookup *l)
{
    rd_resolver *r = l->r;
    if (l->prev)
        l->prev->next = l->next;
    else
        r->lookups = l->next;
    if (l->next)
        l->next->prev = l->prev;
    if (l->deliver)
        event_free(l->deliver);
    free(l);
}

/* Frees a settled lookup once evdns has called back for both families. */
static void lookup_release(rd_lookup *l)
{
    if (!l->settled || in_evdns(l))
        return;
    rd_resolver *r = l->r;
    lookup_unlink(l);
    if (r->dying && r->owed == 0)
        resolver_destroy(r);
}

static void cancel_subs(rd_lookup *l)
{
    for (int i = 0; i < 2; i++)
        if (l->sub[i].in_evdns && l->sub[i].req)
            evdns_getaddrinfo_cancel(l->sub[i].req);   /* calls back later */
}

/* Hands the answer to the caller; the handle is spent before the callback runs. */
static void lookup_answer(rd_lookup *l)
{
    rd_resolve_cb cb = l->cb;
    void *ud = l->ud;
    char ip[sizeof l->ip], why[sizeof l->why];
    bool ok = l->ok;
    memcpy(ip, l->ip, sizeof ip);
    memcpy(why, l->why, sizeof why);
    l->settled = true;
    l->cb = NULL;
    cancel_subs(l);                  /* the other family is not needed any more */
    lookup_release(l);
    cb(ok ? ip : NULL, ok ? NULL : why, ud);
}

static void on_deliver(evutil_socket_t fd, short what, void *arg)
{
    (void)fd; (void)what;
    lookup_answer(arg);
}

static void deliver_later(rd_lookup *l)
{
    struct timeval zero = {0, 0};
    l->deliver = evtimer_new(l->r->base, on_deliver, l);
    evtimer_add(l->deliver, &zero);
}

/* The answer, once it is known: IPv4 when there is one (servers often listen on IPv4
 * only), IPv6 when IPv4 failed, an error when both failed. */
static bool decide(rd_lookup *l)
{
    const rd_sub *v4 = &l->sub[0], *v6 = &l->sub[1];
    const rd_sub *use = v4->ok ? v4 : v4->answered && v6->ok ? v6 : NULL;
    if (use) {
        l->ok = true;
        memcpy(l->ip, use->ip, sizeof l->ip);
        return true;
    }
    if (!v4->answered || !v6->answered)
        return false;
    int err = v4->err ? v4->err : v6->err;
    snprintf(l->why, sizeof l->why, "could not resolve host \"%.200s\": %s", l->host,
             err ? evutil_gai_strerror(err) : "no address");
    return true;
}

static void take_result(rd_sub *sub, int result, const struct evutil_addrinfo *res)
{
    sub->answered = true;
    sub->err = result;
    for (const struct evutil_addrinfo *ai = res; result == 0 && ai && !sub->ok;
         ai = ai->ai_next) {
        const void *a = NULL;
        if (ai->ai_family == AF_INET)
            a = &((const struct sockaddr_in *)(const void *)ai->ai_addr)->sin_addr;
        else if (ai->ai_family == AF_INET6)
            a = &((const struct sockaddr_in6 *)(const void *)ai->ai_addr)->sin6_addr;
        sub->ok = a && evutil_inet_ntop(ai->ai_family, a, sub->ip, sizeof sub->ip);
    }
}

static void on_evdns(int result, struct evutil_addrinfo *res, void *arg)
{
    rd_sub *sub = arg;
    rd_lookup *l = sub->l;
    l->r->owed--;
    sub->in_evdns = false;
    sub->req = NULL;
    if (!l->settled)
        take_result(sub, result, res);
    if (res)
        evutil_freeaddrinfo(res);
    if (l->settled) {                /* cancelled, or answered by the other family */
        lookup_release(l);
        return;
    }
    if (!decide(l))
        return;                      /* waiting for the other family */
    if (l->starting)                 /* answered synchronously (hosts file, error) */
        deliver_later(l);
    else
        lookup_answer(l);
}

static bool ensure_dns(rd_resolver *r)
{
    if (!r->dns)
        r->dns = evdns_base_new(r->base, EVDNS_BASE_INITIALIZE_NAMESERVERS |
                                         EVDNS_BASE_DISABLE_WHEN_INACTIVE);
    return r->dns != NULL;
}

static void start_sub(rd_lookup *l, rd_sub *sub, int family)
{
    rd_resolver *r = l->r;
    struct evutil_addrinfo hints = {0};
    hints.ai_family = family;
    hints.ai_socktype = SOCK_STREAM;
    sub->l = l;
    sub->family = family;
    sub->in_evdns = true;
    r->owed++;
    struct evdns_getaddrinfo_request *q =
        evdns_getaddrinfo(r->dns, l->host, NULL, &hints, on_evdns, sub);
    if (sub->in_evdns)               /* not answered inside evdns_getaddrinfo */
        sub->req = q;
}

rd_lookup *resolve_start(rd_resolver *r, const char *host, rd_resolve_cb cb, void *ud)
{
    rd_lookup *l = xcalloc(1, sizeof *l);
    l->r = r;
    l->cb = cb;
    l->ud = ud;
    snprintf(l->host, sizeof l->host, "%s", host ? host : "");
    l->next = r->lookups;
    if (r->lookups)
        r->lookups->prev = l;
    r->lookups = l;
    if (!host || !*host) {
        snprintf(l->why, sizeof l->why, "no host name to resolve");
    } else if (strlen(host) >= sizeof l->host) {
        snprintf(l->why, sizeof l->why, "host name too long");
    } else if (resolve_ip_literal(host)) {
        l->ok = true;
        snprintf(l->ip, sizeof l->ip, "%s", host);
    } else if (!ensure_dns(r)) {
        snprintf(l->why, sizeof l->why, "no DNS resolver (check /etc/resolv.conf) "
                 "— use an IP address for \"%.100s\"", host);
    } else {
        l->starting = true;
        start_sub(l, &l->sub[0], AF_INET);
        if (!l->deliver)             /* IPv4 did not settle it synchronously */
            start_sub(l, &l->sub[1], AF_INET6);
        else
            l->sub[1].answered = true;
        l->starting = false;
        return l;                    /* answered by on_evdns (now or later) */
    }
    deliver_later(l);
    return l;
}

void resolve_cancel(rd_lookup *l)
{
    if (!l || l->settled)
        return;
    l->settled = true;               /* no callback from here on */
    l->cb = NULL;
    cancel_subs(l);                  /* evdns calls back (EAI_CANCEL); we absorb it */
    lookup_release(l);
}

void resolve_free(rd_resolver *r)
{
    if (!r)
        return;
    for (rd_lookup *l = r->lookups, *next; l; l = next) {
        next = l->next;
        resolve_cancel(l);
    }
    if (r->owed > 0)
        r->dying = true;             /* the last absorbed callback destroys it */
    else
        resolver_destroy(r);
}
