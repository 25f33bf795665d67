/*
 * rd-tls-probe: runs the TLS bridge and hiredis (async, libevent adapter) on one loop,
 * the way the Redis source does, and prints what happens, one line each:
 *   path P           the bridge's unix socket
 *   dir-mode M       its directory's mode (octal)
 *   tick MS          every 100 ms (ms since start): the loop keeps running
 *   up INFO          a handshake finished (bridge callback)
 *   tlsb-error MSG   a bridged connection failed (bridge callback)
 *   freed            --free-in-callback: the bridge was freed inside its callback
 *   reply C I TEXT   reply to command I on connection C
 *   big ok N | big mismatch N M
 *   disconnect C TEXT / error TEXT (tlsb_error() after a disconnect)
 *   connections N    bridged connections still open at the end
 *   peak N           most bytes one side of the bridge held to write
 *   cleanup ok | cleanup left P
 *   done ok | done fail       (exit 0 / 1; 2 = usage or bridge setup error)
 *
 * rd-tls-probe --addr IP --port N --host NAME [--cacert F] [--cert F] [--key F]
 *              [--insecure] [--timeout S] [--deadline S] [--conns N] [--big BYTES]
 *              [--buffer BYTES] [--slow-read MS] [--free-in-callback] 'CMD ARG…'…
 * --slow-read: after the big SET, hiredis stops reading for MS ms while the big GET
 * reply arrives (pause / resume lines), so the bridge's flow control is exercised.
 */
#include "src/io/tlsbridge.h"

#include <event2/event.h>
#include <event2/util.h>
#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define MAX_CONNS 4
#define MAX_CMDS 16

typedef struct probe probe;
typedef struct pconn {
    probe *p;
    int id;
    redisAsyncContext *ac;
    int replies;
    bool big_sent;
    bool paused;                     /* --slow-read: hiredis does not read meanwhile */
    void (*add_read)(void *);        /* the adapter's own */
    struct event *resume;
} pconn;

struct probe {
    struct event_base *base;
    tlsb *bridge;
    pconn conns[MAX_CONNS];
    int nconns, open;
    char *cmds[MAX_CMDS];
    int ncmds;
    size_t big;
    char *big_val;
    int slow_read_ms;
    bool free_in_cb;                 /* --free-in-callback: tlsb_free() from the callback */
    bool failed;
    struct timespec t0;
};

static long ms_since(const probe *p)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)((t.tv_sec - p->t0.tv_sec) * 1000 + (t.tv_nsec - p->t0.tv_nsec) / 1000000);
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

static void reply_text(const redisReply *r, char *buf, size_t cap)
{
    size_t n = 0;
    if (!r) {
        snprintf(buf, cap, "(no reply)");
        return;
    }
    switch (r->type) {
    case REDIS_REPLY_STRING: case REDIS_REPLY_STATUS:
        snprintf(buf, cap, "%.*s", (int)(r->len > 200 ? 200 : r->len), r->str);
        break;
    case REDIS_REPLY_ERROR:
        snprintf(buf, cap, "ERROR %s", r->str);
        break;
    case REDIS_REPLY_INTEGER:
        snprintf(buf, cap, "%lld", r->integer);
        break;
    case REDIS_REPLY_NIL:
        snprintf(buf, cap, "(nil)");
        break;
    case REDIS_REPLY_ARRAY:
        n += (size_t)snprintf(buf, cap, "[");
        for (size_t i = 0; i < r->elements && n < cap; i++)
            n += (size_t)snprintf(buf + n, cap - n, "%s%.*s", i ? "," : "",
                                  (int)r->element[i]->len, r->element[i]->str ? r->element[i]->str : "");
        if (n < cap)
            snprintf(buf + n, cap - n, "]");
        break;
    default:
        snprintf(buf, cap, "(type %d)", r->type);
    }
}

static void on_big_get(redisAsyncContext *ac, void *reply, void *priv)
{
    pconn *c = priv;
    const redisReply *r = reply;
    if (r && r->type == REDIS_REPLY_STRING && r->len == c->p->big &&
        memcmp(r->str, c->p->big_val, r->len) == 0) {
        say("big ok %zu", (size_t)r->len);
    } else {
        say("big mismatch %zu %zu", c->p->big, r ? (size_t)r->len : 0);
        c->p->failed = true;
    }
    redisAsyncDisconnect(ac);
}

/* hiredis re-adds its read event after every write: keep it off while paused. */
static void paused_add_read(void *privdata)
{
    const redisLibeventEvents *e = privdata;
    pconn *c = e->context->data;
    if (!c->paused)
        c->add_read(privdata);
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
    pconn *c = arg;
    c->paused = false;
    say("resume");
    if (c->ac)
        c->ac->ev.addRead(c->ac->ev.data);
}

