/*
 * The Redis source's access: credentials and TLS.
 *
 * Credentials are secret references (io/secret.h), resolved on the loop before the first
 * connect (the source stays pending meanwhile): the store URL itself when `store` is a
 * reference (then "user:password@" inside it is accepted), and `store_password`. AUTH is
 * the first command of every connection, main and subscription alike; after an
 * authentication failure the references are resolved again before the next attempt (a
 * rotated password or a short-lived token is picked up).
 *
 * TLS (rediss://): one bridge per source (io/tlsbridge.h), made for the resolved address
 * and remade when a new lookup gives another one; hiredis connects to its unix socket.
 * The bridge knows why a connection really ended; hiredis only sees it close.
 *
 * No message here ever contains the password: errors name the user and the command.
 */
#include "redis_priv.h"

#include <arpa/inet.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/redact.h"
#include "../core/xalloc.h"
#include "../io/secret.h"
#include "../io/tlsbridge.h"

enum { RS_SECRET_TIMEOUT_S = 15 };

/* ---- secrets --------------------------------------------------------------------------- */

static void secret_next(rs_src *s);

static void creds_forget(rs_src *s)
{
    secret_free(s->password);
    s->password = NULL;
    s->creds_ready = false;
    if (s->store_is_ref) {
        redis_url_clear(&s->url);
        s->url_ready = false;
    }
}

static void on_store_url(bool ok, const char *url, const char *why, void *ud)
{
    rs_src *s = ud;
    s->secret = NULL;
    char err[256];
    if (!ok) {
        char at[160];
        config_key_where(s->base.ctx.cfg, "store", at, sizeof at);
        snprintf(err, sizeof err, "%.150s: %.100s", at, why);
        rs_secret_failed(s, err, false);
        return;
    }
    secret_free(s->store_value);
    s->store_value = xstrdup(url);
    if (!rs_urls_set(s, url, true, err, sizeof err)) {
        char msg[300];
        snprintf(msg, sizeof msg, "store (%.40s): %.240s", s->base.ctx.cfg->store.url, err);
        rs_secret_failed(s, msg, true);
        return;
    }
    s->url_ready = true;
    secret_next(s);
}

static void on_password(bool ok, const char *pw, const char *why, void *ud)
{
    rs_src *s = ud;
    s->secret = NULL;
    if (!ok) {
        char err[256], at[160];
        config_key_where(s->base.ctx.cfg, "store_password", at, sizeof at);
        snprintf(err, sizeof err, "%.150s: %.100s", at, why);
        rs_secret_failed(s, err, false);
        return;
    }
    secret_free(s->password);
    s->password = xstrdup(pw);
    s->creds_ready = true;
    secret_next(s);
}

/* Resolves what is missing, one reference at a time; true when nothing is. */
static bool secret_step(rs_src *s)
{
    const rd_system_cfg *cfg = s->base.ctx.cfg;
    if (!s->url_ready) {
        s->state = RC_SECRET;
        s->secret = secret_resolve(s->evb, cfg->store.url, 0, RS_SECRET_TIMEOUT_S, on_store_url, s);
        return false;
    }
    if (!s->creds_ready && cfg->store.password) {
        s->state = RC_SECRET;
        s->secret = secret_resolve(s->evb, cfg->store.password, 0, RS_SECRET_TIMEOUT_S,
                                   on_password, s);
        return false;
    }
    if (!s->creds_ready) {           /* no store_password: the URL's, if any */
        secret_free(s->password);
        s->password = s->url.password ? xstrdup(s->url.password) : NULL;
        s->creds_ready = true;
    }
    return true;
}

/* A reference was resolved: go on, and connect once everything is there. */
static void secret_next(rs_src *s)
{
    if (secret_step(s)) {
        s->state = RC_NONE;
        rs_conn_start(s);
    }
}

bool rs_secure_ready(rs_src *s)
{
    if (s->auth_failed) {            /* resolve again: the secret may have changed */
        s->auth_failed = false;
        creds_forget(s);
    }
    return s->secret ? false : secret_step(s);
}

const char *rs_auth_user(const rs_src *s)
{
    const rd_system_cfg *cfg = s->base.ctx.cfg;
    if (cfg->store.user && *cfg->store.user)
        return cfg->store.user;
    return s->url.user && *s->url.user ? s->url.user : NULL;
}

bool rs_auth_send(rs_src *s, struct redisAsyncContext *ac,
                  void (*cb)(struct redisAsyncContext *, void *, void *))
{
    if (!s->password)
        return false;
    const char *user = rs_auth_user(s);
    const char *argv[3] = { "AUTH", user ? user : s->password, s->password };
    size_t lens[3] = { 4, strlen(argv[1]), strlen(s->password) };
    return redisAsyncCommandArgv(ac, cb, s, user ? 3 : 2, argv, lens) == REDIS_OK;
}

/* ---- error text --------------------------------------------------------------------- */

bool rs_access_error(const char *err)
{
    return err && (strncmp(err, "NOAUTH", 6) == 0 || strncmp(err, "WRONGPASS", 9) == 0 ||
                   strncmp(err, "NOPERM", 6) == 0);
}

