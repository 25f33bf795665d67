/* What became of retries, read from the store (sources.h: outread, issue 35): each
 * retried item followed to the attempt its retry made, a page at a time (one query, or one
 * pipelined Redis round, a page), over a short synchronous connection of its own (the
 * CLI's; never the console's loop). What the systems' words mean is the profiles' data:
 * [query outcome] for PostgreSQL, outcome_* settings for Alakai's Redis hashes. */
#include "sources.h"

#include <cjson/cJSON.h>
#include <hiredis/hiredis.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "../core/outcome.h"
#include "../core/retry.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/secret.h"
#include "pg_rows.h"
#include "redis_record.h"
#include "redis_url.h"

struct rd_outread {
    const rd_system_cfg *c;
    const rd_profile *top;
    rd_profile *variant;          /* the era the store chose (owned), or NULL */
    const rd_profile *prof;       /* the one whose outcome words are used */
    PGconn *pg;
    redisContext *rc;
    size_t queries;               /* queries (or pipelined rounds) sent so far */
};

/* ---- PostgreSQL ---------------------------------------------------------------------- */

static bool pg_fail(PGconn *pg, PGresult *r, const char *what, char *why, size_t cap)
{
    const char *m = r ? PQresultErrorMessage(r) : PQerrorMessage(pg);
    snprintf(why, cap, "%s: %.*s", what, (int)strcspn(m ? m : "", "\n"), m ? m : "");
    PQclear(r);
    return false;
}

static const char SQL_SEARCH_PATH[] =
    "SELECT set_config('search_path', CASE WHEN $1 = 'public' THEN 'public' "
    "ELSE quote_ident($1) || ', public' END, false)";

/* Connects, sets the schema and picks the era's profile (variant_query). */
static bool pg_open(rd_outread *t, char *why, size_t cap)
{
    const rd_system_cfg *c = t->c;
    char *pw = NULL, *url = NULL, pwhy[200];
    bool is_cmd = false;
    const char *cmd = NULL;
    if (c->store.password && *c->store.password)
        pw = secret_resolve_now(c->store.password, &is_cmd, &cmd, pwhy, sizeof pwhy);
    if (c->store.url && secret_is_ref(c->store.url))
        url = secret_resolve_now(c->store.url, &is_cmd, &cmd, pwhy, sizeof pwhy);
    const char *k[] = {"dbname", "connect_timeout", "application_name", "options", "password",
                       "sslmode", "sslrootcert", "sslcert", "sslkey", NULL};
    const char *v[] = {url ? url : c->store.url, "3", "redrive-outcome",
                       "-c default_transaction_read_only=on -c statement_timeout=5000", pw,
                       c->store.ssl.mode, c->store.ssl.rootcert, c->store.ssl.cert,
                       c->store.ssl.key, NULL};
    for (size_t i = 4; k[i]; i++)
        if (!v[i])
            v[i] = "";
    t->pg = PQconnectdbParams(k, v, 1);
    secret_free(pw);
    secret_free(url);
    if (!t->pg || PQstatus(t->pg) != CONNECTION_OK)
        return pg_fail(t->pg, NULL, "the store", why, cap);
    const char *schema = c->store.schema ? c->store.schema : profile_get(t->top, "schema");
    if (schema && *schema) {
        PGresult *r = PQexecParams(t->pg, SQL_SEARCH_PATH, 1, NULL, &schema, NULL, NULL, 0);
        if (PQresultStatus(r) != PGRES_TUPLES_OK)
            return pg_fail(t->pg, r, "the store's schema", why, cap);
        PQclear(r);
    }
    const char *vq = profile_get(t->top, "variant_query");
    const char *vsql = vq ? profile_query(t->top, vq) : NULL;
    if (vsql) {
        PGresult *r = PQexec(t->pg, vsql);
        if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
            return pg_fail(t->pg, r, "the store's schema era", why, cap);
        char *name = xstrdup(PQgetvalue(r, 0, 0));
        PQclear(r);
        rd_diags d = {0};
        t->variant = xcalloc(1, sizeof *t->variant);
        bool ok = strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-_") == strlen(name) &&
                  profile_load_near(name, t->top->path, t->variant, &d);
        if (!ok)
            snprintf(why, cap, "profile %s: %s", name, d.n ? d.msgs[0] : "cannot load");
        diags_free(&d);
        free(name);
        if (!ok)
            return false;
        t->prof = t->variant;
    }
    return true;
}

/* The profile's query name, or false with why (the era's profile lacks it). */
static const char *pg_query(const rd_outread *t, const char *name, const char *what, char *why,
                            size_t cap)
{
    const char *sql = profile_query(t->prof, name);
    if (!sql)
        snprintf(why, cap, "profile %s has no [query %s]: %s", t->prof->name ? t->prof->name : "?",
                 name, what);
    return sql;
}

