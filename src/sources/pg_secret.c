/*
 * Resolving a PostgreSQL source's secret references before a connect (pg_secret.h).
 */
#include "pg_secret.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "../core/redact.h"
#include "../core/xalloc.h"
#include "../io/secret.h"

static const double SECRET_TIMEOUT_S = 30.0;

struct pg_secrets {
    rd_loop *base;
    const rd_system_cfg *cfg;
    pg_conn *conn;
    pg_secrets_done done;
    void *ud;
    rd_secret *store, *password;  /* being resolved */
    char *store_value;            /* the resolved `store = env:...` (wiped) */
    int pending;
    char err[300];
};

pg_secrets *pg_secrets_new(rd_loop *base, const rd_system_cfg *cfg, pg_conn *conn,
                           pg_secrets_done done, void *ud)
{
    pg_secrets *sec = xcalloc(1, sizeof *sec);
    sec->base = base;
    sec->cfg = cfg;
    sec->conn = conn;
    sec->done = done;
    sec->ud = ud;
    return sec;
}

void pg_secrets_free(pg_secrets *sec)
{
    if (!sec)
        return;
    secret_cancel(sec->store);
    secret_cancel(sec->password);
    secret_free(sec->store_value);
    free(sec);
}

void pg_secrets_redact(const pg_secrets *sec, const char *msg, char *out, size_t cap)
{
    if (sec->store_value)
        redact_ref(msg, sec->store_value, sec->cfg->store.url, out, cap);
    else
        snprintf(out, cap, "%s", msg ? msg : "");
}

static void one_done(pg_secrets *sec)
{
    if (--sec->pending > 0)
        return;
    sec->done(sec->err[0] ? sec->err : NULL, sec->ud);
}

/* The first failure is the one reported: "file:line: why". */
static void failed(pg_secrets *sec, const char *key, const char *why)
{
    if (sec->err[0])
        return;
    char at[160];
    config_key_where(sec->cfg, key, at, sizeof at);
    snprintf(sec->err, sizeof sec->err, "%s: %s", at, why);
}

static void on_store(bool ok, const char *value, const char *why, void *ud)
{
    pg_secrets *sec = ud;
    sec->store = NULL;
    secret_free(sec->store_value);
    sec->store_value = ok ? xstrdup(value) : NULL;
    if (ok)
        pg_conn_set_conninfo(sec->conn, value, true);
    else
        failed(sec, "store", why);
    one_done(sec);
}

static void on_password(bool ok, const char *value, const char *why, void *ud)
{
    pg_secrets *sec = ud;
    sec->password = NULL;
    if (ok)
        pg_conn_set_param(sec->conn, "password", value);
    else
        failed(sec, "store_password", why);
    one_done(sec);
}

void pg_secrets_resolve(pg_secrets *sec)
{
    if (sec->pending)
        return;                       /* still resolving: done() follows */
    const rd_system_cfg *cfg = sec->cfg;
    bool store_ref = secret_is_ref(cfg->store.url);
    bool password = cfg->store.password && *cfg->store.password;
    if (!store_ref && !password) {
        sec->done(NULL, sec->ud);
        return;
    }
    sec->err[0] = '\0';
    sec->pending = (int)store_ref + (int)password;
    if (store_ref)
        sec->store = secret_resolve(sec->base, cfg->store.url, 0, SECRET_TIMEOUT_S, on_store, sec);
    if (password)
        sec->password = secret_resolve(sec->base, cfg->store.password, 0, SECRET_TIMEOUT_S,
                                       on_password, sec);
}
