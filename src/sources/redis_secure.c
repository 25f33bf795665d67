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
#include "redis_conn_priv.h"

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

static void secret_next(rs_conn *c);

static void creds_forget(rs_conn *c)
{
    secret_free(c->sec.password);
    c->sec.password = NULL;
    c->sec.creds_ready = false;
    if (c->sec.store_is_ref) {
        redis_url_clear(&c->url);
        c->sec.url_ready = false;
    }
}

static void on_store_url(bool ok, const char *url, const char *why, void *ud)
{
    rs_conn *c = ud;
    c->sec.secret = NULL;
    char err[256];
    if (!ok) {
        char at[160];
        config_key_where(c->cfg, "store", at, sizeof at);
        snprintf(err, sizeof err, "%.150s: %.100s", at, why);
        c->sec.resolved(c, err, false);
        return;
    }
    secret_free(c->sec.store_value);
    c->sec.store_value = xstrdup(url);
    if (!rs_urls_set(c, url, true, err, sizeof err)) {
        char msg[300];
        snprintf(msg, sizeof msg, "store (%.40s): %.240s", c->cfg->store.url, err);
        c->sec.resolved(c, msg, true);
        return;
    }
    c->sec.url_ready = true;
    secret_next(c);
}

static void on_password(bool ok, const char *pw, const char *why, void *ud)
{
    rs_conn *c = ud;
    c->sec.secret = NULL;
    if (!ok) {
        char err[256], at[160];
        config_key_where(c->cfg, "store_password", at, sizeof at);
        snprintf(err, sizeof err, "%.150s: %.100s", at, why);
        c->sec.resolved(c, err, false);
        return;
    }
    secret_free(c->sec.password);
    c->sec.password = xstrdup(pw);
    c->sec.creds_ready = true;
    secret_next(c);
}

/* Resolves what is missing, one reference at a time; true when nothing is. */
static bool secret_step(rs_conn *c)
{
    const rd_system_cfg *cfg = c->cfg;
    if (!c->sec.url_ready) {
        c->state = RC_SECRET;
        c->sec.secret = secret_resolve(c->evb, cfg->store.url, 0, RS_SECRET_TIMEOUT_S, on_store_url, c);
        return false;
    }
    if (!c->sec.creds_ready && cfg->store.password) {
        c->state = RC_SECRET;
        c->sec.secret = secret_resolve(c->evb, cfg->store.password, 0, RS_SECRET_TIMEOUT_S,
                                   on_password, c);
        return false;
    }
    if (!c->sec.creds_ready) {           /* no store_password: the URL's, if any */
        secret_free(c->sec.password);
        c->sec.password = c->url.password ? xstrdup(c->url.password) : NULL;
        c->sec.creds_ready = true;
    }
    return true;
}

/* A reference was resolved: go on, and connect once everything is there. */
static void secret_next(rs_conn *c)
{
    if (secret_step(c)) {
        c->state = RC_NONE;
        c->sec.resolved(c, NULL, false);
    }
}

bool rs_secure_ready(rs_conn *c)
{
    if (c->sec.auth_failed) {            /* resolve again: the secret may have changed */
        c->sec.auth_failed = false;
        creds_forget(c);
    }
    return c->sec.secret ? false : secret_step(c);
}

static const char *rs_auth_user(const rs_conn *c)
{
    const rd_system_cfg *cfg = c->cfg;
    if (cfg->store.user && *cfg->store.user)
        return cfg->store.user;
    return c->url.user && *c->url.user ? c->url.user : NULL;
}

bool rs_auth_send(rs_conn *c, struct redisAsyncContext *ac, rs_reply_fn *cb)
{
    if (!c->sec.password)
        return false;
    const char *user = rs_auth_user(c);
    const char *argv[3] = { "AUTH", user ? user : c->sec.password, c->sec.password };
    size_t lens[3] = { 4, strlen(argv[1]), strlen(c->sec.password) };
    return redisAsyncCommandArgv(ac, cb, c, user ? 3 : 2, argv, lens) == REDIS_OK;
}

/* ---- error text --------------------------------------------------------------------- */

