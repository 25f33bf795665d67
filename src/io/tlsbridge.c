/*
 * TLS bridge: a private unix socket in front of a TLS connection (see tlsbridge.h).
 *
 * Per accepted connection: a plain socket bufferevent connects to the resolved address
 * (our own non-blocking connect(), so the errno of an immediate failure is not lost to a
 * deferred callback); once connected, an OpenSSL filter bufferevent is put over it for the
 * handshake and the traffic. One timer per connection is the deadline of the connect +
 * handshake, and later of the flush to hiredis when the server has ended.
 *
 * Callbacks to the caller go through notify(), always the last thing a handler does, so
 * the caller may free the bridge from inside the callback (deferred until it returns).
 */
#include "tlsbridge.h"

#include "../core/fsperm.h"
#include "../core/xalloc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/util.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define TLSB_MAX_CONNS 16
#define TLSB_DEFAULT_TIMEOUT 3.0
#define TLSB_DEFAULT_BUFFER ((size_t)1 << 20)

typedef struct tlsb_conn tlsb_conn;

struct tlsb {
    struct event_base *base;
    SSL_CTX *ctx;
    struct evconnlistener *lis;
    struct event *relisten;          /* re-enables the listener after an accept error */
    struct sockaddr_storage sa;
    socklen_t salen;
    char *host;
    bool host_is_ip;
    bool insecure;
    double timeout_s;
    size_t max_buf;
    char where[160];                 /* "host:port" for messages */
    char dir[128], path[160];
    tlsb_cb cb;
    void *ud;
    char err[400];
    char info[200];
    tlsb_conn *conns;
    size_t nconns;
    size_t peak;                     /* most bytes one side ever held to write */
    int in_cb;
    bool free_wanted;
};

struct tlsb_conn {
    tlsb *b;
    tlsb_conn *next;
    struct bufferevent *local;       /* the unix side (hiredis) */
    struct bufferevent *tcp;         /* plain socket while connecting, then owned by tls */
    struct bufferevent *tls;         /* OpenSSL filter over tcp */
    struct event *timer;
    bool up;                         /* handshake done */
    bool closing;                    /* one side ended: flushing the other */
};

/* ---- small helpers ------------------------------------------------------------------- */

static void destroy(tlsb *b);

static void notify(tlsb *b, tlsb_event ev, const char *msg)
{
    if (b->cb) {
        b->in_cb++;
        b->cb(ev, msg, b->ud);
        b->in_cb--;
    }
    if (b->in_cb == 0 && b->free_wanted)
        destroy(b);
}

