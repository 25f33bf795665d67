#include "pg_groups.h"

#include <string.h>

static double col_num(const PGresult *r, int i, const char *col)
{
    double d;
    return pg_parse_double(pg_text(r, i, col), &d) && d >= 0 && d < 1e15 ? d : 0;
}

rd_sgroups *pg_groups_read(const PGresult *r, const pg_row_ctx *x, double window_s, long cap)
{
    rd_sgroups *g = sgroups_new(window_s, cap, x->now);
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
    }
    sgroups_set_capped(g, capped);
    sgroups_finish(g);
    return g;
}