/* Stop reading while the big GET reply comes: the bridge must stop reading the TLS side
 * instead of buffering the whole value. */
static void pause_reading(pconn *c)
{
    redisAsyncContext *ac = c->ac;
    c->paused = true;
    c->add_read = ac->ev.addRead;
    ac->ev.addRead = paused_add_read;
    ac->ev.delRead(ac->ev.data);
    c->resume = evtimer_new(c->p->base, on_resume, c);
    struct timeval tv = { c->p->slow_read_ms / 1000, (c->p->slow_read_ms % 1000) * 1000 };
    evtimer_add(c->resume, &tv);
    say("pause");
}

static void on_big_set(redisAsyncContext *ac, void *reply, void *priv)
{
    const redisReply *r = reply;
    pconn *c = priv;
    if (!r || r->type == REDIS_REPLY_ERROR) {
        say("big set failed");
        c->p->failed = true;
    } else if (c->p->slow_read_ms > 0) {
        pause_reading(c);
    }
}

static void on_reply(redisAsyncContext *ac, void *reply, void *priv)
{
    pconn *c = priv;
    char buf[2048];
    reply_text(reply, buf, sizeof buf);
    say("reply %d %d %s", c->id, c->replies, buf);
    if (!reply || ((redisReply *)reply)->type == REDIS_REPLY_ERROR)
        c->p->failed = true;
    if (++c->replies < c->p->ncmds)
        return;
    if (c->p->big && !c->big_sent && c->id == 0) {
        c->big_sent = true;
        redisAsyncCommand(ac, on_big_set, c, "SET rd-tls-probe:big %b", c->p->big_val, c->p->big);
        redisAsyncCommand(ac, on_big_get, c, "GET rd-tls-probe:big");
        return;
    }
    redisAsyncDisconnect(ac);
}

static void send_cmd(pconn *c, const char *cmd)
{
    char *copy = strdup(cmd), *save = NULL;
    const char *argv[32];
    size_t argc = 0;
    for (char *t = strtok_r(copy, " ", &save); t && argc < 32; t = strtok_r(NULL, " ", &save))
        argv[argc++] = t;
    redisAsyncCommandArgv(c->ac, on_reply, c, (int)argc, argv, NULL);
    free(copy);
}

static void on_connect(const redisAsyncContext *ac, int status)
{
    pconn *c = ac->data;
    if (status != REDIS_OK) {
        say("connect %d %s", c->id, ac->errstr);
        c->p->failed = true;
        c->ac = NULL;
        if (--c->p->open == 0)
            event_base_loopexit(c->p->base, NULL);
    }
}

static void on_disconnect(const redisAsyncContext *ac, int status)
{
    pconn *c = ac->data;
    probe *p = c->p;
    if (status != REDIS_OK) {
        say("disconnect %d %s", c->id, ac->errstr);
        const char *e = p->bridge ? tlsb_error(p->bridge) : "";
        say("error %s", *e ? e : "(none)");
        p->failed = true;
    }
    c->ac = NULL;
    if (--p->open == 0)
        event_base_loopexit(p->base, NULL);
}

static void on_bridge(tlsb_event ev, const char *msg, void *ud)
{
    probe *p = ud;
    say("%s %s", ev == TLSB_UP ? "up" : "tlsb-error", msg);
    if (p->free_in_cb && p->bridge) {
        tlsb_free(p->bridge);
        p->bridge = NULL;
        say("freed");
    }
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    say("tick %ld", ms_since(arg));
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
    probe *p = arg;
    say("deadline");
    p->failed = true;
    event_base_loopexit(p->base, NULL);
}

static bool open_conns(probe *p)
{
    for (int i = 0; i < p->nconns; i++) {
        pconn *c = &p->conns[i];
        c->p = p;
        c->id = i;
        c->ac = redisAsyncConnectUnix(tlsb_path(p->bridge));
        if (!c->ac || c->ac->err) {
            say("connect %d %s", i, c->ac ? c->ac->errstr : "oom");
            return false;
        }
        c->ac->data = c;
        redisLibeventAttach(c->ac, p->base);
        redisAsyncSetConnectCallback(c->ac, on_connect);
        redisAsyncSetDisconnectCallback(c->ac, on_disconnect);
        p->open++;
        for (int k = 0; k < p->ncmds; k++)
            send_cmd(c, p->cmds[k]);
        if (p->ncmds == 0)
            send_cmd(c, "PING");
    }
    if (p->ncmds == 0)
        p->ncmds = 1;
    return true;
}