static void set_err(tlsb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_err(tlsb *b, const char *fmt, ...)
{
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(b->err, sizeof b->err, "%.250s (%.140s)", msg, b->where);
}

/* strerror with a lower-case first letter, to read as part of a sentence. */
static const char *errno_text(int e, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", strerror(e));
    if (buf[0] >= 'A' && buf[0] <= 'Z' && !(buf[1] >= 'A' && buf[1] <= 'Z'))
        buf[0] = (char)(buf[0] - 'A' + 'a');
    return buf;
}

static void timer_arm(tlsb_conn *c)
{
    double t = c->b->timeout_s;
    struct timeval tv = { .tv_sec = (time_t)t };
    tv.tv_usec = (suseconds_t)((t - (double)tv.tv_sec) * 1e6);
    evtimer_add(c->timer, &tv);
}

static void conn_free(tlsb_conn *c)
{
    tlsb *b = c->b;
    for (tlsb_conn **p = &b->conns; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            b->nconns--;
            break;
        }
    if (c->tls)
        bufferevent_free(c->tls);    /* frees tcp and the SSL too */
    else if (c->tcp)
        bufferevent_free(c->tcp);
    if (c->local)
        bufferevent_free(c->local);
    if (c->timer)
        event_free(c->timer);
    free(c);
}

/* Drops the connection and reports the error set by set_err(). Last call of a handler. */
static void conn_fail(tlsb_conn *c)
{
    tlsb *b = c->b;
    conn_free(c);
    notify(b, TLSB_ERROR, b->err);
}

/* ---- moving bytes --------------------------------------------------------------------- */

/* Moves src's input to dst's output; stops reading src while dst holds max_buf or more
 * (dst's write callback resumes it). */
static void pump(tlsb_conn *c, struct bufferevent *src, struct bufferevent *dst)
{
    struct evbuffer *out = bufferevent_get_output(dst);
    evbuffer_add_buffer(out, bufferevent_get_input(src));
    size_t n = evbuffer_get_length(out);
    if (n > c->b->peak)
        c->b->peak = n;
    if (n >= c->b->max_buf) {
        bufferevent_disable(src, EV_READ);
        bufferevent_setwatermark(dst, EV_WRITE, c->b->max_buf / 2, 0);
    }
}

/* dst drained (below its low watermark): let its partner read again, or finish closing. */
static void drained(tlsb_conn *c, struct bufferevent *dst, struct bufferevent *partner)
{
    if (c->closing) {
        if (evbuffer_get_length(bufferevent_get_output(dst)) == 0)
            conn_free(c);
        return;
    }
    bufferevent_setwatermark(dst, EV_WRITE, 0, 0);
    if (partner)
        bufferevent_enable(partner, EV_READ);
}

/* One side ended cleanly: flush what the other side still has to write, then close. */
static void conn_close_after_flush(tlsb_conn *c, struct bufferevent *other)
{
    if (!other || evbuffer_get_length(bufferevent_get_output(other)) == 0) {
        conn_free(c);
        return;
    }
    c->closing = true;
    if (c->local)
        bufferevent_disable(c->local, EV_READ);
    if (c->tls)
        bufferevent_disable(c->tls, EV_READ);
    bufferevent_setwatermark(other, EV_WRITE, 0, 0);
    evtimer_del(c->timer);
    timer_arm(c);                    /* a peer that never reads cannot keep us */
}

static void on_local_read(struct bufferevent *bev, void *arg)
{
    tlsb_conn *c = arg;
    if (c->tls && !c->closing)
        pump(c, c->local, c->tls);   /* before the handshake ends, the TLS side buffers */
}

static void on_local_write(struct bufferevent *bev, void *arg)
{
    tlsb_conn *c = arg;
    drained(c, c->local, c->up ? c->tls : NULL);
}

static void on_tls_read(struct bufferevent *bev, void *arg)
{
    tlsb_conn *c = arg;
    if (!c->closing)
        pump(c, c->tls, c->local);
}

static void on_tls_write(struct bufferevent *bev, void *arg)
{
    tlsb_conn *c = arg;
    drained(c, c->tls, c->local);
}

static void on_local_event(struct bufferevent *bev, short what, void *arg)
{
    tlsb_conn *c = arg;
    if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)))
        return;
    /* hiredis went away (it sends no QUIT): nothing more to carry, nothing to report */
    conn_free(c);
}

/* ---- TLS ------------------------------------------------------------------------------ */

/* What the operator can do about a verification failure, when it is not obvious. */
static const char *verify_hint(long vr)
{
    switch (vr) {
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
        return "; the server's certificate is not from a CA in the CA file";
    default:
        return "";
    }
}

static const char *alert_hint(unsigned long e)
{
    switch (ERR_GET_REASON(e)) {
    case SSL_R_WRONG_VERSION_NUMBER:
        return "; is this a TLS port?";
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
        return "; the server wants a client certificate";
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
        return "; the server refused our client certificate";
    default:
        return "";
    }
}

/* The reason a handshake (or a TLS connection) failed, as specific as OpenSSL tells. */
static void tls_reason(tlsb_conn *c, short what)
{
    tlsb *b = c->b;
    SSL *ssl = bufferevent_openssl_get_ssl(c->tls);
    long vr = ssl ? SSL_get_verify_result(ssl) : X509_V_OK;
    unsigned long e = bufferevent_get_openssl_error(c->tls), first = e;
    while (e)
        e = bufferevent_get_openssl_error(c->tls);
    int sock_err = EVUTIL_SOCKET_ERROR();
    const char *reason = first ? ERR_reason_error_string(first) : NULL;
    char buf[120];
    if (!c->up && !b->insecure && vr != X509_V_OK)
        set_err(b, "TLS: certificate verify failed: %s%s", X509_verify_cert_error_string(vr),
                verify_hint(vr));
    else if (reason)
        set_err(b, "TLS: %s%s", reason, alert_hint(first));
    else if ((what & BEV_EVENT_EOF) || !sock_err)
        set_err(b, "TLS: the server closed the connection%s",
                c->up ? "" : " during the handshake");
    else
        set_err(b, "TLS: %s", errno_text(sock_err, buf, sizeof buf));
}

