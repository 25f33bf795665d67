/* HTTP over libcurl's multi_socket API on the libevent loop (see http.h). */
#include "http.h"

#include <curl/curl.h>
#include <event2/event.h>
#include <event2/event_struct.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../core/hostrule.h"
#include "../core/xalloc.h"
#include "loop.h"
#include "url.h"

enum { HTTP_DEF_TIMEOUT_MS = 10000, HTTP_DEF_CONNECT_MS = 3000 };
#define HTTP_DEF_MAX_BODY ((size_t)4 << 20)

typedef struct http_xfer {
    struct http_xfer *next, *prev;
    rd_http *h;
    uint64_t id;
    CURL *easy;
    struct curl_slist *headers;
    char *body_copy;            /* request body (curl does not copy POSTFIELDS) */
    rd_http_cb cb;
    const char *cb_name;     /* the callback's name, for the loop trace (loop.h) */
    void *ud;
    char *buf;                  /* response body */
    size_t len, cap, max_body;
    bool truncated;
    char errbuf[CURL_ERROR_SIZE];
} http_xfer;

/* Per-socket state curl hands back through CURLMOPT_SOCKETFUNCTION's socketp. */
typedef struct http_sock {
    struct event ev;
    rd_http *h;
    curl_socket_t fd;
} http_sock;

struct rd_http {
    struct event_base *base;
    CURLM *multi;
    struct event *timer;
    http_xfer *xfers;           /* doubly linked list of pending transfers */
    size_t n_pending;
    uint64_t next_id;
    char why[200];              /* why the last http_start returned 0 */
};

static void check_done(rd_http *h);

static void xfer_unlink(rd_http *h, http_xfer *x)
{
    if (x->prev)
        x->prev->next = x->next;
    else
        h->xfers = x->next;
    if (x->next)
        x->next->prev = x->prev;
    x->next = x->prev = NULL;
    h->n_pending--;
}

static void xfer_free_detached(http_xfer *x)
{
    curl_easy_cleanup(x->easy);
    curl_slist_free_all(x->headers);
    if (x->body_copy) {
        /* request bodies may carry credentials (login): wipe before free */
        memset(x->body_copy, 0, strlen(x->body_copy));
        free(x->body_copy);
    }
    free(x->buf);
    free(x);
}

static void xfer_free(rd_http *h, http_xfer *x)
{
    curl_multi_remove_handle(h->multi, x->easy);
    xfer_free_detached(x);
}

static void socket_event(evutil_socket_t fd, short what, void *arg)
{
    http_sock *s = arg;
    rd_http *h = s->h;
    int flags = 0, running = 0;
    if (what & EV_READ)
        flags |= CURL_CSELECT_IN;
    if (what & EV_WRITE)
        flags |= CURL_CSELECT_OUT;
    curl_multi_socket_action(h->multi, fd, flags, &running);
    check_done(h);
}

static void timer_event(evutil_socket_t fd, short what, void *arg)
{
    rd_http *h = arg;
    int running = 0;
    (void)fd; (void)what;
    curl_multi_socket_action(h->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    check_done(h);
}

/* Timed as callbacks of their own under the loop trace (loop.h). */
static void on_socket_event(evutil_socket_t fd, short what, void *arg)
{
    loop_call(socket_event, fd, what, arg, "curl_socket");
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    loop_call(timer_event, fd, what, arg, "curl_timer");
}

static int socket_cb(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
    rd_http *h = userp;
    http_sock *s = socketp;
    (void)easy;
    if (what == CURL_POLL_REMOVE) {
        if (s) {
            event_del(&s->ev);
            curl_multi_assign(h->multi, fd, NULL);
            free(s);
        }
        return 0;
    }
    if (!s) {
        s = xcalloc(1, sizeof *s);
        s->h = h;
        s->fd = fd;
        curl_multi_assign(h->multi, fd, s);
    } else {
        event_del(&s->ev);
    }
    short kind = EV_PERSIST;
    if (what & CURL_POLL_IN)
        kind |= EV_READ;
    if (what & CURL_POLL_OUT)
        kind |= EV_WRITE;
    event_assign(&s->ev, h->base, fd, kind, on_socket_event, s);
    event_add(&s->ev, NULL);
    return 0;
}

static int timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
    rd_http *h = userp;
    (void)multi;
    if (timeout_ms < 0) {
        evtimer_del(h->timer);
        return 0;
    }
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    evtimer_add(h->timer, &tv);
    return 0;
}

