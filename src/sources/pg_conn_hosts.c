/* What libpq is asked to connect to: the host list of the conninfo, each name looked up
 * off the loop (io/resolve.h), hosts whose lookup failed or that never answered left out,
 * and the parameters the source always adds (pg_conn_priv.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"
#include "pg_conn_priv.h"

void pgc_set_err(pg_conn *c, const char *msg)
{
    if (msg != c->err) {   /* cut to the buffer (a copy: snprintf would warn of the cut) */
        const char *m = msg && *msg ? msg : "unknown error";
        size_t len = strnlen(m, sizeof c->err - 1);
        memcpy(c->err, m, len);
        c->err[len] = '\0';
    }
    size_t n = strlen(c->err);
    while (n > 0 && (c->err[n - 1] == '\n' || c->err[n - 1] == ' '))
        c->err[--n] = '\0';
}

int pgc_count_list(const char *v)
{
    int n = v && *v ? 1 : 0;
    for (const char *p = v; p && *p; p++)
        n += *p == ',';
    return n;
}


static void notice_sink(void *arg, const PGresult *res)
{
    (void)arg; (void)res;   /* the default receiver prints to stderr: over the screen */
}

void pgc_hosts_clear(pg_conn *c)
{
    for (size_t i = 0; i < c->n_hosts; i++) {
        resolve_cancel(c->look[i].l);      /* no callback afterwards */
        c->look[i].l = NULL;
        free(c->hosts[i]);
        free(c->addrs[i]);
        free(c->ports[i]);
        c->hosts[i] = c->addrs[i] = c->ports[i] = NULL;
    }
    c->n_hosts = c->dns_pending = c->n_dead = 0;
    memset(c->dead, 0, sizeof c->dead);
}

static bool needs_lookup(const char *h)
{
    return h && *h && h[0] != '/' && h[0] != '@' && !resolve_ip_literal(h);
}

/* The entries of a list ("a,b,c", or one entry for every host) whose host is not dead,
 * joined; items NULL: the list is c->addrs. */
static char *join_live(const pg_conn *c, const char *list)
{
    char *items[MAX_HOSTS] = {0};
    size_t n = 0;
    for (const char *p = list; list && p && n < MAX_HOSTS; n++) {
        const char *comma = strchr(p, ',');
        items[n] = xstrndup(p, comma ? (size_t)(comma - p) : strlen(p));
        p = comma ? comma + 1 : NULL;
    }
    size_t len = 1;
    for (size_t i = 0; i < c->n_hosts; i++)
        len += strlen(list ? (items[n == 1 ? 0 : i] ? items[n == 1 ? 0 : i] : "")
                           : (c->addrs[i] ? c->addrs[i] : "")) + 1;
    char *s = xcalloc(1, len);
    bool first = true;
    for (size_t i = 0; i < c->n_hosts; i++) {
        if (c->dead[i])
            continue;
        const char *v = list ? items[n == 1 ? 0 : i] : c->addrs[i];
        if (!first)
            strcat(s, ",");
        first = false;
        if (v)
            strcat(s, v);
    }
    for (size_t i = 0; i < n; i++)
        free(items[i]);
    return s;
}

typedef struct kvlist {
    const char *kw[64];
    const char *val[64];
    size_t n;
} kvlist;

static void kv_set(kvlist *l, const char *k, const char *v)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->kw[i], k) == 0) {
            l->val[i] = v;
            return;
        }
    if (l->n < 63) {
        l->kw[l->n] = k;
        l->val[l->n++] = v;
    }
}

bool pgc_start_connect(pg_conn *c)
{
    char *perr = NULL;
    PQconninfoOption *opts = PQconninfoParse(c->conninfo, &perr);
    if (!opts) {
        /* libpq quotes the bad part: not when it may hold a password */
        pgc_set_err(c, perr && !c->conninfo_secret ? perr
                   : "invalid connection string (the store reference's value)");
        PQfreemem(perr);
        return false;
    }
    kvlist l = {0};
    const char *user_options = NULL, *host = NULL, *port = NULL;
    for (PQconninfoOption *o = opts; o->keyword; o++) {
        if (!o->val || !*o->val)
            continue;
        if (strcmp(o->keyword, "options") == 0)
            user_options = o->val;
        else
            kv_set(&l, o->keyword, o->val);
        if (strcmp(o->keyword, "host") == 0)
            host = o->val;
        if (strcmp(o->keyword, "port") == 0)
            port = o->val;
    }
    bool any_addr = false;
    for (size_t i = 0; i < c->n_hosts; i++)
        any_addr = any_addr || c->addrs[i];
    char *hostaddr = any_addr ? join_live(c, NULL) : NULL;
    /* hosts whose lookup failed are left out, their ports with them */
    char *live_host = c->n_dead && host ? join_live(c, host) : NULL;
    char *live_port = c->n_dead && port ? join_live(c, port) : NULL;
    if (live_host)
        kv_set(&l, "host", live_host);
    if (live_port)
        kv_set(&l, "port", live_port);
    char *options = user_options ? xasprintf("%s %s", user_options, PG_SESSION_OPTIONS)
                                 : xstrdup(PG_SESSION_OPTIONS);
    if (hostaddr)
        kv_set(&l, "hostaddr", hostaddr);
    kv_set(&l, "options", options);
    for (size_t i = 0; i < c->n_params; i++)
        kv_set(&l, c->pkw[i], c->pval[i]);
    kv_set(&l, "application_name", "redrive");
    kv_set(&l, "client_encoding", "UTF8");
    kv_set(&l, "keepalives", "1");
    l.kw[l.n] = NULL;
    l.val[l.n] = NULL;
    c->pg = PQconnectStartParams(l.kw, l.val, 0);
    free(hostaddr);
    free(live_host);
    free(live_port);
    free(options);
    PQconninfoFree(opts);
    if (!c->pg) {
        pgc_set_err(c, "out of memory");
        return false;
    }
    PQsetNoticeReceiver(c->pg, notice_sink, NULL);
    if (PQstatus(c->pg) == CONNECTION_BAD) {
        pgc_set_err(c, PQerrorMessage(c->pg));
        PQfinish(c->pg);
        c->pg = NULL;
        return false;
    }
    c->state = C_CONNECTING;
    return true;
}