/* {"a","b"}: a text[] literal, each element quoted and escaped. */
static char *pg_array(const rd_outread_item *it, size_t n)
{
    size_t cap = 3;
    for (size_t i = 0; i < n; i++)
        cap += 2 * strlen(it[i].id) + 3;
    char *s = xmalloc(cap), *o = s;
    *o++ = '{';
    for (size_t i = 0; i < n; i++) {
        if (i)
            *o++ = ',';
        *o++ = '"';
        for (const char *p = it[i].id; *p; p++) {
            if (*p == '"' || *p == '\\')
                *o++ = '\\';
            *o++ = *p;
        }
        *o++ = '"';
    }
    *o++ = '}';
    *o = 0;
    return s;
}

/* error_json as the executions' rows read it (pg_rows.c): an object's message, else data;
 * a string's value; anything else as it is. Allocated or NULL. */
static char *error_json(const char *text)
{
    if (!text)
        return NULL;
    cJSON *j = cJSON_Parse(text);
    const char *s = cJSON_GetStringValue(j);
    if (cJSON_IsObject(j)) {
        s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "message"));
        if (!s)
            s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "data"));
    }
    char *out = cJSON_IsNull(j) ? NULL : xstrdup(s ? s : text);
    cJSON_Delete(j);
    return out;
}

static const char *col(const PGresult *r, int row, int c)
{
    return c >= 0 && !PQgetisnull(r, row, c) ? PQgetvalue(r, row, c) : NULL;
}

static bool pg_page(rd_outread *t, const rd_outread_item *it, unsigned char *out, size_t n,
                    char *why, size_t cap)
{
    const char *sql = pg_query(t, "outcome", "the outcome is not read", why, cap);
    if (!sql)
        return false;
    char *arr = pg_array(it, n);
    const char *params[] = {arr};
    PGresult *r = PQexecParams(t->pg, sql, 1, NULL, params, NULL, NULL, 0);
    free(arr);
    t->queries++;
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return pg_fail(t->pg, r, "the outcome query", why, cap);
    int cid = PQfnumber(r, "id"), cout = PQfnumber(r, "outcome"), cerr = PQfnumber(r, "error"),
        cjson = PQfnumber(r, "error_json"), corig = PQfnumber(r, "orig_error");
    if (cid < 0 || cout < 0) {
        PQclear(r);
        snprintf(why, cap, "the outcome query has no id or outcome column");
        return false;
    }
    for (int row = 0; row < PQntuples(r); row++) {
        const char *id = col(r, row, cid);
        for (size_t i = 0; id && i < n; i++) {
            if (strcmp(it[i].id, id) != 0)
                continue;
            const char *err = col(r, row, cerr);
            char *ej = err ? NULL : error_json(col(r, row, cjson));
            rd_bout_row br = {.outcome = col(r, row, cout), .error = err ? err : ej,
                              .orig_error = col(r, row, corig)};
            out[i] = (unsigned char)bout_classify(&br, it[i].fp);
            free(ej);
        }
    }
    PQclear(r);
    return true;
}

/* The items' verdicts now, by the executions list's own rule: the profile's [query
 * recheck] (the columns of [query execution], its superseded test included, for a page of
 * ids) read by pg_rows.c's row reader, as a row of the list is read. */
static bool pg_verdicts(rd_outread *t, const rd_outread_item *it, size_t n, rd_verdict *out,
                        char *why, size_t cap)
{
    const char *sql = pg_query(t, "recheck", "the batch cannot be checked against the store",
                               why, cap);
    if (!sql)
        return false;
    char *arr = pg_array(it, n);
    const char *params[] = {arr};
    PGresult *r = PQexecParams(t->pg, sql, 1, NULL, params, NULL, NULL, 0);
    free(arr);
    t->queries++;
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return pg_fail(t->pg, r, "the recheck query", why, cap);
    const char *sem = profile_get(t->prof, "semantics");
    pg_row_ctx x = {.sem = pg_semantics_parse(sem ? sem : profile_get(t->top, "semantics")),
                    .now = clock_wall()};
    attune_backoff_defaults(&x.backoff);
    for (int row = 0; row < PQntuples(r); row++) {
        rd_execution e;
        if (!pg_row_exec(r, row, &x, &e))
            continue;
        for (size_t i = 0; i < n; i++)
            if (strcmp(it[i].id, e.id) == 0)
                out[i] = e.elig;
        execution_clear(&e);
    }
    PQclear(r);
    return true;
}