static void tls_up(tlsb_conn *c)
{
    tlsb *b = c->b;
    SSL *ssl = bufferevent_openssl_get_ssl(c->tls);
    c->up = true;
    evtimer_del(c->timer);
    b->err[0] = '\0';
    if (b->insecure)
        snprintf(b->info, sizeof b->info, "%s %s, certificate NOT verified (insecure)",
                 SSL_get_version(ssl), SSL_get_cipher_name(ssl));
    else
        snprintf(b->info, sizeof b->info, "%s %s, certificate verified for %s",
                 SSL_get_version(ssl), SSL_get_cipher_name(ssl), b->host);
    bufferevent_enable(c->local, EV_READ);
    pump(c, c->local, c->tls);       /* what hiredis sent during the handshake */
    notify(b, TLSB_UP, b->info);
}

static void on_tls_event(struct bufferevent *bev, short what, void *arg)
{
    tlsb_conn *c = arg;
    if (what & BEV_EVENT_CONNECTED) {
        tls_up(c);
        return;
    }
    if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)))
        return;
    if (c->up && !(what & BEV_EVENT_ERROR)) {
        /* the server ended cleanly: hand hiredis what it sent, then close */
        pump(c, c->tls, c->local);
        conn_close_after_flush(c, c->local);
        return;
    }
    if (c->closing) {                /* hiredis is gone already: nobody to tell */
        conn_free(c);
        return;
    }
    tls_reason(c, what);
    conn_fail(c);
}

static SSL *ssl_for(tlsb *b)
{
    SSL *ssl = SSL_new(b->ctx);
    if (!ssl)
        return NULL;
    bool ok = true;
    if (!b->host_is_ip)              /* RFC 6066: no IP literals in SNI */
        ok = SSL_set_tlsext_host_name(ssl, b->host) == 1;
    if (ok && !b->insecure) {
        X509_VERIFY_PARAM *param = SSL_get0_param(ssl);
        X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        ok = b->host_is_ip ? X509_VERIFY_PARAM_set1_ip_asc(param, b->host) == 1
                           : SSL_set1_host(ssl, b->host) == 1;
    }
    if (!ok) {
        SSL_free(ssl);
        return NULL;
    }
    return ssl;
}

static void tls_start(tlsb_conn *c)
{
    tlsb *b = c->b;
    SSL *ssl = ssl_for(b);
    struct bufferevent *tls = ssl ? bufferevent_openssl_filter_new(
        b->base, c->tcp, ssl, BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE) : NULL;
    if (!tls) {
        if (ssl)
            SSL_free(ssl);
        set_err(b, "TLS: cannot set up the connection");
        conn_fail(c);
        return;
    }
    c->tls = tls;                    /* owns tcp from now on */
    bufferevent_openssl_set_allow_dirty_shutdown(tls, 1);
    bufferevent_setcb(tls, on_tls_read, on_tls_write, on_tls_event, c);
    bufferevent_setwatermark(c->tcp, EV_WRITE, 0, b->max_buf);  /* bounds the ciphertext */
    c->tcp = NULL;
    bufferevent_setwatermark(tls, EV_READ, 0, b->max_buf);
    bufferevent_enable(tls, EV_READ | EV_WRITE);
    pump(c, c->local, c->tls);       /* buffered until the handshake is done */
}