static size_t write_cb(char *data, size_t size, size_t nmemb, void *ud)
{
    http_xfer *x = ud;
    size_t n = size * nmemb;
    if (x->len + n > x->max_body) {
        size_t room = x->max_body - x->len;
        n = room;
        x->truncated = true;
    }
    if (x->len + n + 1 > x->cap) {
        size_t cap = x->cap ? x->cap : 4096;
        while (cap < x->len + n + 1)
            cap *= 2;
        x->buf = xrealloc(x->buf, cap);
        x->cap = cap;
    }
    memcpy(x->buf + x->len, data, n);
    x->len += n;
    x->buf[x->len] = '\0';
    /* Returning less than asked aborts the transfer (CURLE_WRITE_ERROR). */
    return x->truncated ? 0 : size * nmemb;
}

static void xfer_finish(rd_http *h, http_xfer *x, CURLcode rc)
{
    rd_http_resp r = {0};
    long status = 0;
    double t = 0;
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(x->easy, CURLINFO_TOTAL_TIME, &t);
    r.status = status;
    long req_size = 0;
    curl_easy_getinfo(x->easy, CURLINFO_REQUEST_SIZE, &req_size);
    r.request_sent = status > 0 || req_size > 0;
    r.elapsed_s = t;
    r.truncated = x->truncated;
    r.curl_code = (x->truncated && rc == CURLE_WRITE_ERROR) ? CURLE_OK : (int)rc;
    r.timed_out = rc == CURLE_OPERATION_TIMEDOUT;
    if (r.curl_code != CURLE_OK)
        snprintf(r.error, sizeof r.error, "%s",
                 x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc));
    else if (x->truncated)
        snprintf(r.error, sizeof r.error, "response body truncated at %zu bytes",
                 x->max_body);
    if (!x->buf)
        x->buf = xstrdup("");
    r.body = x->buf;
    r.body_len = x->len;
    xfer_unlink(h, x);
    /* Detach from the multi before the callback, so the callback may start new
     * requests, cancel others, but not free h. */
    rd_http_cb cb = x->cb;
    void *ud = x->ud;
    const char *name = x->cb_name;
    curl_multi_remove_handle(h->multi, x->easy);
    loop_span sp = loop_span_begin();
    cb(&r, ud);
    loop_span_end(sp, name);
    xfer_free_detached(x);
}

static void check_done(rd_http *h)
{
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(h->multi, &left))) {
        if (m->msg != CURLMSG_DONE)
            continue;
        http_xfer *x = NULL;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
        if (x)
            xfer_finish(h, x, m->data.result);
    }
}

/* libcurl (and with it OpenSSL) is initialised on the first request, not here: a session
 * that never speaks HTTP (a Redis or PostgreSQL store without actions) does not pay the
 * ~2 MiB of library pages that initialisation touches. */
static bool http_multi_ready(rd_http *h)
{
    static bool global_done;
    if (h->multi)
        return true;
    if (!global_done) {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        global_done = true;
    }
    h->multi = curl_multi_init();
    if (!h->multi)
        return false;
    curl_multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
    curl_multi_setopt(h->multi, CURLMOPT_SOCKETDATA, h);
    curl_multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
    curl_multi_setopt(h->multi, CURLMOPT_TIMERDATA, h);
    return true;
}

rd_http *http_new(struct event_base *base)
{
    rd_http *h = xcalloc(1, sizeof *h);
    h->base = base;
    h->timer = evtimer_new(base, on_timer, h);
    h->next_id = 1;
    return h;
}

void http_free(rd_http *h)
{
    if (!h)
        return;
    while (h->xfers) {
        http_xfer *x = h->xfers;
        xfer_unlink(h, x);
        xfer_free(h, x);
    }
    if (h->multi)
        curl_multi_cleanup(h->multi);
    event_free(h->timer);
    free(h);
}

static void set_common_opts(CURL *e, http_xfer *x, const rd_http_req *req)
{
    long timeout = req->timeout_ms > 0 ? req->timeout_ms : HTTP_DEF_TIMEOUT_MS;
    long connect = req->connect_timeout_ms > 0 ? req->connect_timeout_ms
                                               : HTTP_DEF_CONNECT_MS;
    curl_easy_setopt(e, CURLOPT_URL, req->url);
    if (req->path_as_is)
        curl_easy_setopt(e, CURLOPT_PATH_AS_IS, 1L);
    /* Only https may go through the environment's proxy (http_proxy, ALL_PROXY, ...):
     * a plain http request is one the loopback or ECS exception let through, and its
     * password, token or AWS keys would reach the proxy in clear (proxyenv.h). */
    if (!url_is_https(req->url))
        curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(e, CURLOPT_PRIVATE, (char *)x);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, connect);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, (timeout + 999) / 1000);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
    if (req->cacert && req->cacert[0])
        curl_easy_setopt(e, CURLOPT_CAINFO, req->cacert);
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "redrive");
    if (req->userpwd) {
        curl_easy_setopt(e, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        curl_easy_setopt(e, CURLOPT_USERPWD, req->userpwd);
    }
}

