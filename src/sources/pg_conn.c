#include "pg_conn.h"

#include <assert.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/resolve.h"
#include "../io/secret.h"

enum { ERR_CAP = 4096, MAX_HOSTS = 16, MAX_PARAMS = 8 };

typedef enum { C_CLOSED, C_RESOLVING, C_CONNECTING, C_READY, C_BUSY } conn_state;

typedef struct pg_lookup {       /* one host of the list being looked up */
    pg_conn *c;
    size_t idx;
    rd_lookup *l;                /* NULL once answered or cancelled */
} pg_lookup;

struct pg_conn {
    struct event_base *base;
    char *conninfo;
    bool conninfo_secret;        /* from a secret reference: never quoted in errors */
    char *pkw[MAX_PARAMS], *pval[MAX_PARAMS];   /* pg_conn_set_param; values wiped */
    size_t n_params;
    pg_conn_cbs cbs;
    conn_state state;
    PGconn *pg;
    struct event *io;
    evutil_socket_t io_fd;
    short io_what;
    struct event *deadline;
    double deadline_s;
    rd_resolver *dns;            /* created at the first host name */
    /* resolution of the host list */
    char *hosts[MAX_HOSTS];
    char *addrs[MAX_HOSTS];      /* resolved IP, or NULL (literal / unix socket) */
    char *ports[MAX_HOSTS];      /* each host's port as written, NULL = libpq's default */
    pg_lookup look[MAX_HOSTS];
    size_t n_hosts, dns_pending;
    bool dead[MAX_HOSTS];        /* the lookup failed or the host never answered: left out
                                  * of the list libpq gets (for this connect) */
    size_t n_dead;
    double host_deadline_s;      /* each host of a list gets this long to answer */
    char trying[300];            /* "host|port" libpq is connecting to now */
    /* batch in flight */
    PGresult **res;
    size_t n, got;                  /* queries in the batch; syncs answered */
    size_t n_sync, cur;             /* syncs sent; the query whose results come now */
    bool cur_has;                   /* cur has given a result */
    bool *no_sync;                  /* [n]: query i shares the next one's sync */
    int nulls;
    char err[ERR_CAP];
};

static void on_io(evutil_socket_t fd, short what, void *arg);
static void on_deadline(evutil_socket_t fd, short what, void *arg);

static void notice_sink(void *arg, const PGresult *res)
{
    (void)arg; (void)res;   /* the default receiver prints to stderr: over the screen */
}

static void set_err(pg_conn *c, const char *msg)
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

pg_conn *pg_conn_new(struct event_base *base, const char *conninfo, const pg_conn_cbs *cbs)
{
    pg_conn *c = xcalloc(1, sizeof *c);
    c->base = base;
    c->conninfo = xstrdup(conninfo ? conninfo : "");
    c->cbs = *cbs;
    c->io_fd = -1;
    c->deadline = evtimer_new(base, on_deadline, c);
    return c;
}

static void hosts_clear(pg_conn *c)
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

static void batch_clear(pg_conn *c)
{
    for (size_t i = 0; i < c->n; i++)
        PQclear(c->res[i]);
    free(c->res);
    free(c->no_sync);
    c->res = NULL;
    c->no_sync = NULL;
    c->n = c->got = 0;
}

void pg_conn_close(pg_conn *c)
{
    if (c->io) {
        event_free(c->io);
        c->io = NULL;
    }
    c->io_fd = -1;
    c->io_what = 0;
    evtimer_del(c->deadline);
    hosts_clear(c);
    batch_clear(c);
    if (c->pg) {
        PQfinish(c->pg);
        c->pg = NULL;
    }
    c->state = C_CLOSED;
}

static void wipe_free(char *s)
{
    if (s)
        secret_wipe(s, strlen(s));
    free(s);
}

void pg_conn_set_conninfo(pg_conn *c, const char *conninfo, bool secret)
{
    wipe_free(c->conninfo);
    c->conninfo = xstrdup(conninfo ? conninfo : "");
    c->conninfo_secret = secret;
}