static int usage(void)
{
    fprintf(stderr, "usage: rd-tls-probe --addr IP --port N --host NAME [--cacert F] "
                    "[--cert F] [--key F] [--insecure] [--timeout S] [--deadline S] "
                    "[--conns N] [--big BYTES] [--buffer BYTES] [--slow-read MS] "
                    "[--free-in-callback] 'CMD ARG...'...\n");
    return 2;
}

static int run(probe *p, const tlsb_opts *o, const char *addr, int port, double deadline)
{
    struct sockaddr_storage ss;
    int sslen = sizeof ss;
    char spec[128], err[400];
    snprintf(spec, sizeof spec, strchr(addr, ':') ? "[%s]:%d" : "%s:%d", addr, port);
    if (evutil_parse_sockaddr_port(spec, (struct sockaddr *)&ss, &sslen) != 0)
        return usage();
    p->bridge = tlsb_new(p->base, o, (struct sockaddr *)&ss, (socklen_t)sslen, on_bridge, p,
                         err, sizeof err);
    if (!p->bridge) {
        say("setup-error %s", err);
        return 2;
    }
    char path[200];
    snprintf(path, sizeof path, "%s", tlsb_path(p->bridge));
    say("path %s", path);
    struct stat st;
    char *slash = strrchr(path, '/');
    if (slash)
        *slash = '\0';
    say("dir-mode %o", stat(path, &st) == 0 ? (unsigned)(st.st_mode & 07777) : 0u);
    struct event *tick = event_new(p->base, -1, EV_PERSIST, on_tick, p);
    struct event *dl = evtimer_new(p->base, on_deadline, p);
    struct timeval tv_tick = { 0, 100000 }, tv_dl = { (time_t)deadline, 0 };
    event_add(tick, &tv_tick);
    event_add(dl, &tv_dl);
    if (!open_conns(p))
        p->failed = true;
    else
        event_base_dispatch(p->base);
    for (int i = 0; i < p->nconns; i++)
        if (p->conns[i].ac)
            redisAsyncFree(p->conns[i].ac);
    for (int i = 0; i < p->nconns; i++)
        if (p->conns[i].resume)
            event_free(p->conns[i].resume);
    if (p->bridge) {
        say("connections %zu", tlsb_connections(p->bridge));
        say("peak %zu", tlsb_peak_buffered(p->bridge));
        tlsb_free(p->bridge);
    }
    if (stat(path, &st) == 0)
        say("cleanup left %s", path);
    else
        say("cleanup ok");
    event_free(tick);
    event_free(dl);
    say("done %s", p->failed ? "fail" : "ok");
    return p->failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    probe p = { .nconns = 1 };
    tlsb_opts o = { 0 };
    const char *addr = NULL;
    int port = 0;
    double deadline = 20;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool has = v != NULL;
        if (strcmp(a, "--insecure") == 0) { o.insecure = true; continue; }
        if (strcmp(a, "--free-in-callback") == 0) { p.free_in_cb = true; continue; }
        if (strncmp(a, "--", 2) != 0) {
            if (p.ncmds == MAX_CMDS)
                return usage();
            p.cmds[p.ncmds++] = argv[i];
            continue;
        }
        if (!has)
            return usage();
        i++;
        if (strcmp(a, "--addr") == 0) addr = v;
        else if (strcmp(a, "--port") == 0) port = atoi(v);
        else if (strcmp(a, "--host") == 0) o.host = v;
        else if (strcmp(a, "--cacert") == 0) o.cacert = v;
        else if (strcmp(a, "--cert") == 0) o.cert = v;
        else if (strcmp(a, "--key") == 0) o.key = v;
        else if (strcmp(a, "--timeout") == 0) o.timeout_s = atof(v);
        else if (strcmp(a, "--deadline") == 0) deadline = atof(v);
        else if (strcmp(a, "--conns") == 0) p.nconns = atoi(v);
        else if (strcmp(a, "--big") == 0) p.big = (size_t)atol(v);
        else if (strcmp(a, "--buffer") == 0) o.max_buffer = (size_t)atol(v);
        else if (strcmp(a, "--slow-read") == 0) p.slow_read_ms = atoi(v);
        else return usage();
    }
    if (!addr || port <= 0 || p.nconns < 1 || p.nconns > MAX_CONNS)
        return usage();
    if (p.big) {
        p.big_val = malloc(p.big);
        for (size_t k = 0; k < p.big; k++)   /* not periodic in any small block size */
            p.big_val[k] = (char)('a' + (k * 7919 + k / 4093) % 26);
    }
    clock_gettime(CLOCK_MONOTONIC, &p.t0);
    p.base = event_base_new();
    int rc = run(&p, &o, addr, port, deadline);
    event_base_free(p.base);
    free(p.big_val);
    return rc;
}