static void set_method_opts(CURL *e, http_xfer *x, const rd_http_req *req)
{
    const char *m = req->method ? req->method : "GET";
    if (req->body) {
        x->body_copy = xstrdup(req->body);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, x->body_copy);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(x->body_copy));
        if (strcmp(m, "POST") != 0)
            curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, m);
    } else if (strcmp(m, "GET") == 0) {
        curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    } else if (strcmp(m, "HEAD") == 0) {
        curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    } else {
        /* POST without body: send an explicit empty body (Content-Length: 0) */
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, "");
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, 0L);
        if (strcmp(m, "POST") != 0)
            curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, m);
    }
    /* A request that changes something (anything but GET/HEAD) gets a connection of its
     * own, closed after it: libcurl silently re-sends a request whose reused keep-alive
     * connection died before the first response byte, and a POST must never go out twice. */
    if (strcmp(m, "GET") != 0 && strcmp(m, "HEAD") != 0) {
        curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L);
        curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
    }
    bool has_ct = false;
    if (req->headers)
        for (const char *const *hd = req->headers; *hd; hd++) {
            if (strncasecmp(*hd, "Content-Type:", 13) == 0)
                has_ct = true;
            x->headers = curl_slist_append(x->headers, *hd);
        }
    if (req->body && !has_ct)
        x->headers = curl_slist_append(x->headers, "Content-Type: application/json");
    /* no "Expect: 100-continue" round trip on slow links */
    x->headers = curl_slist_append(x->headers, "Expect:");
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->headers);
}

/* A CR or LF inside a header value (a token file with a stray line break) would end the
 * header early and let the rest be read as another header: never send it. */
static bool headers_clean(const char *const *headers)
{
    for (const char *const *hd = headers; hd && *hd; hd++)
        if (strpbrk(*hd, "\r\n"))
            return false;
    return true;
}

/* The send-time half of the credential rule (config.c applies it at load): the URL as
 * libcurl will read it, so a parse that differs from the config parser's cannot slip by. */
static bool credential_may_go(rd_http *h, const rd_http_req *req)
{
    if (!req->credential && !req->userpwd)
        return true;
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL, *user = NULL;
    bool ok = false;
    if (!u || curl_url_set(u, CURLUPART_URL, req->url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK)
        snprintf(h->why, sizeof h->why, "credentials not sent: the URL does not parse");
    else if (curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK ||
             curl_url_get(u, CURLUPART_PASSWORD, &user, 0) == CURLUE_OK)
        snprintf(h->why, sizeof h->why, "credentials not sent: the URL holds a user name "
                 "(user:password@)");
    else if (strcasecmp(scheme, "http") == 0 && !req->insecure_ok && !host_is_loopback(host))
        snprintf(h->why, sizeof h->why, "credentials not sent over plain http:// to a host "
                 "that is not loopback: use https:// (or insecure = yes)");
    else
        ok = true;
    curl_free(scheme);
    curl_free(host);
    curl_free(user);
    curl_url_cleanup(u);
    return ok;
}

uint64_t http_start_named(rd_http *h, const rd_http_req *req, rd_http_cb cb, void *ud,
                          const char *name)
{
    if (!h)
        return 0;
    snprintf(h->why, sizeof h->why, "the request could not be started");
    if (!req || !req->url || !cb || !headers_clean(req->headers) || !http_multi_ready(h) ||
        !credential_may_go(h, req))
        return 0;
    CURL *e = curl_easy_init();
    if (!e)
        return 0;
    http_xfer *x = xcalloc(1, sizeof *x);
    x->h = h;
    x->easy = e;
    x->cb = cb;
    x->cb_name = name;
    x->ud = ud;
    x->max_body = req->max_body ? req->max_body : HTTP_DEF_MAX_BODY;
    set_common_opts(e, x, req);
    set_method_opts(e, x, req);
    if (curl_multi_add_handle(h->multi, e) != CURLM_OK) {
        curl_slist_free_all(x->headers);
        curl_easy_cleanup(e);
        free(x->body_copy);
        free(x);
        return 0;
    }
    x->id = h->next_id++;
    x->next = h->xfers;
    if (h->xfers)
        h->xfers->prev = x;
    h->xfers = x;
    h->n_pending++;
    return x->id;
}

void http_cancel(rd_http *h, uint64_t id)
{
    if (!h || !id)
        return;
    for (http_xfer *x = h->xfers; x; x = x->next)
        if (x->id == id) {
            xfer_unlink(h, x);
            xfer_free(h, x);
            return;
        }
}

bool http_async_dns(void)
{
    const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
    return v && (v->features & CURL_VERSION_ASYNCHDNS);
}

const char *http_why(const rd_http *h)
{
    return h ? h->why : "no HTTP client";
}

size_t http_pending(const rd_http *h)
{
    return h ? h->n_pending : 0;
}
