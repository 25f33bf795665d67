#include "pg_conn.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/resolve.h"
#include "../io/secret.h"
#include "../io/loop.h"
#include "pg_conn_priv.h"

static void on_io(int fd, short what, void *arg);
static void on_deadline(int fd, short what, void *arg);

pg_conn *pg_conn_new(rd_loop *base, const char *conninfo, const pg_conn_cbs *cbs)
{
    pg_conn *c = xcalloc(1, sizeof *c);
    c->base = base;
    c->conninfo = xstrdup(conninfo ? conninfo : "");
    c->cbs = *cbs;
    c->io_fd = -1;
    c->deadline = loop_timer_new(base, on_deadline, c);
    return c;
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
        loop_event_free(c->io);
        c->io = NULL;
    }
    c->io_fd = -1;
    c->io_what = 0;
    loop_timer_stop(c->deadline);
    pgc_hosts_clear(c);
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
    loop_event_free(c->deadline);
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

bool pg_conn_peer(const pg_conn *c, char *out, size_t cap, int *n_hosts)
{
    *n_hosts = 0;
    if (!pg_conn_server_version(c))
        return false;
    /* the list as configured (hosts left out for this connect still count) */
    PQconninfoOption *opts = PQconninfoParse(c->conninfo, NULL);
    for (PQconninfoOption *o = opts; o && o->keyword; o++)
        if (strcmp(o->keyword, "host") == 0 || strcmp(o->keyword, "hostaddr") == 0)
            *n_hosts = pgc_count_list(o->val) > *n_hosts ? pgc_count_list(o->val) : *n_hosts;
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

void pgc_fail(pg_conn *c, const char *msg)
{
    pgc_set_err(c, msg);
    pg_conn_close(c);
    if (c->cbs.failed)
        c->cbs.failed(c->err, c->cbs.ud);
}

bool pgc_watch(pg_conn *c, short what)
{
    int fd = PQsocket(c->pg);
    if (fd < 0) {
        pgc_set_err(c, "connection has no socket");
        return false;
    }
    /* while connecting, libpq may close the socket and open another for the next host of
     * the list, often under the same number: the old event would watch nothing */
    if (c->io && fd == c->io_fd && what == c->io_what && c->state != C_CONNECTING)
        return true;
    if (c->io)
        loop_event_free(c->io);
    c->io = loop_fd_new(c->base, fd, (short)(what | LOOP_PERSIST), on_io, c);
    c->io_fd = fd;
    c->io_what = what;
    if (!c->io) {
        pgc_set_err(c, "cannot watch the connection socket");
        return false;
    }
    return true;
}

/* libpq's connect started with the live hosts, its socket watched. */
static bool connect_and_watch(pg_conn *c)
{
    return pgc_start_connect(c) && pgc_watch(c, LOOP_WRITE);
}

/* Every lookup answered: connect to the hosts found (one failed lookup in a list leaves
 * that host out, as libpq would skip it); none found fails. */
static void dns_done(pg_conn *c)
{
    char msg[ERR_CAP];
    if (c->n_dead == c->n_hosts || !connect_and_watch(c)) {
        snprintf(msg, sizeof msg, "%s", c->err);
        pgc_fail(c, msg);
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
            pgc_set_err(c, why);
        c->dead[pl->idx] = true;
        c->n_dead++;
    }
    if (--c->dns_pending == 0)
        dns_done(c);
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

/* On a connect deadline: a host of a list that never answers (its machine is gone: no
 * refusal, just silence). libpq's asynchronous connect cannot be told to skip it, so
 * connect again without it; false when no other host is left. */
static bool skip_silent_host(pg_conn *c)
{
    int i = c->state == C_CONNECTING && c->n_hosts - c->n_dead > 1 ? trying_index(c) : -1;
    if (i < 0)
        return false;
    c->dead[i] = true;
    c->n_dead++;
    if (c->io) {
        loop_event_free(c->io);
        c->io = NULL;
    }
    c->io_fd = -1;
    PQfinish(c->pg);
    c->pg = NULL;
    c->trying[0] = '\0';
    if (!connect_and_watch(c))
        return false;
    pgc_arm_deadline(c, c->host_deadline_s);
    return true;
}

bool pg_conn_open(pg_conn *c, double deadline_s)
{
    pg_conn_close(c);
    c->err[0] = '\0';
    c->host_deadline_s = deadline_s;
    c->trying[0] = '\0';
    bool ok = pgc_want_lookup(c) ? pgc_start_lookup(c, on_dns) : connect_and_watch(c);
    if (!ok) {
        char msg[ERR_CAP];
        snprintf(msg, sizeof msg, "%s", c->err);
        pg_conn_close(c);
        pgc_set_err(c, msg);
        return false;
    }
    pgc_arm_deadline(c, deadline_s);
    return true;
}

/* ---- I/O ---- */

static void connected(pg_conn *c)
{
    loop_timer_stop(c->deadline);
    if (PQsetnonblocking(c->pg, 1) != 0 || PQenterPipelineMode(c->pg) != 1) {
        pgc_fail(c, PQerrorMessage(c->pg));
        return;
    }
    c->state = C_READY;
    if (!pgc_watch(c, LOOP_READ)) {
        char msg[ERR_CAP];
        snprintf(msg, sizeof msg, "%s", c->err);
        pgc_fail(c, msg);
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
    pgc_set_err(c, PQerrorMessage(c->pg));
    if (strstr(c->err, "no password supplied") && user && *user)
        snprintf(msg, sizeof msg, "%s (user \"%.64s\": set store_password, PGPASSWORD or a "
                 ".pgpass entry)", c->err, user);
    else
        snprintf(msg, sizeof msg, "%s", c->err);
    pgc_fail(c, msg);
}

static void connect_step(pg_conn *c)
{
    PostgresPollingStatusType st = PQconnectPoll(c->pg);
    if (c->n_hosts > 1 && st != PGRES_POLLING_OK && st != PGRES_POLLING_FAILED)
        pgc_host_changed(c);
    switch (st) {
    case PGRES_POLLING_READING:
        if (!pgc_watch(c, LOOP_READ))
            pgc_fail(c, c->err);
        return;
    case PGRES_POLLING_OK:
        connected(c);
        return;
    case PGRES_POLLING_FAILED:
        connect_failed(c);
        return;
    default:
        if (!pgc_watch(c, LOOP_WRITE))
            pgc_fail(c, c->err);
        return;
    }
}

static void batch_finish(pg_conn *c)
{
    loop_timer_stop(c->deadline);
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
    if (!pgc_watch(c, LOOP_READ)) {
        for (size_t i = 0; i < n; i++)
            PQclear(res[i]);
        free(res);
        pgc_fail(c, c->err);
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
    if (what & LOOP_READ) {
        if (!PQconsumeInput(c->pg)) {
            pgc_fail(c, PQerrorMessage(c->pg));
            return;
        }
    }
    if (c->io_what & LOOP_WRITE) {
        int f = PQflush(c->pg);
        if (f < 0) {
            pgc_fail(c, PQerrorMessage(c->pg));
            return;
        }
        if (f == 0 && !pgc_watch(c, LOOP_READ)) {
            pgc_fail(c, c->err);
            return;
        }
    }
    collect(c);
}

static void idle_io(pg_conn *c)
{
    if (!PQconsumeInput(c->pg) || PQstatus(c->pg) == CONNECTION_BAD) {
        pgc_fail(c, PQerrorMessage(c->pg));
        return;
    }
}

/* Notifications libpq has read (between results too): handed over one by one. */
static void drain_notifies(pg_conn *c)
{
    PGnotify *n;
    while (c->pg && (n = PQnotifies(c->pg)) != NULL) {
        if (c->cbs.notify)
            c->cbs.notify(n->relname, c->cbs.ud);
        PQfreemem(n);
    }
}

static void on_io(int fd, short what, void *arg)
{
    (void)fd;
    pg_conn *c = arg;
    switch (c->state) {
    case C_CONNECTING: connect_step(c); break;
    case C_BUSY: busy_io(c, what); break;
    case C_READY: idle_io(c); break;
    default: break;
    }
    if (c->state == C_READY || c->state == C_BUSY)
        drain_notifies(c);
}

static void on_deadline(int fd, short what, void *arg)
{
    (void)fd; (void)what;
    pg_conn *c = arg;
    if (skip_silent_host(c))
        return;
    char msg[160];
    const char *phase = c->state == C_RESOLVING ? "host name lookup"
                      : c->state == C_CONNECTING ? "connection" : "query";
    snprintf(msg, sizeof msg, "%s timed out after %.0f s (no answer)", phase, c->deadline_s);
    pgc_fail(c, msg);
}

bool pg_conn_send(pg_conn *c, const pg_query *q, size_t n, double deadline_s)
{
    if (c->state != C_READY || n == 0) {
        pgc_set_err(c, c->state == C_READY ? "empty batch" : "not connected");
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
            pgc_set_err(c, msg);
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
    if (f < 0 || !pgc_watch(c, f == 1 ? (short)(LOOP_READ | LOOP_WRITE) : LOOP_READ)) {
        char msg[ERR_CAP];
        snprintf(msg, sizeof msg, "%s", f < 0 ? PQerrorMessage(c->pg) : c->err);
        pg_conn_close(c);
        pgc_set_err(c, msg);
        return false;
    }
    pgc_arm_deadline(c, deadline_s);
    return true;
}
