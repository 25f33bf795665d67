/* The store's DLQ (Tasker's tasks_dlq, OpenAgents' dead jobs) read a page at a time with
 * keyset paging, either order, searched by the store: a DLQ of thousands is read a screen
 * at a time, `G` goes to the oldest, `/` searches all of it, never the page loaded only.
 * [query dlq] takes $1 limit, $2 $3 the page's start (sort_key, id), and, when its SQL
 * names them, $4 'oldest' (oldest first) and $5 the text searched. */
#include "pg_priv.h"

#include "../core/xalloc.h"
#include "pg_rows.h"

int pg_dlq_params(const pg_src *s, const char *sql, const char *limit, const char **p)
{
    p[0] = limit;
    p[1] = s->dlq_after.key;
    p[2] = s->dlq_after.id;
    p[3] = s->dlq_oldest ? "oldest" : NULL;
    p[4] = s->dlq_text;
    return sql && strstr(sql, "$5") ? 5 : sql && strstr(sql, "$4") ? 4 : 3;
}

static void cursor_copy(cursor *dst, const cursor *src)
{
    dst->key = src->key ? xstrdup(src->key) : NULL;
    dst->id = src->id ? xstrdup(src->id) : NULL;
    dst->budget = src->budget;
}

static void stack_drop(pg_src *s)
{
    while (s->dlq_depth)
        cursor_free(&s->dlq_stack[--s->dlq_depth]);
}

void pg_dlq_page(pg_src *s, int dir)
{
    if (dir > 0 && s->dlq_next.key) {
        xgrow(&s->dlq_stack, &s->dlq_stack_cap, s->dlq_depth + 1, sizeof *s->dlq_stack);
        cursor_copy(&s->dlq_stack[s->dlq_depth++], &s->dlq_after);
        cursor_free(&s->dlq_after);
        s->dlq_after = s->dlq_next;
        s->dlq_next.key = s->dlq_next.id = NULL;
    } else if (dir < 0 && s->dlq_depth) {
        cursor_free(&s->dlq_after);
        s->dlq_after = s->dlq_stack[--s->dlq_depth];
    }
}

void pg_dlq_order(pg_src *s, bool oldest, const char *text)
{
    char *t = text && *text ? xstrdup(text) : NULL;
    free(s->dlq_text);
    s->dlq_text = t;
    s->dlq_oldest = oldest;
    stack_drop(s);
    cursor_free(&s->dlq_after);
    cursor_free(&s->dlq_next);
}

void pg_dlq_apply(pg_src *s, const PGresult *r)
{
    rd_dlq_entry *v;
    size_t n = pg_rows_dlq(r, &v);
    cursor_free(&s->dlq_next);
    bool more = PQntuples(r) > DLQ_PAGE;
    if (more) {
        s->dlq_next.key = xstrdup(pg_text(r, DLQ_PAGE - 1, "sort_key"));
        s->dlq_next.id = xstrdup(pg_text(r, DLQ_PAGE - 1, "id"));
    }
    while (n > DLQ_PAGE)
        dlq_entry_clear(&v[--n]);
    rd_model *m = model(s);
    model_dlq_set(m, SRC_NAME, n ? v : NULL, n);
    if (!n)
        free(v);
    model_dlq_page(m, (long)s->dlq_depth * DLQ_PAGE + 1, more, s->dlq_oldest);
}

void pg_dlq_free(pg_src *s)
{
    stack_drop(s);
    free(s->dlq_stack);
    free(s->dlq_text);
    cursor_free(&s->dlq_after);
    cursor_free(&s->dlq_next);
}