static void on_tcp_event(struct bufferevent *bev, short what, void *arg)
{
    tlsb_conn *c = arg;
    char buf[120];
    if (what & BEV_EVENT_CONNECTED) {
        tls_start(c);
        return;
    }
    if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)))
        return;
    int e = EVUTIL_SOCKET_ERROR();
    set_err(c->b, "connect: %s", e ? errno_text(e, buf, sizeof buf) : "connection closed");
    conn_fail(c);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    tlsb_conn *c = arg;
    tlsb *b = c->b;
    if (c->closing || c->up) {       /* a flush that never finished: just close */
        conn_free(c);
        return;
    }
    if (c->tls)
        set_err(b, "TLS handshake did not finish within %g s", b->timeout_s);
    else
        set_err(b, "connect did not finish within %g s", b->timeout_s);
    conn_fail(c);
}

/* ---- accepting ------------------------------------------------------------------------ */

/* Our own non-blocking connect, then bufferevent_socket_connect(NULL) to wait for it. */
static bool tcp_start(tlsb_conn *c)
{
    tlsb *b = c->b;
    char buf[120];
    int fd = socket(b->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        set_err(b, "connect: %s", errno_text(errno, buf, sizeof buf));
        return false;
    }
    if (connect(fd, (const struct sockaddr *)&b->sa, b->salen) != 0 && errno != EINPROGRESS) {
        set_err(b, "connect: %s", errno_text(errno, buf, sizeof buf));
        close(fd);
        return false;
    }
    c->tcp = bufferevent_socket_new(b->base, fd, BEV_OPT_CLOSE_ON_FREE);
    if (!c->tcp) {
        close(fd);
        set_err(b, "connect: cannot create a buffer");
        return false;
    }
    bufferevent_setcb(c->tcp, NULL, NULL, on_tcp_event, c);
    if (bufferevent_socket_connect(c->tcp, NULL, 0) != 0) {
        set_err(b, "connect: cannot wait for the connection");
        return false;
    }
    return true;
}

/* Only this process's hiredis may use the verified connection: the socket's directory
 * (0700) keeps other users out, the peer's pid any other process of ours (a user's other
 * programs, a credential_process child). hiredis 0.14 cannot take one end of a socketpair
 * (no async context from an fd), so the socket exists; a stranger's connection is closed
 * unread, before any TLS connection is opened for it. */
static bool peer_is_us(evutil_socket_t fd)
{
    struct ucred cred;
    socklen_t len = sizeof cred;
    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
           cred.uid == geteuid() && cred.pid == getpid();
}

static void on_accept(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa,
                      int salen, void *arg)
{
    tlsb *b = arg;
    if (!peer_is_us(fd)) {
        evutil_closesocket(fd);
        return;
    }
    if (b->nconns >= TLSB_MAX_CONNS) {
        evutil_closesocket(fd);
        snprintf(b->err, sizeof b->err, "TLS bridge: more than %d connections",
                 TLSB_MAX_CONNS);
        notify(b, TLSB_ERROR, b->err);
        return;
    }
    tlsb_conn *c = xcalloc(1, sizeof *c);
    c->b = b;
    c->next = b->conns;
    b->conns = c;
    b->nconns++;
    c->timer = evtimer_new(b->base, on_timer, c);
    c->local = bufferevent_socket_new(b->base, fd, BEV_OPT_CLOSE_ON_FREE);
    if (!c->timer || !c->local) {
        if (!c->local)
            evutil_closesocket(fd);
        set_err(b, "TLS bridge: out of resources");
        conn_fail(c);
        return;
    }
    bufferevent_setcb(c->local, on_local_read, on_local_write, on_local_event, c);
    bufferevent_setwatermark(c->local, EV_READ, 0, b->max_buf);
    bufferevent_enable(c->local, EV_READ | EV_WRITE);
    timer_arm(c);
    if (!tcp_start(c))
        conn_fail(c);
}

static void on_relisten(evutil_socket_t fd, short what, void *arg)
{
    tlsb *b = arg;
    evconnlistener_enable(b->lis);
}

