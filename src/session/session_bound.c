/* What a batch record is bound to (session.h, issue 35): the store and the core a
 * system's config points at, as words to compare, never a secret. */
#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "../core/xalloc.h"
#include "../io/secret.h"

/* URL without its userinfo, query and fragment: "redis://h:6379/0". */
static char *url_bare(const char *url)
{
    const char *sch = strstr(url, "://");
    const char *rest = sch ? sch + 3 : url;
    const char *end = rest + strcspn(rest, "/?#");
    const char *at = memchr(rest, '@', (size_t)(end - rest));
    const char *host = at ? at + 1 : rest;
    size_t pathlen = strcspn(end, "?#");
    return xasprintf("%.*s%.*s%.*s", sch ? (int)(sch + 3 - url) : 0, url,
                     (int)(end - host), host, (int)pathlen, end);
}

/* The cluster's system identifier and the database, asked of the store itself (a short
 * synchronous connection: only the CLI and the console's selecting child ask, never the
 * console's loop): "postgresql system SYSID db NAME"; NULL when the store does not answer
 * (the caller falls back to what the config names). */
static char *pg_asked(const rd_system_cfg *c, const char *conninfo)
{
    char *pw = NULL, why[200];
    bool is_cmd = false;
    const char *cmd = NULL;
    if (c->store.password && *c->store.password)
        pw = secret_resolve_now(c->store.password, &is_cmd, &cmd, why, sizeof why);
    const char *k[] = {"dbname", "connect_timeout", "application_name", "password",
                       "sslmode", "sslrootcert", "sslcert", "sslkey", NULL};
    const char *v[] = {conninfo, "5", "redrive-batch", pw, c->store.ssl.mode,
                       c->store.ssl.rootcert, c->store.ssl.cert, c->store.ssl.key, NULL};
    /* libpq stops at the first NULL keyword: the unset ones are given as "" (default) */
    for (size_t i = 3; k[i]; i++)
        if (!v[i])
            v[i] = "";
    PGconn *pg = PQconnectdbParams(k, v, 1);
    secret_free(pw);
    char *out = NULL;
    if (pg && PQstatus(pg) == CONNECTION_OK) {
        PGresult *r = PQexec(pg, "SELECT system_identifier::text, current_database() "
                                 "FROM pg_control_system()");
        if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
            out = xasprintf("postgresql system %s db %s", PQgetvalue(r, 0, 0),
                            PQgetvalue(r, 0, 1));
        PQclear(r);
    }
    PQfinish(pg);
    return out;
}

static char *pg_identity(const char *conninfo)
{
    char *err = NULL;
    PQconninfoOption *o = PQconninfoParse(conninfo, &err);
    if (!o) {
        PQfreemem(err);
        return NULL;
    }
    const char *host = NULL, *port = NULL, *db = NULL, *user = NULL, *addr = NULL;
    for (PQconninfoOption *p = o; p->keyword; p++) {
        if (!p->val || !*p->val)
            continue;
        if (!strcmp(p->keyword, "host")) host = p->val;
        else if (!strcmp(p->keyword, "hostaddr")) addr = p->val;
        else if (!strcmp(p->keyword, "port")) port = p->val;
        else if (!strcmp(p->keyword, "dbname")) db = p->val;
        else if (!strcmp(p->keyword, "user")) user = p->val;
    }
    char *s = xasprintf("postgresql://%s:%s/%s", host ? host : addr ? addr : "localhost",
                        port ? port : "5432", db ? db : user ? user : "?");
    PQconninfoFree(o);
    return s;
}

char *session_store_identity(const rd_system_cfg *c, const char *store_kind)
{
    const char *url = c->store.url;
    char *store = NULL, *resolved = NULL, why[200];
    if (url && *url && secret_is_ref(url)) {   /* env: and file: now; cmd: not run here */
        bool is_cmd = false;
        const char *cmd = NULL;
        url = resolved = secret_resolve_now(url, &is_cmd, &cmd, why, sizeof why);
    }
    if (url && *url) {
        if (store_kind && !strcmp(store_kind, "redis")) {
            store = url_bare(url);
            const char *p = strstr(store, "://");
            p = p ? strchr(p + 3, '/') : NULL;
            if (!p || !p[1]) {                /* no db in the URL: db 0 */
                char *t = xasprintf("%s%s0", store, p ? "" : "/");
                free(store);
                store = t;
            }
        } else if (!(store = pg_asked(c, url))) {
            char *named = pg_identity(url);    /* not answering: what the config names */
            store = named ? xasprintf("%s (the store did not answer)", named) : NULL;
            free(named);
        }
    }
    secret_free(resolved);
    if (c->sqs.queue_url && *c->sqs.queue_url) {
        char *q = url_bare(c->sqs.queue_url);
        char *t = store ? xasprintf("%s sqs=%s", store, q) : xasprintf("sqs=%s", q);
        free(q);
        free(store);
        store = t;
    }
    return store;
}

char *session_core_identity(const rd_system_cfg *c)
{
    return c->core.url && *c->core.url ? url_bare(c->core.url) : NULL;
}