static bool split_hosts(pg_conn *c, const char *list)
{
    const char *p = list;
    while (p && c->n_hosts < MAX_HOSTS) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        c->hosts[c->n_hosts++] = xstrndup(p, len);
        p = comma ? comma + 1 : NULL;
    }
    return p == NULL;
}

/* Each host's port: one entry for all, or one per host (as libpq reads the list). */
static void split_ports(pg_conn *c, const char *list)
{
    size_t n = (size_t)pgc_count_list(list);
    const char *p = list;
    for (size_t i = 0; p && i < MAX_HOSTS; i++) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        for (size_t k = n == 1 ? 0 : i; k < c->n_hosts && (n == 1 || k == i); k++)
            c->ports[k] = len ? xstrndup(p, len) : NULL;
        p = comma ? comma + 1 : NULL;
    }
}

/* Host list from the conninfo (or PGHOST); fills c->hosts (kept for a list of several:
 * a host that never answers is left out, see on_deadline). Returns true when some entry
 * needs a lookup and no hostaddr was given. */
bool pgc_want_lookup(pg_conn *c)
{
    PQconninfoOption *opts = PQconninfoParse(c->conninfo, NULL);
    const char *host = NULL, *hostaddr = NULL, *port = NULL;
    for (PQconninfoOption *o = opts; o && o->keyword; o++) {
        if (strcmp(o->keyword, "host") == 0 && o->val && *o->val)
            host = o->val;
        if (strcmp(o->keyword, "hostaddr") == 0 && o->val && *o->val)
            hostaddr = o->val;
        if (strcmp(o->keyword, "port") == 0 && o->val && *o->val)
            port = o->val;
    }
    if (!host && !hostaddr)
        host = getenv("PGHOST");
    if (!port)
        port = getenv("PGPORT");
    bool lookup = false;
    if (host && !hostaddr && split_hosts(c, host))
        for (size_t i = 0; i < c->n_hosts; i++)
            lookup = lookup || needs_lookup(c->hosts[i]);
    split_ports(c, port);
    if (opts)
        PQconninfoFree(opts);
    if (!lookup && c->n_hosts < 2)
        pgc_hosts_clear(c);
    return lookup;
}

/* Looks up every host name of the list; on_dns (pg_conn.c) connects when the last one answers. */
bool pgc_start_lookup(pg_conn *c, void (*on_dns)(const char *, const char *, void *))
{
    if (!c->dns)
        c->dns = resolve_new(c->base);
    c->state = C_RESOLVING;
    c->dns_pending = 0;
    for (size_t i = 0; i < c->n_hosts; i++)
        if (needs_lookup(c->hosts[i]))
            c->dns_pending++;
    for (size_t i = 0; i < c->n_hosts; i++) {
        if (!needs_lookup(c->hosts[i]))
            continue;
        c->look[i] = (pg_lookup){ .c = c, .idx = i };
        c->look[i].l = resolve_start(c->dns, c->hosts[i], on_dns, &c->look[i]);
    }
    return true;
}

/* libpq moved on to the next host of the list by itself (refused, or not the kind
 * target_session_attrs wants): that host gets its own deadline. */
void pgc_host_changed(pg_conn *c)
{
    char now[sizeof c->trying];
    const char *h = PQhost(c->pg), *p = PQport(c->pg);
    snprintf(now, sizeof now, "%.200s|%.60s", h ? h : "", p ? p : "");
    if (strcmp(now, c->trying) != 0) {
        snprintf(c->trying, sizeof c->trying, "%s", now);
        pgc_arm_deadline(c, c->host_deadline_s);
    }
}