/* ---- Redis (Alakai) ------------------------------------------------------------------ */

static bool rd_open(rd_outread *t, char *why, size_t cap)
{
    const rd_system_cfg *c = t->c;
    char *resolved = NULL, pwhy[200];
    bool is_cmd = false, secret = c->store.url && secret_is_ref(c->store.url);
    const char *cmd = NULL;
    const char *url = c->store.url;
    if (secret)
        url = resolved = secret_resolve_now(c->store.url, &is_cmd, &cmd, pwhy, sizeof pwhy);
    rd_redis_url u;
    memset(&u, 0, sizeof u);
    bool ok = url && redis_url_parse_item(url, 0, secret, &u, why, cap);
    secret_free(resolved);
    if (ok && (u.tls || u.needs_dns)) {
        snprintf(why, cap, "the outcome is read over plain redis:// to an address (this store "
                 "is %s): not read", u.tls ? "TLS" : "a host name");
        ok = false;
    }
    struct timeval tv = {3, 0};
    if (ok) {
        t->rc = u.path[0] ? redisConnectUnixWithTimeout(u.path, tv)
                          : redisConnectWithTimeout(u.host, u.port, tv);
        if (!t->rc || t->rc->err) {
            snprintf(why, cap, "the store: %s", t->rc ? t->rc->errstr : "cannot connect");
            ok = false;
        }
    }
    if (ok)
        redisSetTimeout(t->rc, tv);
    char *pw = u.password ? xstrdup(u.password) : NULL;
    const char *user = u.user ? u.user : c->store.user;
    if (!pw && c->store.password && *c->store.password)
        pw = secret_resolve_now(c->store.password, &is_cmd, &cmd, pwhy, sizeof pwhy);
    if (ok && pw) {
        redisReply *r = user ? redisCommand(t->rc, "AUTH %s %s", user, pw)
                             : redisCommand(t->rc, "AUTH %s", pw);
        ok = r && r->type != REDIS_REPLY_ERROR;
        if (!ok)
            snprintf(why, cap, "the store refused AUTH");
        freeReplyObject(r);
    }
    secret_free(pw);
    if (ok && u.db) {
        redisReply *r = redisCommand(t->rc, "SELECT %d", u.db);
        ok = r && r->type != REDIS_REPLY_ERROR;
        if (!ok)
            snprintf(why, cap, "the store refused SELECT %d", u.db);
        freeReplyObject(r);
    }
    redis_url_clear(&u);
    return ok;
}

/* Whether status is one of the words of the profile's setting key. */
static bool word_in(const rd_profile *p, const char *key, const char *status)
{
    const char *list = profile_get(p, key);
    size_t n = strlen(status);
    for (const char *w = list; w && *w;) {
        w += strspn(w, " ,");
        size_t len = strcspn(w, " ,");
        if (len && len == n && !strncmp(w, status, n))
            return true;
        w += len;
    }
    return false;
}

static bool rd_page(rd_outread *t, const rd_outread_item *it, unsigned char *out, size_t n,
                    char *why, size_t cap)
{
    const char *prefix = t->c->alakai.prefix ? t->c->alakai.prefix : "alakai-executions";
    for (size_t i = 0; i < n; i++) {      /* one round: every command, then every reply */
        char key[600], field[16];
        snprintf(key, sizeof key, "%s:%s", prefix, it[i].id);
        snprintf(field, sizeof field, "%d", it[i].attempt > 0 ? it[i].attempt + 1 : 0);
        redisAppendCommand(t->rc, "HGET %b %b", key, strlen(key), field, strlen(field));
    }
    t->queries++;
    for (size_t i = 0; i < n; i++) {
        redisReply *r = NULL;
        if (redisGetReply(t->rc, (void **)&r) != REDIS_OK) {
            snprintf(why, cap, "the store: %s", t->rc->errstr);
            return false;
        }
        if (r->type == REDIS_REPLY_STRING && it[i].attempt > 0) {
            rd_alakai_rec rec;
            alakai_rec_decode(r->str, (size_t)r->len, &rec);
            const char *o = !rec.status[0] ? NULL
                            : word_in(t->prof, "outcome_succeeded", rec.status) ? "succeeded"
                            : word_in(t->prof, "outcome_failed", rec.status) ? "failed"
                            : "running";
            rd_bout_row br = {.outcome = o, .error = rec.error};
            out[i] = (unsigned char)bout_classify(&br, it[i].fp);
            alakai_rec_clear(&rec);
        }
        freeReplyObject(r);
    }
    return true;
}

/* The items' verdicts now: each task's attempt fields (HKEYS, one pipelined round a page),
 * then its newest attempt's record (HGET, a second round): retry_alakai on the newest, an
 * item whose frozen attempt is older superseded by it. */