void pg_conn_set_param(pg_conn *c, const char *keyword, const char *value)
{
    size_t i = 0;
    while (i < c->n_params && strcmp(c->pkw[i], keyword) != 0)
        i++;
    if (i < c->n_params) {
        wipe_free(c->pval[i]);
        free(c->pkw[i]);
        c->n_params--;
        c->pkw[i] = c->pkw[c->n_params];
        c->pval[i] = c->pval[c->n_params];
    }
    if (!value || !*value)
        return;
    assert(c->n_params < MAX_PARAMS);
    c->pkw[c->n_params] = xstrdup(keyword);
    c->pval[c->n_params++] = xstrdup(value);
}

void pg_conn_free(pg_conn *c)
{
    if (!c)
        return;
    pg_conn_close(c);
    event_free(c->deadline);
    resolve_free(c->dns);
    wipe_free(c->conninfo);
    for (size_t i = 0; i < c->n_params; i++) {
        free(c->pkw[i]);
        wipe_free(c->pval[i]);
    }
    free(c);
}

const char *pg_conn_error(const pg_conn *c) { return c->err; }
bool pg_conn_is_ready(const pg_conn *c) { return c->state == C_READY; }
bool pg_conn_is_open(const pg_conn *c) { return c->state != C_CLOSED; }

int pg_conn_server_version(const pg_conn *c)
{
    return c->pg && (c->state == C_READY || c->state == C_BUSY) ? PQserverVersion(c->pg) : 0;
}

const char *pg_conn_param(const pg_conn *c, const char *name)
{
    return pg_conn_server_version(c) ? PQparameterStatus(c->pg, name) : NULL;
}

static int count_list(const char *v)
{
    int n = v && *v ? 1 : 0;
    for (const char *p = v; p && *p; p++)
        n += *p == ',';
    return n;
}

bool pg_conn_peer(const pg_conn *c, char *out, size_t cap, int *n_hosts)
{
    *n_hosts = 0;
    if (!pg_conn_server_version(c))
        return false;
    /* the list as configured (hosts left out for this connect still count) */
    PQconninfoOption *opts = PQconninfoParse(c->conninfo, NULL);
    for (PQconninfoOption *o = opts; o && o->keyword; o++)
        if (strcmp(o->keyword, "host") == 0 || strcmp(o->keyword, "hostaddr") == 0)
            *n_hosts = count_list(o->val) > *n_hosts ? count_list(o->val) : *n_hosts;
    if (opts)
        PQconninfoFree(opts);
    const char *h = PQhost(c->pg), *p = PQport(c->pg);
    bool v6 = h && strchr(h, ':') && h[0] != '/';
    snprintf(out, cap, "%s%s%s%s%s", v6 ? "[" : "", h ? h : "", v6 ? "]" : "",
             p && *p && h && h[0] != '/' ? ":" : "", p && h && h[0] != '/' ? p : "");
    return true;
}

bool pg_conn_tls(const pg_conn *c, bool *verified)
{
    *verified = false;
    if (!pg_conn_server_version(c) || !PQsslInUse(c->pg))
        return false;
    PQconninfoOption *opts = PQconninfo(c->pg);
    for (PQconninfoOption *o = opts; o && o->keyword; o++)
        if (strcmp(o->keyword, "sslmode") == 0 && o->val)
            *verified = strcmp(o->val, "verify-full") == 0;
    PQconninfoFree(opts);
    return true;
}

static void fail(pg_conn *c, const char *msg)
{
    set_err(c, msg);
    pg_conn_close(c);
    if (c->cbs.failed)
        c->cbs.failed(c->err, c->cbs.ud);
}

static bool watch(pg_conn *c, short what)
{
    evutil_socket_t fd = PQsocket(c->pg);
    if (fd < 0) {
        set_err(c, "connection has no socket");
        return false;
    }
    /* while connecting, libpq may close the socket and open another for the next host of
     * the list, often under the same number: the old event would watch nothing */
    if (c->io && fd == c->io_fd && what == c->io_what && c->state != C_CONNECTING)
        return true;
    if (c->io)
        event_free(c->io);
    c->io = event_new(c->base, fd, (short)(what | EV_PERSIST), on_io, c);
    c->io_fd = fd;
    c->io_what = what;
    if (!c->io || event_add(c->io, NULL) != 0) {
        set_err(c, "cannot watch the connection socket");
        return false;
    }
    return true;
}

