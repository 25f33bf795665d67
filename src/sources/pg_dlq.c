/* The store's DLQ (Tasker's tasks_dlq, OpenAgents' dead jobs) read a page at a time with
 * keyset paging, either order, searched by the store: a DLQ of thousands is read a screen
 * at a time, `G` goes to the oldest, `/` searches all of it, never the page loaded only.
 * [query dlq] takes $1 limit, $2 $3 the page's start (sort_key, id), and, when its SQL
 * names them, $4 'oldest' (oldest first) and $5 the text searched. */
#include "pg_dlq.h"

#include <stdlib.h>
#include <string.h>

#include "../core/dlqgroup.h"
#include "../core/xalloc.h"
#include "pg_qkind.h"
#include "pg_rows.h"

typedef struct dlq_cursor { char *key, *id; } dlq_cursor;

struct pg_dlq {
    dlq_cursor after, next;       /* this page's start (NULL: the first), the next one's */
    dlq_cursor *stack;            /* the starts of the pages before this one */
    size_t depth, cap;
    bool oldest;
    char *text;
};

static void cur_free(dlq_cursor *c)
{
    free(c->key);
    free(c->id);
    c->key = c->id = NULL;
}

static void stack_drop(pg_dlq *d)
{
    while (d->depth)
        cur_free(&d->stack[--d->depth]);
}

pg_dlq *pg_dlq_new(void) { return xcalloc(1, sizeof(pg_dlq)); }

void pg_dlq_free(pg_dlq *d)
{
    if (!d)
        return;
    stack_drop(d);
    free(d->stack);
    free(d->text);
    cur_free(&d->after);
    cur_free(&d->next);
    free(d);
}

int pg_dlq_params(const pg_dlq *d, const char *sql, const char *limit, const char **p)
{
    p[0] = limit;
    p[1] = d->after.key;
    p[2] = d->after.id;
    p[3] = d->oldest ? "oldest" : NULL;
    p[4] = d->text;
    return sql && strstr(sql, "$5") ? 5 : sql && strstr(sql, "$4") ? 4 : 3;
}

void pg_dlq_page(pg_dlq *d, int dir)
{
    if (dir > 0 && d->next.key) {
        xgrow(&d->stack, &d->cap, d->depth + 1, sizeof *d->stack);
        d->stack[d->depth++] = d->after;
        d->after = d->next;
        d->next.key = d->next.id = NULL;
    } else if (dir < 0 && d->depth) {
        cur_free(&d->after);
        d->after = d->stack[--d->depth];
    }
}

void pg_dlq_order(pg_dlq *d, bool oldest, const char *text)
{
    char *t = text && *text ? xstrdup(text) : NULL;
    free(d->text);
    d->text = t;
    d->oldest = oldest;
    stack_drop(d);
    cur_free(&d->after);
    cur_free(&d->next);
}

void pg_dlq_first(pg_dlq *d)
{
    stack_drop(d);
    cur_free(&d->after);
    cur_free(&d->next);
}

void pg_dlq_got_groups(rd_model *m, const PGresult *r)
{
    int n = PQntuples(r);
    rd_dlq_sgroups *g = xcalloc(1, sizeof *g);
    g->items = xcalloc((size_t)n + 1, sizeof *g->items);
    for (int i = 0; i < n; i++) {
        const char *by = pg_text(r, i, "by"), *key = pg_text(r, i, "key"), *cnt = pg_text(r, i, "n");
        const char *capped = pg_text(r, i, "capped");
        double c;
        if (!by || !pg_parse_double(cnt, &c) || c < 0 || c > 1e12)
            continue;
        rd_dlq_by b = strcmp(by, "reason") == 0 ? DLQ_BY_REASON : strcmp(by, "queue") == 0 ? DLQ_BY_QUEUE : DLQ_BY_NONE;
        if (b == DLQ_BY_NONE)
            continue;
        rd_dlq_sgroup *s = &g->items[g->n++];
        s->by = b;
        s->key = xstrdup(key && *key ? key : "-");
        s->count = (long)c;
        s->first = pg_parse_epoch(pg_text(r, i, "first_at"));
        s->last = pg_parse_epoch(pg_text(r, i, "last_at"));
        g->capped |= capped && (strcmp(capped, "t") == 0 || strcmp(capped, "true") == 0);
    }
    model_set_dlq_sgroups(m, g);
}

void pg_dlq_got(pg_dlq *d, rd_model *m, const PGresult *r)
{
    rd_dlq_entry *v;
    size_t n = pg_rows_dlq(r, &v);
    cur_free(&d->next);
    bool more = PQntuples(r) > DLQ_PAGE;
    if (more) {
        const char *key = pg_text(r, DLQ_PAGE - 1, "sort_key"), *id = pg_text(r, DLQ_PAGE - 1, "id");
        d->next.key = key ? xstrdup(key) : NULL;
        d->next.id = id ? xstrdup(id) : NULL;
    }
    while (n > DLQ_PAGE)
        dlq_entry_clear(&v[--n]);
    model_dlq_set(m, SRC_NAME, n ? v : NULL, n);
    if (!n)
        free(v);
    model_dlq_page(m, (long)d->depth * DLQ_PAGE + 1, more, d->oldest);
}