/* The command a NOPERM message names ("… to run the 'hgetall' command"), upper-cased. */
static bool noperm_command(const char *err, char *out, size_t cap)
{
    const char *q = strstr(err, "run the '"), *e;
    if (!q || !(e = strchr(q + 9, '\'')) || e == q + 9 || (size_t)(e - q - 9) >= cap)
        return false;
    size_t n = (size_t)(e - q - 9);
    for (size_t i = 0; i < n; i++) {
        char c = q[9 + i];
        out[i] = c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
    }
    out[n] = '\0';
    return true;
}

void rs_error_text(const rs_src *s, const char *cmd, const char *err, char *out, size_t cap)
{
    const char *user = rs_auth_user(s);
    char who[160], named[64];
    snprintf(who, sizeof who, "user '%.120s'", user ? user : "default");
    if (!err)
        err = "";
    if (strncmp(err, "WRONGPASS", 9) == 0 || strncmp(err, "ERR invalid password", 20) == 0)
        snprintf(out, cap, "authentication failed for %s (%s)", who,
                 err[0] == 'W' ? "WRONGPASS" : "invalid password");
    else if (strncmp(err, "NOAUTH", 6) == 0 && !s->password)
        snprintf(out, cap, "the server requires authentication (NOAUTH): set store_password "
                 "(and store_user for an ACL user)");
    else if (strncmp(err, "NOAUTH", 6) == 0)
        snprintf(out, cap, "not authenticated as %s (NOAUTH)", who);
    else if (strncmp(err, "NOPERM", 6) == 0 && strstr(err, "keys"))
        snprintf(out, cap, "%s lacks permission for the keys of %s (NOPERM)", who,
                 cmd ? cmd : "a command");
    else if (strncmp(err, "NOPERM", 6) == 0)
        snprintf(out, cap, "%s lacks permission for %s (NOPERM)", who,
                 noperm_command(err, named, sizeof named) ? named : cmd ? cmd : "a command");
    else if (strstr(err, "without any password configured"))
        snprintf(out, cap, "AUTH refused: the server has no password for %s "
                 "(store_password set, none needed)", who);
    else
        snprintf(out, cap, "%s: %.150s", cmd ? cmd : "redis", err);
}

/* ---- TLS --------------------------------------------------------------------------- */

static void on_tls(tlsb_event ev, const char *msg, void *ud)
{
    rs_src *s = ud;
    if (ev == TLSB_UP)
        model_source_tls(s->base.ctx.model, "redis", msg, tlsb_insecure(s->tls));
}

static bool make_addr(const char *ip, int port, struct sockaddr_storage *ss, socklen_t *len)
{
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, ip, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        *len = sizeof *v4;
        return true;
    }
    if (inet_pton(AF_INET6, ip, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        *len = sizeof *v6;
        return true;
    }
    return false;
}

bool rs_bridge_ready(rs_src *s, char *err, size_t cap)
{
    const char *ip = s->url.needs_dns ? s->ip : s->url.host;
    char key[sizeof s->tls_ip];         /* address and port: a list may hold both on one IP */
    snprintf(key, sizeof key, "%.63s|%d", ip, s->url.port);
    if (s->tls && strcmp(s->tls_ip, key) == 0)
        return true;
    rs_sub_close(s);                 /* contexts before their bridge */
    tlsb_free(s->tls);
    s->tls = NULL;
    struct sockaddr_storage ss;
    socklen_t len;
    if (!make_addr(ip, s->url.port, &ss, &len)) {
        snprintf(err, cap, "TLS: bad address '%.64s'", ip);
        return false;
    }
    const rd_system_cfg *cfg = s->base.ctx.cfg;
    tlsb_opts o = {
        .host = s->url.name, .cacert = cfg->store.tls.cacert, .cert = cfg->store.tls.cert,
        .key = cfg->store.tls.key, .insecure = cfg->store.tls.insecure,
        .timeout_s = RS_CONNECT_TIMEOUT,
    };
    char why[300];
    s->tls = tlsb_new(s->evb, &o, (const struct sockaddr *)&ss, len, on_tls, s, why, sizeof why);
    if (!s->tls) {
        snprintf(err, cap, "TLS setup: %.200s", why);
        return false;
    }
    snprintf(s->tls_ip, sizeof s->tls_ip, "%s", key);
    return true;
}

const char *rs_bridge_path(const rs_src *s)
{
    return s->tls ? tlsb_path(s->tls) : NULL;
}

void rs_bridge_clear_error(rs_src *s)
{
    if (s->tls)
        tlsb_clear_error(s->tls);
}

const char *rs_conn_error(const rs_src *s, const char *fallback)
{
    const char *e = s->tls ? tlsb_error(s->tls) : "";
    return *e ? e : fallback;
}

void rs_secure_free(rs_src *s)
{
    secret_cancel(s->secret);
    s->secret = NULL;
    tlsb_free(s->tls);               /* the caller freed the contexts first */
    s->tls = NULL;
    secret_free(s->password);
    s->password = NULL;
    secret_free(s->store_value);
    s->store_value = NULL;
    redis_url_clear(&s->url);
    rs_urls_free(s);
}
