#include "pg_groups.h"

#include <cjson/cJSON.h>
#include <string.h>

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

rd_sgroups *pg_groups_read(const PGresult *r, const pg_row_ctx *x, double window_s, long cap,
                           so_base *base)
{
    rd_sgroups *g = sgroups_new(window_s, cap, x->now);
    sgroups_set_base(g, base);
    int n = PQresultStatus(r) == PGRES_TUPLES_OK ? PQntuples(r) : 0;
    bool capped = false;
    for (int i = 0; i < n; i++) {
        rd_execution e;
        if (!pg_row_exec(r, i, x, &e))
            continue;
        rd_group_tally t = {
            .count = (size_t)col_num(r, i, "n"), .recent = (size_t)col_num(r, i, "recent"),
            .first_seen = col_num(r, i, "first_at"), .last_seen = col_num(r, i, "last_at"),
        };
        capped |= pg_parse_bool(pg_text(r, i, "capped")) == 1;
        sgroups_add(g, &e, &t);
        row_workers(g, r, i);
    }
    sgroups_set_capped(g, capped);
    sgroups_finish(g);
    return g;
}