/* accept() failed (e.g. out of file descriptors): pause, or the loop would spin. */
static void on_accept_error(struct evconnlistener *lis, void *arg)
{
    tlsb *b = arg;
    char buf[120];
    snprintf(b->err, sizeof b->err, "TLS bridge: accept: %s",
             errno_text(EVUTIL_SOCKET_ERROR(), buf, sizeof buf));
    evconnlistener_disable(lis);
    struct timeval tv = { 0, 200000 };
    evtimer_add(b->relisten, &tv);
    notify(b, TLSB_ERROR, b->err);
}

/* ---- setup ---------------------------------------------------------------------------- */

static int no_passphrase(char *buf, int size, int rwflag, void *ud)
{
    return -1;                       /* never prompt on the terminal */
}

static const char *ssl_reason(void)
{
    unsigned long e = ERR_peek_last_error();
    const char *r = e ? ERR_reason_error_string(e) : NULL;
    ERR_clear_error();
    return r ? r : "unknown error";
}

static bool readable(const char *what, const char *file, char *err, size_t cap)
{
    char buf[120];
    if (access(file, R_OK) == 0)
        return true;
    snprintf(err, cap, "cannot read %s %s: %s", what, file, errno_text(errno, buf, sizeof buf));
    return false;
}

static bool pem_encrypted(const char *file)
{
    char buf[4096];
    FILE *f = fopen(file, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strstr(buf, "ENCRYPTED") != NULL;
}

static bool load_cert(SSL_CTX *ctx, const tlsb_opts *o, char *err, size_t cap)
{
    const char *key = o->key && *o->key ? o->key : o->cert;
    if (!readable("client certificate", o->cert, err, cap) ||
        !readable("client key", key, err, cap) ||
        /* a key is a secret: the owner/mode rule of file: secrets */
        !fsperm_check_file(key, "client key", FSP_REGULAR | FSP_PRIVATE, err, cap))
        return false;
    if (SSL_CTX_use_certificate_chain_file(ctx, o->cert) != 1) {
        snprintf(err, cap, "cannot load client certificate %s: %s", o->cert, ssl_reason());
        return false;
    }
    if (pem_encrypted(key)) {
        snprintf(err, cap, "client key %s is encrypted: not supported", key);
        return false;
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ctx) != 1) {
        unsigned long e = ERR_peek_last_error();
        if (ERR_GET_REASON(e) == X509_R_KEY_VALUES_MISMATCH ||
            ERR_GET_REASON(e) == SSL_R_PRIVATE_KEY_MISMATCH) {
            snprintf(err, cap, "client key %s does not match certificate %s", key, o->cert);
            ERR_clear_error();
        } else {
            snprintf(err, cap, "cannot load client key %s: %s", key, ssl_reason());
        }
        return false;
    }
    return true;
}

static SSL_CTX *ctx_new(const tlsb_opts *o, char *err, size_t cap)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) {
        snprintf(err, cap, "TLS: cannot create a context: %s", ssl_reason());
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_default_passwd_cb(ctx, no_passphrase);
    SSL_CTX_set_verify(ctx, o->insecure ? SSL_VERIFY_NONE : SSL_VERIFY_PEER, NULL);
    if (o->cacert && *o->cacert) {
        if (!readable("CA file", o->cacert, err, cap))
            goto fail;
        if (SSL_CTX_load_verify_locations(ctx, o->cacert, NULL) != 1) {
            snprintf(err, cap, "cannot load CA file %s: %s", o->cacert, ssl_reason());
            goto fail;
        }
    } else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
        snprintf(err, cap, "cannot load the system trust store: %s", ssl_reason());
        goto fail;
    }
    if (o->cert && *o->cert && !load_cert(ctx, o, err, cap))
        goto fail;
    return ctx;
fail:
    SSL_CTX_free(ctx);
    return NULL;
}