static bool rd_verdicts(rd_outread *t, const rd_outread_item *it, size_t n, rd_verdict *out,
                        char *why, size_t cap)
{
    const char *prefix = t->c->alakai.prefix ? t->c->alakai.prefix : "alakai-executions";
    int *newest = xcalloc(n ? n : 1, sizeof *newest);
    bool ok = true;
    for (int round = 0; ok && round < 2; round++) {
        size_t sent = 0;
        for (size_t i = 0; i < n; i++) {
            char key[600], field[16];
            snprintf(key, sizeof key, "%s:%s", prefix, it[i].id);
            if (round == 0) {
                redisAppendCommand(t->rc, "HKEYS %b", key, strlen(key));
            } else if (newest[i] > 0) {
                snprintf(field, sizeof field, "%d", newest[i]);
                redisAppendCommand(t->rc, "HGET %b %b", key, strlen(key), field, strlen(field));
            } else {
                continue;
            }
            sent++;
        }
        t->queries += sent > 0;
        for (size_t i = 0; i < n && sent; i++) {
            if (round == 1 && newest[i] <= 0)
                continue;
            redisReply *r = NULL;
            if (redisGetReply(t->rc, (void **)&r) != REDIS_OK) {
                snprintf(why, cap, "the store: %s", t->rc->errstr);
                ok = false;
                break;
            }
            if (round == 0 && r->type == REDIS_REPLY_ARRAY) {
                for (size_t k = 0; k < r->elements; k++) {
                    const redisReply *f = r->element[k];
                    int num = f->type == REDIS_REPLY_STRING ? alakai_field_num(f->str, f->len) : -1;
                    if (num > newest[i])
                        newest[i] = num;
                }
            } else if (round == 1 && r->type == REDIS_REPLY_STRING) {
                rd_alakai_rec rec;
                alakai_rec_decode(r->str, (size_t)r->len, &rec);
                if (it[i].attempt > 0 && newest[i] > it[i].attempt) {
                    out[i].verdict = RD_ELIG_NO;
                    snprintf(out[i].why, sizeof out[i].why, "superseded by attempt %d", newest[i]);
                } else {
                    out[i] = retry_alakai(rec.status[0] ? rec.status : NULL, newest[i],
                                          t->c->alakai.max_retries);
                }
                alakai_rec_clear(&rec);
            }
            freeReplyObject(r);
        }
    }
    free(newest);
    return ok;
}

/* ---- the reader ---------------------------------------------------------------------- */

static bool is_redis(const rd_outread *t)
{
    return t->top->store && !strcmp(t->top->store, "redis");
}

static void disconnect(rd_outread *t)
{
    PQfinish(t->pg);
    t->pg = NULL;
    if (t->rc)
        redisFree(t->rc);
    t->rc = NULL;
}

rd_outread *outread_new(const rd_system_cfg *c, const rd_profile *prof)
{
    rd_outread *t = xcalloc(1, sizeof *t);
    t->c = c;
    t->top = t->prof = prof;
    return t;
}

bool outread_page(rd_outread *t, const rd_outread_item *it, size_t n, unsigned char *out,
                  char *why, size_t cap)
{
    if (!t->pg && !t->rc) {
        bool ok = is_redis(t) ? rd_open(t, why, cap) : pg_open(t, why, cap);
        if (!ok) {
            disconnect(t);
            return false;
        }
    }
    if (!n)
        return true;
    bool ok = is_redis(t) ? rd_page(t, it, out, n, why, cap) : pg_page(t, it, out, n, why, cap);
    if (!ok)
        disconnect(t);                /* connect again next time */
    return ok;
}

bool outread_verdicts(rd_outread *t, const rd_outread_item *it, size_t n, rd_verdict *out,
                      char *why, size_t cap)
{
    for (size_t i = 0; i < n; i++) {
        out[i] = (rd_verdict){.verdict = RD_ELIG_NO};
        snprintf(out[i].why, sizeof out[i].why, "no such execution in the store");
    }
    if (!outread_page(t, NULL, 0, NULL, why, cap))   /* connected first */
        return false;
    if (!n)
        return true;
    bool ok = is_redis(t) ? rd_verdicts(t, it, n, out, why, cap)
                          : pg_verdicts(t, it, n, out, why, cap);
    if (!ok)
        disconnect(t);
    return ok;
}

size_t outread_queries(const rd_outread *t)
{
    return t->queries;
}

void outread_free(rd_outread *t)
{
    if (!t)
        return;
    disconnect(t);
    if (t->variant) {
        profile_free(t->variant);
        free(t->variant);
    }
    free(t);
}