static void arm_deadline(pg_conn *c, double s)
{
    c->deadline_s = s;
    struct timeval tv = clock_tv(s);
    evtimer_add(c->deadline, &tv);
}

/* ---- connection parameters ---- */

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

static bool start_connect(pg_conn *c)
{
    char *perr = NULL;
    PQconninfoOption *opts = PQconninfoParse(c->conninfo, &perr);
    if (!opts) {
        /* libpq quotes the bad part: not when it may hold a password */
        set_err(c, perr && !c->conninfo_secret ? perr
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
        set_err(c, "out of memory");
        return false;
    }
    PQsetNoticeReceiver(c->pg, notice_sink, NULL);
    if (PQstatus(c->pg) == CONNECTION_BAD) {
        set_err(c, PQerrorMessage(c->pg));
        PQfinish(c->pg);
        c->pg = NULL;
        return false;
    }
    c->state = C_CONNECTING;
    return watch(c, EV_WRITE);
}

/* ---- name resolution (io/resolve.h: never getaddrinfo on the loop) ---- */

/* Every lookup answered: connect to the hosts found (one failed lookup in a list leaves
 * that host out, as libpq would skip it); none found fails. */
static void dns_done(pg_conn *c)
{
    char msg[ERR_CAP];
    if (c->n_dead == c->n_hosts || !start_connect(c)) {
        snprintf(msg, sizeof msg, "%s", c->err);
        fail(c, msg);
    }
}

static void on_dns(const char *ip, const char *why, void *ud)
{
    pg_lookup *pl = ud;
    pg_conn *c = pl->c;
    pl->l = NULL;
    if (ip) {
        c->addrs[pl->idx] = xstrdup(ip);
    } else {
        if (!c->n_dead)
            set_err(c, why);
        c->dead[pl->idx] = true;
        c->n_dead++;
    }
    if (--c->dns_pending == 0)
        dns_done(c);
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
    size_t n = (size_t)count_list(list);
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
static bool want_lookup(pg_conn *c)
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
        hosts_clear(c);
    return lookup;
}

/* Looks up every host name of the list; on_dns connects when the last one answers. */
static bool start_lookup(pg_conn *c)
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

bool pg_conn_open(pg_conn *c, double deadline_s)
{
    pg_conn_close(c);
    c->err[0] = '\0';
    c->host_deadline_s = deadline_s;
    c->trying[0] = '\0';
    bool ok = want_lookup(c) ? start_lookup(c) : start_connect(c);
    if (!ok) {
        char msg[ERR_CAP];
        snprintf(msg, sizeof msg, "%s", c->err);
        pg_conn_close(c);
        set_err(c, msg);
        return false;
    }
    arm_deadline(c, deadline_s);
    return true;
}

/* ---- I/O ---- */

static void connected(pg_conn *c)
{
    evtimer_del(c->deadline);
    if (PQsetnonblocking(c->pg, 1) != 0 || PQenterPipelineMode(c->pg) != 1) {
        fail(c, PQerrorMessage(c->pg));
        return;
    }
    c->state = C_READY;
    if (!watch(c, EV_READ)) {
        char msg[ERR_CAP];
        snprintf(msg, sizeof msg, "%s", c->err);
        fail(c, msg);
        return;
    }
    if (c->cbs.ready)
        c->cbs.ready(c->cbs.ud);
}

/* libpq's messages name the user when a password is refused; "no password supplied"
 * does not: say whose and where one comes from. */
static void connect_failed(pg_conn *c)
{
    char msg[ERR_CAP + 200];
    const char *user = PQuser(c->pg);
    set_err(c, PQerrorMessage(c->pg));
    if (strstr(c->err, "no password supplied") && user && *user)
        snprintf(msg, sizeof msg, "%s (user \"%.64s\": set store_password, PGPASSWORD or a "
                 ".pgpass entry)", c->err, user);
    else
        snprintf(msg, sizeof msg, "%s", c->err);
    fail(c, msg);
}

/* libpq moved on to the next host of the list by itself (refused, or not the kind
 * target_session_attrs wants): that host gets its own deadline. */
static void host_changed(pg_conn *c)
{
    char now[sizeof c->trying];
    const char *h = PQhost(c->pg), *p = PQport(c->pg);
    snprintf(now, sizeof now, "%.200s|%.60s", h ? h : "", p ? p : "");
    if (strcmp(now, c->trying) != 0) {
        snprintf(c->trying, sizeof c->trying, "%s", now);
        arm_deadline(c, c->host_deadline_s);
    }
}

static void connect_step(pg_conn *c)
{
    PostgresPollingStatusType st = PQconnectPoll(c->pg);
    if (c->n_hosts > 1 && st != PGRES_POLLING_OK && st != PGRES_POLLING_FAILED)
        host_changed(c);
    switch (st) {
    case PGRES_POLLING_READING:
        if (!watch(c, EV_READ))
            fail(c, c->err);
        return;
    case PGRES_POLLING_OK:
        connected(c);
        return;
    case PGRES_POLLING_FAILED:
        connect_failed(c);
        return;
    default:
        if (!watch(c, EV_WRITE))
            fail(c, c->err);
        return;
    }
}

static void batch_finish(pg_conn *c)
{
    evtimer_del(c->deadline);
    PGresult **res = c->res;
    size_t n = c->n;
    c->res = NULL;
    c->n = c->got = 0;
    free(c->no_sync);
    c->no_sync = NULL;
    for (size_t i = 0; i < n; i++)
        if (!res[i])
            res[i] = PQmakeEmptyPGresult(c->pg, PGRES_FATAL_ERROR);
    c->state = C_READY;
    if (!watch(c, EV_READ)) {
        for (size_t i = 0; i < n; i++)
            PQclear(res[i]);
        free(res);
        fail(c, c->err);
        return;
    }
    if (c->cbs.batch_done)
        c->cbs.batch_done(res, n, c->cbs.ud);
    for (size_t i = 0; i < n; i++)
        PQclear(res[i]);
    free(res);
}

/* Collect what has arrived: each query gives its result(s) then NULL; each sync a SYNC
 * (after the last query of its group; the queries of a group a failure aborted give
 * PGRES_PIPELINE_ABORTED). */
static void collect(pg_conn *c)
{
    int nulls = 0;
    while (c->state == C_BUSY && !PQisBusy(c->pg)) {
        PGresult *r = PQgetResult(c->pg);
        if (!r) {
            if (c->cur_has) {             /* the end of this query's results */
                c->cur++;
                c->cur_has = false;
            }
            if (++nulls >= 2)
                break;
            continue;
        }
        nulls = 0;
        if (PQresultStatus(r) == PGRES_PIPELINE_SYNC) {
            PQclear(r);
            /* the next query after the group this sync ends (normally cur already) */
            size_t j = c->cur;
            if (c->cur_has || (j > 0 && j < c->n && c->no_sync[j - 1])) {
                while (j < c->n && c->no_sync[j])
                    j++;
                j++;
            }
            c->cur = j;
            c->cur_has = false;
            if (++c->got == c->n_sync) {
                batch_finish(c);
                return;
            }
        } else if (c->cur < c->n && !c->res[c->cur]) {
            c->res[c->cur] = r;
            c->cur_has = true;
        } else {
            PQclear(r);
            c->cur_has = c->cur < c->n;
        }
    }
}

static void busy_io(pg_conn *c, short what)
{
    if (what & EV_READ) {
        if (!PQconsumeInput(c->pg)) {
            fail(c, PQerrorMessage(c->pg));
            return;
        }
    }
    if (c->io_what & EV_WRITE) {
        int f = PQflush(c->pg);
        if (f < 0) {
            fail(c, PQerrorMessage(c->pg));
            return;
        }
        if (f == 0 && !watch(c, EV_READ)) {
            fail(c, c->err);
            return;
        }
    }
    collect(c);
}

static void idle_io(pg_conn *c)
{
    if (!PQconsumeInput(c->pg) || PQstatus(c->pg) == CONNECTION_BAD) {
        fail(c, PQerrorMessage(c->pg));
        return;
    }
    PGnotify *n;
    while ((n = PQnotifies(c->pg)) != NULL)
        PQfreemem(n);
}

static void on_io(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    pg_conn *c = arg;
    switch (c->state) {
    case C_CONNECTING: connect_step(c); break;
    case C_BUSY: busy_io(c, what); break;
    case C_READY: idle_io(c); break;
    default: break;
    }
}

/* The host libpq is trying now, as an index of the live list; -1 when not found. */
static int trying_index(const pg_conn *c)
{
    const char *h = PQhost(c->pg), *p = PQport(c->pg), *def = getenv("PGPORT");
    char dport[16];
    snprintf(dport, sizeof dport, "%d", 5432);   /* libpq's default (DEF_PGPORT) */
    for (size_t i = 0; h && p && i < c->n_hosts; i++) {
        const char *port = c->ports[i] ? c->ports[i] : def && *def ? def : dport;
        if (!c->dead[i] && strcmp(c->hosts[i], h) == 0 && strcmp(port, p) == 0)
            return (int)i;
    }
    return -1;
}

/* A host of a list that never answers (its machine is gone: no refusal, just silence):
 * libpq's asynchronous connect cannot be told to skip it, so connect again without it. */
static bool skip_silent_host(pg_conn *c)
{
    int i = c->state == C_CONNECTING && c->n_hosts - c->n_dead > 1 ? trying_index(c) : -1;
    if (i < 0)
        return false;
    c->dead[i] = true;
    c->n_dead++;
    if (c->io) {
        event_free(c->io);
        c->io = NULL;
    }
    c->io_fd = -1;
    PQfinish(c->pg);
    c->pg = NULL;
    c->trying[0] = '\0';
    if (!start_connect(c))
        return false;
    arm_deadline(c, c->host_deadline_s);
    return true;
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
    (void)fd; (void)what;
    pg_conn *c = arg;
    if (skip_silent_host(c))
        return;
    char msg[160];
    const char *phase = c->state == C_RESOLVING ? "host name lookup"
                      : c->state == C_CONNECTING ? "connection" : "query";
    snprintf(msg, sizeof msg, "%s timed out after %.0f s (no answer)", phase, c->deadline_s);
    fail(c, msg);
}

bool pg_conn_send(pg_conn *c, const pg_query *q, size_t n, double deadline_s)
{
    if (c->state != C_READY || n == 0) {
        set_err(c, c->state == C_READY ? "empty batch" : "not connected");
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        int sent = q[i].name && q[i].prepare
                       ? PQsendPrepare(c->pg, q[i].name, q[i].sql, 0, NULL)
                   : q[i].name
                       ? PQsendQueryPrepared(c->pg, q[i].name, q[i].nparams, q[i].params,
                                             NULL, NULL, 0)
                       : PQsendQueryParams(c->pg, q[i].sql, q[i].nparams, NULL, q[i].params,
                                           NULL, NULL, 0);
        bool last = i + 1 == n;
        if (!sent || ((!q[i].no_sync || last) && !PQpipelineSync(c->pg))) {
            char msg[ERR_CAP];
            snprintf(msg, sizeof msg, "%s", PQerrorMessage(c->pg));
            pg_conn_close(c);
            set_err(c, msg);
            return false;
        }
    }
    c->res = xcalloc(n, sizeof *c->res);
    c->no_sync = xcalloc(n, sizeof *c->no_sync);
    c->n = n;
    c->got = c->n_sync = c->cur = 0;
    c->cur_has = false;
    for (size_t i = 0; i < n; i++) {
        c->no_sync[i] = q[i].no_sync && i + 1 < n;
        c->n_sync += !c->no_sync[i];
    }
    c->state = C_BUSY;
    int f = PQflush(c->pg);
    if (f < 0 || !watch(c, f == 1 ? (short)(EV_READ | EV_WRITE) : EV_READ)) {
        char msg[ERR_CAP];
        snprintf(msg, sizeof msg, "%s", f < 0 ? PQerrorMessage(c->pg) : c->err);
        pg_conn_close(c);
        set_err(c, msg);
        return false;
    }
    arm_deadline(c, deadline_s);
    return true;
}