/* No part of the resolved store reference in what is shown. */
void rs_redact(const rs_conn *c, const char *msg, char *out, size_t cap)
{
    if (c->sec.store_is_ref && c->sec.store_value)
        redact_ref(msg, c->sec.store_value, c->cfg->store.url, out, cap);
    else
        snprintf(out, cap, "%s", msg ? msg : "");
}


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

void rs_conn_error_text(const rs_conn *c, const char *cmd, const char *err, char *out, size_t cap)
{
    const char *user = rs_auth_user(c);
    char who[160], named[64];
    snprintf(who, sizeof who, "user '%.120s'", user ? user : "default");
    if (!err)
        err = "";
    if (strncmp(err, "WRONGPASS", 9) == 0 || strncmp(err, "ERR invalid password", 20) == 0)
        snprintf(out, cap, "authentication failed for %s (%s)", who,
                 err[0] == 'W' ? "WRONGPASS" : "invalid password");
    else if (strncmp(err, "NOAUTH", 6) == 0 && !c->sec.password)
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
    rs_conn *c = ud;
    if (ev == TLSB_UP)
        model_source_tls(c->model, "redis", msg, tlsb_insecure(c->sec.tls));
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

static void bridge_key(const rs_conn *c, char *key, size_t cap)
{
    const char *ip = c->url.needs_dns ? c->ip : c->url.host;
    snprintf(key, cap, "%.63s|%d", ip, c->url.port);
}

bool rs_bridge_current(const rs_conn *c)
{
    char key[sizeof c->sec.tls_ip];
    bridge_key(c, key, sizeof key);
    return c->sec.tls && strcmp(c->sec.tls_ip, key) == 0;
}

bool rs_bridge_ready(rs_conn *c, char *err, size_t cap)
{
    if (rs_bridge_current(c))
        return true;
    /* the caller closed the contexts first (rs_bridge_current) */
    const char *ip = c->url.needs_dns ? c->ip : c->url.host;
    char key[sizeof c->sec.tls_ip];  /* address and port: a list may hold both on one IP */
    bridge_key(c, key, sizeof key);
    tlsb_free(c->sec.tls);
    c->sec.tls = NULL;
    struct sockaddr_storage ss;
    socklen_t len;
    if (!make_addr(ip, c->url.port, &ss, &len)) {
        snprintf(err, cap, "TLS: bad address '%.64s'", ip);
        return false;
    }
    const rd_system_cfg *cfg = c->cfg;
    tlsb_opts o = {
        .host = c->url.name, .cacert = cfg->store.tls.cacert, .cert = cfg->store.tls.cert,
        .key = cfg->store.tls.key, .insecure = cfg->store.tls.insecure,
        .timeout_s = RS_CONNECT_TIMEOUT,
    };
    char why[300];
    c->sec.tls = tlsb_new(c->evb, &o, (const struct sockaddr *)&ss, len, on_tls, c, why,
                          sizeof why);
    if (!c->sec.tls) {
        snprintf(err, cap, "TLS setup: %.200s", why);
        return false;
    }
    snprintf(c->sec.tls_ip, sizeof c->sec.tls_ip, "%s", key);
    return true;
}

const char *rs_bridge_path(const rs_conn *c)
{
    return c->sec.tls ? tlsb_path(c->sec.tls) : NULL;
}

void rs_bridge_clear_error(rs_conn *c)
{
    if (c->sec.tls)
        tlsb_clear_error(c->sec.tls);
}

const char *rs_bridge_error(const rs_conn *c, const char *fallback)
{
    const char *e = c->sec.tls ? tlsb_error(c->sec.tls) : "";
    return *e ? e : fallback;
}

void rs_secure_free(rs_conn *c)
{
    secret_cancel(c->sec.secret);
    c->sec.secret = NULL;
    tlsb_free(c->sec.tls);               /* the caller freed the contexts first */
    c->sec.tls = NULL;
    secret_free(c->sec.password);
    c->sec.password = NULL;
    secret_free(c->sec.store_value);
    c->sec.store_value = NULL;
    redis_url_clear(&c->url);
    rs_urls_free(c);
}
