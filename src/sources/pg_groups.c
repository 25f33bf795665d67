#include "pg_groups.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/groupid.h"
#include "../core/xalloc.h"

static double col_num(const PGresult *r, int i, const char *col)
{
    double d;
    return pg_parse_double(pg_text(r, i, col), &d) && d >= 0 && d < 1e15 ? d : 0;
}

so_base *pg_groups_window_read(const PGresult *r)
{
    so_base *b = so_base_new();
    int n = PQresultStatus(r) == PGRES_TUPLES_OK ? PQntuples(r) : 0;
    size_t total = 0;
    bool capped = false;
    for (int i = 0; i < n; i++) {
        so_dim d;
        if (!so_dim_parse(pg_text(r, i, "dimension"), &d))
            continue;
        const char *v = pg_text(r, i, "value");
        so_base_add(b, d, v, (size_t)col_num(r, i, "n"));
        if (d == SO_WORKER && PQfnumber(r, "host") >= 0)
            so_base_host(b, v, pg_text(r, i, "host"));
        total = (size_t)col_num(r, i, "total");
        capped |= pg_parse_bool(pg_text(r, i, "capped")) == 1;
    }
    so_base_total(b, total, capped);
    so_base_finish(b);
    return b;
}

/* A row's `workers`: a JSON object of its failures per worker ({"7": 12000, "12": 3}), so a
 * raw error spread over many workers stays one row (its text read once). */
static void row_workers(rd_sgroups *g, const PGresult *r, int i)
{
    const char *j = PQfnumber(r, "workers") >= 0 ? pg_text(r, i, "workers") : NULL;
    cJSON *o = j ? cJSON_ParseWithLength(j, strlen(j)) : NULL;
    for (const cJSON *w = cJSON_IsObject(o) ? o->child : NULL; w; w = w->next)
        if (cJSON_IsNumber(w) && w->valuedouble >= 1 && w->valuedouble < 1e15 && w->string && *w->string)
            sgroups_add_dim(g, SO_WORKER, w->string, (size_t)w->valuedouble);
    cJSON_Delete(o);
}

/* A row's key: its raw error and every column the system's rule reads — all but the tally's,
 * the id and the worker — each as length:text (NULL as "-"). Rows of one raw error on
 * several workers share it, and become one prototype with its workers (the text held once). */
static char *row_key(const PGresult *r, int i)
{
    static const char *const skip[] = { "id", "worker", "n", "recent", "first_at", "last_at", "capped", "workers" };
    size_t cap = 128, used = 0;
    char *k = xmalloc(cap);
    for (int c = 0; c < PQnfields(r); c++) {
        const char *name = PQfname(r, c);
        bool skipped = false;
        for (size_t s = 0; s < sizeof skip / sizeof *skip && !skipped; s++)
            skipped = strcmp(name, skip[s]) == 0;
        if (skipped)
            continue;
        bool null = PQgetisnull(r, i, c);
        const char *v = null ? "" : PQgetvalue(r, i, c);
        size_t len = strlen(v);   /* text results: no NUL inside */
        xgrow(&k, &cap, used + len + 32, 1);
        used += null ? (size_t)snprintf(k + used, cap - used, "-|")
                     : (size_t)snprintf(k + used, cap - used, "%zu:", len);
        memcpy(k + used, v, len);
        used += len;
    }
    k[used] = '\0';
    return k;
}

typedef struct key_slot {
    char *key;                       /* NULL: free */
    size_t proto;
} key_slot;

/* The prototype with this key (the table has room: at most half full), or SIZE_MAX after
 * taking the key for proto. */
static size_t key_find(key_slot *t, size_t cap, char *key, size_t proto)
{
    for (size_t k = (size_t)groupid_hash(key) & (cap - 1);; k = (k + 1) & (cap - 1)) {
        if (!t[k].key) {
            t[k] = (key_slot){ key, proto };
            return SIZE_MAX;
        }
        if (strcmp(t[k].key, key) == 0) {
            free(key);
            return t[k].proto;
        }
    }
}

rd_sgroups *pg_groups_read(const PGresult *r, const pg_row_ctx *x, double window_s, long cap,
                           so_base *base)
{
    rd_sgroups *g = sgroups_new(window_s, cap, x->now);
    sgroups_set_base(g, base);
    int n = PQresultStatus(r) == PGRES_TUPLES_OK ? PQntuples(r) : 0;
    bool capped = false, per_worker = PQfnumber(r, "worker") >= 0;
    size_t tcap = 16;
    while (tcap < 2 * (size_t)n + 2)
        tcap *= 2;
    key_slot *keys = per_worker ? xcalloc(tcap, sizeof *keys) : NULL;
    for (int i = 0; i < n; i++) {
        rd_group_tally t = {
            .count = (size_t)col_num(r, i, "n"), .recent = (size_t)col_num(r, i, "recent"),
            .first_seen = col_num(r, i, "first_at"), .last_seen = col_num(r, i, "last_at"),
        };
        capped |= pg_parse_bool(pg_text(r, i, "capped")) == 1;
        size_t at = keys ? key_find(keys, tcap, row_key(r, i), sgroups_protos(g)) : SIZE_MAX;
        if (at != SIZE_MAX) {           /* the same raw error on another worker */
            sgroups_add_tally_at(g, at, &t);
            sgroups_add_dim_at(g, at, SO_WORKER, pg_text(r, i, "worker"), t.count);
            continue;
        }
        rd_execution e;
        if (!pg_row_exec(r, i, x, &e))
            continue;
        sgroups_add(g, &e, &t);
        if (per_worker)
            sgroups_add_dim(g, SO_WORKER, pg_text(r, i, "worker"), t.count);
        row_workers(g, r, i);
    }
    for (size_t k = 0; keys && k < tcap; k++)
        free(keys[k].key);
    free(keys);
    sgroups_set_capped(g, capped);
    sgroups_finish(g);
    return g;
}