static bool listen_private(tlsb *b, char *err, size_t cap)
{
    char buf[120];
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp || strlen(tmp) > 80)
        tmp = "/tmp";
    snprintf(b->dir, sizeof b->dir, "%s/rd-tls.XXXXXX", tmp);
    if (!mkdtemp(b->dir)) {
        snprintf(err, cap, "TLS bridge: cannot create a directory in %s: %s", tmp,
                 errno_text(errno, buf, sizeof buf));
        b->dir[0] = '\0';
        return false;
    }
    chmod(b->dir, 0700);
    struct sockaddr_un sun = { .sun_family = AF_UNIX };
    snprintf(b->path, sizeof b->path, "%s/s", b->dir);
    if (strlen(b->path) >= sizeof sun.sun_path) {
        snprintf(err, cap, "TLS bridge: socket path too long: %s", b->path);
        return false;
    }
    memcpy(sun.sun_path, b->path, strlen(b->path) + 1);
    b->lis = evconnlistener_new_bind(b->base, on_accept, b,
                                     LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 16,
                                     (struct sockaddr *)&sun, (int)sizeof sun);
    if (!b->lis) {
        snprintf(err, cap, "TLS bridge: cannot listen on %s: %s", b->path,
                 errno_text(errno, buf, sizeof buf));
        return false;
    }
    evconnlistener_set_error_cb(b->lis, on_accept_error);
    return true;
}

static void where_set(tlsb *b)
{
    unsigned port = 0;
    if (b->sa.ss_family == AF_INET)
        port = ntohs(((const struct sockaddr_in *)&b->sa)->sin_port);
    else if (b->sa.ss_family == AF_INET6)
        port = ntohs(((const struct sockaddr_in6 *)&b->sa)->sin6_port);
    bool v6 = strchr(b->host, ':') != NULL;
    snprintf(b->where, sizeof b->where, "%s%.140s%s:%u", v6 ? "[" : "", b->host,
             v6 ? "]" : "", port);
}

tlsb *tlsb_new(struct event_base *base, const tlsb_opts *opts, const struct sockaddr *sa,
               socklen_t salen, tlsb_cb cb, void *ud, char *err, size_t errcap)
{
    if (!opts || !opts->host || !*opts->host || !sa || salen > sizeof(struct sockaddr_storage) ||
        (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)) {
        snprintf(err, errcap, "TLS bridge: a host name and an IP address are required");
        return NULL;
    }
    tlsb *b = xcalloc(1, sizeof *b);
    b->base = base;
    memcpy(&b->sa, sa, salen);
    b->salen = salen;
    b->host = xstrdup(opts->host);
    unsigned char bin[sizeof(struct in6_addr)];
    b->host_is_ip = inet_pton(AF_INET, b->host, bin) == 1 || inet_pton(AF_INET6, b->host, bin) == 1;
    b->insecure = opts->insecure;
    b->timeout_s = opts->timeout_s > 0 ? opts->timeout_s : TLSB_DEFAULT_TIMEOUT;
    b->max_buf = opts->max_buffer ? opts->max_buffer : TLSB_DEFAULT_BUFFER;
    b->cb = cb;
    b->ud = ud;
    where_set(b);
    b->relisten = evtimer_new(base, on_relisten, b);
    b->ctx = ctx_new(opts, err, errcap);
    if (!b->relisten || !b->ctx || !listen_private(b, err, errcap))
        goto fail;
    return b;
fail:
    destroy(b);
    return NULL;
}

static void destroy(tlsb *b)
{
    while (b->conns)
        conn_free(b->conns);
    if (b->lis)
        evconnlistener_free(b->lis);
    if (b->relisten)
        event_free(b->relisten);
    if (b->path[0])
        unlink(b->path);
    if (b->dir[0])
        rmdir(b->dir);
    if (b->ctx)
        SSL_CTX_free(b->ctx);
    free(b->host);
    free(b);
}

void tlsb_free(tlsb *b)
{
    if (!b)
        return;
    if (b->in_cb) {
        b->free_wanted = true;
        b->cb = NULL;
        return;
    }
    destroy(b);
}

const char *tlsb_path(const tlsb *b) { return b->path; }
const char *tlsb_error(const tlsb *b) { return b->err; }
void tlsb_clear_error(tlsb *b) { b->err[0] = '\0'; }
const char *tlsb_info(const tlsb *b) { return b->info; }
bool tlsb_insecure(const tlsb *b) { return b->insecure; }
size_t tlsb_connections(const tlsb *b) { return b->nconns; }
size_t tlsb_peak_buffered(const tlsb *b) { return b->peak; }
