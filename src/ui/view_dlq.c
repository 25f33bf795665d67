/* DLQ: opening it is the explicit request to peek, except for SQS (alakai), where a peek
 * receives the messages: the view says so and peeks only on `r`. Enter shows the whole
 * payload (pretty JSON, sanitized) and the linked retry chain, or "no record" when the
 * store has none (for an SQS dead letter: a lost dispatch). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/dlqgroup.h"
#include "../core/dlqhorizon.h"
#include "../core/sanitize.h"
#include "../core/xalloc.h"
#include "../session/session.h"   /* the RabbitMQ peek limits (sources.h) */
#include "draw.h"
#include "table.h"
#include "view.h"

typedef struct dlq_st {
    bool detail;
    int scroll;
    int detail_lines;      /* lines at the last draw, to clamp scrolling */
    char *shown_id;        /* entry shown in detail */
    char *pretty;          /* sanitized payload text (multi-line) */
    bool sqs_asked;        /* SQS: the operator asked for a peek since the view opened */
    size_t *rows;          /* indexes into model->dlq the view's filter lets through */
    size_t n_rows, cap_rows;
    rd_dlq_by by;          /* grouped by reason or by queue (the group-by key), or not */
    rd_dlq_group *groups;  /* of the rows, at the last draw */
    size_t n_groups;
    ui_list glist;         /* the cursor among the groups */
} dlq_st;

/* An SQS system: peeking receives messages, so only on request. */
static bool dlq_is_sqs(const ui_ctx *c)
{
    return c->cfg && c->cfg->sqs.queue_url && *c->cfg->sqs.queue_url;
}

/* Turns spaces into line breaks so that no line of the ASCII text t passes width. */
static void word_breaks(char *t, int width)
{
    char *line = t, *last_space = NULL;
    for (char *p = t; *p; p++) {
        if (*p == ' ')
            last_space = p;
        if (p - line >= width && last_space) {
            *last_space = '\n';
            line = last_space + 1;
            last_space = NULL;
        }
    }
}

/* Read-only: the peeks that change the messages (a RabbitMQ get, an SQS receive) are not
 * done (sources_set_read_only); the view shows what is known without them. */
static bool dlq_peek_off(const ui_ctx *c)
{
    return c->read_only && (c->model->dlq_peek_off || dlq_is_sqs(c));
}

/* What is known without a peek: each dead-letter queue's size and what the broker's
 * statistics and arguments tell. Lines (raw) into out[0..cap), returns how many. */
static size_t peek_off_lines(const ui_ctx *c, char **out, size_t cap)
{
    const rd_model *m = c->model;
    size_t n = 0;
    out[n++] = xstrdup("Peeking is off in read-only: a RabbitMQ get would requeue the messages (redelivered) "
                       "and an SQS receive would raise their receive count. What the broker's statistics tell:");
    for (size_t i = 0; i < m->queues.n && n + 1 < cap; i++) {
        const rd_queue *q = &m->queues.items[i];
        if (!q->is_dlq)
            continue;
        char depth[32], ready[32], unacked[32], ttl[48] = "";
        fmt_long(q->depth, depth, sizeof depth);
        fmt_long(q->ready, ready, sizeof ready);
        fmt_long(q->unacked, unacked, sizeof unacked);
        if (q->ttl_ms >= 0)
            snprintf(ttl, sizeof ttl, ", message TTL %ld ms", q->ttl_ms);
        out[n++] = xasprintf("  %s: %s messages (ready %s, unacked %s), %d consumer%s%s%s%s", q->name ? q->name : "-",
                             depth, ready, unacked, q->consumers, q->consumers == 1 ? "" : "s",
                             q->dead_letter_exchange ? ", dead-letters to " : "",
                             q->dead_letter_exchange ? q->dead_letter_exchange : "", ttl);
    }
    if (n == 1)
        out[n++] = xstrdup("  no dead-letter queue among the queues the broker lists");
    if (n < cap)
        out[n++] = xstrdup("  the reasons (x-death, receive counts) are in the messages: a peek reads them");
    return n;
}

/* The read-only panel at the bottom of the list area; returns the lines it took. */
static int peek_off_draw(const ui_ctx *c, WINDOW *w, ui_rect r)
{
    char *lines[12];
    size_t n = peek_off_lines(c, lines, sizeof lines / sizeof *lines);
    int h = (int)n < r.h / 2 ? (int)n : r.h / 2;
    for (int i = 0; i < (int)n; i++) {
        if (i < h)
            draw_raw(w, r.y + r.h - h + i, r.x + 1, r.w - 1, lines[i],
                     theme_attr(c->theme, i ? TS_DIM : TS_WARNING), c->san);
        free(lines[i]);
    }
    return h;
}

/* Said before the first peek: the keys come from the keymap. */
static char *sqs_peek_note(const ui_ctx *c)
{
    char peek[32] = "refresh", more[32] = "peek-more";
    keymap_first(c->km, UA_REFRESH, peek, sizeof peek);
    keymap_first(c->km, UA_PEEK_MORE, more, sizeof more);
    return xasprintf("Peeking an SQS dead-letter queue RECEIVES its messages: with visibility "
                     "timeout 0 they stay visible, but each peek raises their receive count "
                     "(ApproximateReceiveCount) and sets the first-receive time. Press %s to "
                     "peek (10 messages a page, %s for more).", peek, more);
}

static const ui_action dlq_bar[] = {UA_OPEN, UA_RETRY, UA_RETRY_ALL, UA_GROUP_BY, UA_PEEK_MORE, UA_REFRESH, UA_BACK, UA_HELP, UA_QUIT, UA_NONE};

static dlq_st *st_of(ui_view *v)
{
    if (!v->st)
        v->st = xcalloc(1, sizeof(dlq_st));
    return v->st;
}

static bool dlq_visible(const rd_dlq_entry *d, const char *text)
{
    return ui_match(d->id, text) || ui_match(d->queue, text) || ui_match(d->execution_id, text) ||
           ui_match(d->reason, text) || ui_match(d->payload, text);
}

static void dlq_open(ui_view *v, ui_ctx *c, const char *arg)
{
    dlq_st *s = st_of(v);
    s->detail = false;
    s->sqs_asked = false;
    if (!dlq_is_sqs(c) || c->read_only)   /* read-only: the store's part only (sources.h) */
        ctx_fx(c, FX_PEEK, 0, NULL);
    (void)arg;
}

static char *payload_pretty(const char *raw, unsigned san)
{
    if (!raw)
        return xstrdup("(no payload)");
    cJSON *j = cJSON_Parse(raw);
    char *text = j ? cJSON_Print(j) : NULL;
    cJSON_Delete(j);
    if (text) {   /* cJSON indents with tabs: two spaces read better and stay aligned */
        size_t tabs = 0, n = 0;
        for (char *p = text; *p; p++)
            tabs += *p == '\t';
        char *spaced = xmalloc(strlen(text) + tabs + 1);
        for (char *p = text; *p; p++) {
            if (*p == '\t') {
                spaced[n++] = ' ';
                spaced[n++] = ' ';
            } else
                spaced[n++] = *p;
        }
        spaced[n] = 0;
        free(text);
        text = spaced;
    }
    char *clean = sanitize_str(text ? text : raw, san | SAN_KEEP_NL);
    free(text);
    return clean;
}

/* The store answered that it has no such record (redis: one entry, status "missing"). */
static bool chain_missing(const rd_model *m)
{
    return m->chain.n == 0 ||
           (m->chain.n == 1 && m->chain.items[0].status &&
            strcmp(m->chain.items[0].status, "missing") == 0);
}

/* What a retry of entry d targets: a Tasker task's failed step (the route needs both), else
 * the execution it names. */
static const char *dlq_target(const rd_dlq_entry *d)
{
    return d->step_id ? d->step_id : d->execution_id;
}

static void dlq_chain_lines(const rd_dlq_entry *d, ui_ctx *c, ui_lines *lc)
{
    const rd_model *m = c->model;
    const char *x = dlq_target(d);
    char *head;
    if (!x)
        head = xstrdup("\nlinked retry chain: the entry names no execution");
    else if (!m->chain_id || strcmp(m->chain_id, x) != 0)
        head = xasprintf("\nlinked retry chain of %s: loading...", x);
    else if (chain_missing(m))
        head = xasprintf("\nlinked record of %s: no record in the store%s", x,
                         d->sent_at > 0 ? " (a lost dispatch: dead-lettered, never recorded)" : "");
    else
        head = xasprintf("\nlinked retry chain of %s: %zu attempt(s)", x, m->chain.n);
    char *clean = sanitize_str(head, c->san | SAN_KEEP_NL);
    lc->attr = theme_attr(c->theme, TS_HEADER);
    text_wrap(clean, lc->cols, draw_lines_cb, lc);
    free(clean);
    free(head);
    if (!m->chain_id || !x || strcmp(m->chain_id, x) != 0 ||
        chain_missing(m))
        return;
    for (size_t i = 0; i < m->chain.n; i++) {
        const rd_execution *e = &m->chain.items[i];
        char t[32];
        ctx_time(c, e->created_at, t, sizeof t);
        char *l = xasprintf("  #%d %s %s %s %s %s", e->attempt, e->id ? e->id : "-", e->status ? e->status : "-",
                            t, e->reason ? e->reason : "-", e->error ? e->error : "");
        char *cl = sanitize_str(l, c->san);
        lc->attr = theme_attr(c->theme, (ui_slot)slot_for_status(e->status));
        text_wrap(cl, lc->cols, draw_lines_cb, lc);
        free(cl);
        free(l);
    }
}

static void dlq_detail_draw(ui_view *v, ui_ctx *c, WINDOW *w, ui_rect r, const rd_dlq_entry *d)
{
    dlq_st *s = st_of(v);
    if (!s->shown_id || strcmp(s->shown_id, d->id ? d->id : "") != 0) {
        free(s->shown_id);
        free(s->pretty);
        s->shown_id = xstrdup(d->id ? d->id : "");
        s->pretty = payload_pretty(d->payload, c->san);
    }
    char t1[32], t2[32];
    ctx_time(c, d->first_death_at, t1, sizeof t1);
    ctx_time(c, d->last_death_at, t2, sizeof t2);
    char *h = xasprintf("DLQ entry %s  queue %s  execution %s", d->id ? d->id : "-", d->queue ? d->queue : "-",
                        d->execution_id ? d->execution_id : "-");
    draw_raw(w, r.y, r.x, r.w, h, theme_attr(c->theme, TS_TITLE), c->san);
    free(h);
    char *h2, cnt[24];
    fmt_long(d->count, cnt, sizeof cnt);   /* unknown (a store's table has none): "-" */
    if (d->sent_at > 0) {            /* an SQS message: FIRST is its sent time */
        char t0[32];
        fmt_time(d->sent_at, t0, sizeof t0);
        h2 = xasprintf("taskId %s  attempt %d  taskType %s  sent %s  received %s times",
                       d->execution_id ? d->execution_id : "-", d->attempt, d->task_type ? d->task_type : "-",
                       t0, cnt);
    } else
        h2 = xasprintf("reason %s  count %s  from %s  first death %s  last %s%s", d->reason ? d->reason : "-",
                       cnt, d->origin_queue ? d->origin_queue : "-", t1, t2,
                       d->redelivered ? "  redelivered" : "");
    draw_raw(w, r.y + 1, r.x, r.w, h2, theme_attr(c->theme, TS_DIM), c->san);
    free(h2);
    ui_lines lc = {w, r.y + 2, r.x, r.w, s->scroll, r.h - 2, 0, 0};
    text_wrap(s->pretty, r.w, draw_lines_cb, &lc);
    dlq_chain_lines(d, c, &lc);
    s->detail_lines = lc.count;
    v->rows = r.h - 2;
}

/* What a peek does to the messages, per DLQ source this system has: a RabbitMQ peek
 * requeues, an SQS one raises the receive count; a store's table (Tasker's tasks_dlq,
 * OpenAgents, Alakai's records) is only read: NULL. */
static const char *dlq_peek_note(const ui_ctx *c)
{
    bool rabbit = c->cfg && c->cfg->broker.url && *c->cfg->broker.url, sqs = dlq_is_sqs(c);
    for (size_t i = 0; i < c->model->dlq_parts.n; i++) {
        const char *o = c->model->dlq_parts.items[i].owner;
        rabbit |= strcmp(o, "rabbitmq") == 0;
        sqs |= strcmp(o, "sqs") == 0;
    }
    if (rabbit && sqs)
        return "peeking requeues RabbitMQ messages and raises SQS receive counts";
    return sqs ? "peeking SQS receives messages (visibility timeout 0, receive count +1)"
         : rabbit ? "peeking a RabbitMQ queue requeues its messages (redelivered)" : NULL;
}

/* The RabbitMQ peek stopped at its cap on some queue: how many it reads, said on screen. */
static bool rabbit_capped(const rd_model *m)
{
    for (size_t i = 0; i < m->dlq_parts.n; i++) {
        const rd_dlq_part *p = &m->dlq_parts.items[i];
        if (strcmp(p->owner, "rabbitmq") != 0)
            continue;
        for (size_t a = 0; a < p->n; a++) {
            size_t same = 0;
            for (size_t b = 0; b < p->n; b++)
                same += p->items[a].queue && p->items[b].queue && strcmp(p->items[a].queue, p->items[b].queue) == 0;
            if (same >= RD_RABBIT_PEEK_MAX)
                return true;
        }
    }
    return false;
}

/* Where the rows are in the DLQ: the store's page (entries 51-100, oldest first) and the
 * RabbitMQ peek's cap when it was reached. */
static void dlq_where(const ui_ctx *c, char *out, size_t cap)
{
    const rd_model *m = c->model;
    size_t own = 0;
    for (size_t i = 0; i < m->dlq_parts.n; i++)
        if (strcmp(m->dlq_parts.items[i].owner, "postgresql") == 0)
            own = m->dlq_parts.items[i].n;
    int n = 0;
    if (m->dlq_first > 0 && own)
        n = snprintf(out, cap, "  entries %ld-%ld%s%s", m->dlq_first, m->dlq_first + (long)own - 1,
                     m->dlq_oldest ? " oldest first" : "", m->dlq_more ? " (pgdn: more)" : "");
    if (n >= 0 && (size_t)n < cap && rabbit_capped(m))
        snprintf(out + n, cap - (size_t)n, "  RabbitMQ peek capped at %d a queue, %d queues",
                 RD_RABBIT_PEEK_MAX, RD_RABBIT_PEEK_QUEUES);
}

static void dlq_list_title(ui_view *v, ui_ctx *c, WINDOW *w, ui_rect r)
{
    const rd_model *m = c->model;
    char tot[32];
    fmt_long(m->dlq_total, tot, sizeof tot);
    char t[256];
    bool sqs = dlq_is_sqs(c), asked = !sqs || st_of(v)->sqs_asked;
    dlq_st *s = st_of(v);
    char shown[48] = "", where[96] = "";
    if (s->n_rows != m->dlq.n)
        snprintf(shown, sizeof shown, "%zu shown of ", s->n_rows);
    dlq_where(c, where, sizeof where);
    int tn = snprintf(t, sizeof t, "DLQ  %s%zu peeked of %s%s%s", shown, m->dlq.n, tot, where,
                      dlq_peek_off(c) && !m->dlq_loaded ? "  (not peeked: read-only)"
                      : !asked ? "  (not peeked yet)" : m->dlq_loaded ? "" : "  (peeking...)");
    draw_clean(w, r.y, r.x, r.w, t, theme_attr(c->theme, TS_TITLE));
    int used = filter_title(c, w, r, tn, &c->filter[VIEW_DLQ]) + 2;
    char part[220];
    const char *note = dlq_peek_off(c) ? "peeking is off in read-only" : dlq_peek_note(c);
    if (!note && model_partial_text(m, part, sizeof part))
        note = part;                 /* the store's DLQ so far: a first sweep runs */
    if (note && used < r.w)
        draw_clean(w, r.y, r.x + used, r.w - used, note, theme_attr(c->theme, TS_WARNING));
}

/* The DLQ horizon line at the foot of the list (core/dlqhorizon.h): the soonest DLQ's, "attune.dlx.queue:
 * oldest dead letter expires in 12m (message-ttl 1h from x-death)", else the first DLQ whose
 * horizon is unknown ("the broker does not show the queue's arguments: unknown"); "" when
 * nothing deletes the system's dead letters (kept until consumed or resolved: the snapshot
 * says so per DLQ) or it has no DLQ.
 * A warning below dlq_horizon_warn. */
static bool dlq_horizon_line(ui_ctx *c, char *out, size_t cap)
{
    rd_horizon *h;
    size_t n = dlq_horizons(c->model, c->now, &h);
    const rd_horizon *s = dlq_horizon_soonest(h, n);
    const rd_horizon *shown = s;     /* else the first with something unknown to say */
    for (size_t i = 0; !shown && i < n; i++)
        if (!h[i].kept)
            shown = &h[i];
    bool warn = false;
    out[0] = '\0';
    if (shown) {
        char what[HORIZON_BASIS_LEN + 64], more[80] = "";
        horizon_text(shown, what, sizeof what);
        if (shown->in_s >= 0) {       /* repainted as it runs down */
            char eta[32];
            ctx_eta(c, c->now + shown->in_s, eta, sizeof eta);
        }
        if (n > 1)
            snprintf(more, sizeof more, "  (%zu DLQs: snapshot --view dlq lists each)", n);
        snprintf(out, cap, "%s: %s%s", shown->queue ? shown->queue : "-", what, more);
        double f = horizon_figure(shown, NULL);
        warn = f >= 0 && c->cfg && c->cfg->fleet.dlq_horizon_warn > 0 &&
               f < c->cfg->fleet.dlq_horizon_warn;
    }
    free(h);
    return warn;
}

static void dlq_row(ui_ctx *c, const ui_table_row *row)
{
    const dlq_st *s = row->st;
    const rd_dlq_entry *d = &c->model->dlq.items[s->rows[row->idx]];
    int base = row_base(c, row);
    char cnt[32], first[32], last[32];
    fmt_long(d->count, cnt, sizeof cnt);
    ctx_age(c, d->first_death_at, first, sizeof first);
    ctx_age(c, d->last_death_at, last, sizeof last);
    const char *text[] = {d->id ? d->id : "-", d->queue ? d->queue : "-",
                          d->execution_id ? d->execution_id : "-", d->reason ? d->reason : "-", cnt, first, last,
                          d->payload ? d->payload : ""};
    row_cells(c, row, text, base);
}

static const char *dlq_row_id(const ui_ctx *c, const void *st, int row)
{
    const dlq_st *s = st;
    return c->model->dlq.items[s->rows[row]].id;
}

/* The rows the view's own filter (ctx.filter[VIEW_DLQ]) lets through, in peek order. */
static void dlq_rows(ui_view *v, ui_ctx *c, dlq_st *s)
{
    const rd_model *m = c->model;
    xgrow(&s->rows, &s->cap_rows, m->dlq.n + 1, sizeof *s->rows);
    s->n_rows = 0;
    for (size_t i = 0; i < m->dlq.n; i++)
        if (dlq_visible(&m->dlq.items[i], c->filter[VIEW_DLQ].text))
            s->rows[s->n_rows++] = i;
    v->list.n = (int)s->n_rows;
}

/* The id columns as wide as the entries on screen need (up to 24: a message id cut in
 * the middle keeps its tail), the time columns as wide as clock times need. */
static void dlq_widths(const ui_view *v, const ui_ctx *c, ui_col *cols)
{
    const dlq_st *s = v->st;
    int id = 0, ex = 0;
    for (int i = v->list.top; i < v->list.top + v->rows && i < (int)s->n_rows; i++) {
        const rd_dlq_entry *d = &c->model->dlq.items[s->rows[i]];
        int n = text_cols(d->id ? d->id : "-", c->san), k = text_cols(d->execution_id ? d->execution_id : "-", c->san);
        id = n > id ? n : id;
        ex = k > ex ? k : ex;
    }
    if (s->n_rows) {
        col_content(&cols[0], id, 12, 24);
        col_content(&cols[2], ex, 12, 24);
    }
    col_clock(c, &cols[5]);
    col_clock(c, &cols[6]);
}

/* What the list says when it shows no entry (the SQS note before a peek is wrapped apart). */
static const char *dlq_empty(const ui_ctx *c)
{
    const rd_model *m = c->model;
    if (dlq_peek_off(c) && !m->dlq.n)
        return m->dlq_loaded ? "no entries from the store" : NULL;
    if (m->dlq.n)
        return "no DLQ entry matches the filter";
    return m->dlq_loaded ? "the DLQ is empty" : "waiting for the peek...";
}

/* The rows grouped by reason or queue: one line a group, largest first (Enter: its entries,
 * searched for its key: the store searches all of its DLQ). */
static void dlq_groups_draw(ui_view *v, ui_ctx *c, WINDOW *w, ui_rect r, dlq_st *s)
{
    const rd_model *m = c->model;
    /* the store's DLQ counted by the store (every entry, not the page loaded); the other
     * sources' entries (a broker's peek) grouped here */
    const rd_dlq_sgroups *sg = m->dlq_first > 0 ? m->dlq_sgroups : NULL;
    const rd_dlq_entry **rows = xcalloc(s->n_rows + 1, sizeof *rows);
    size_t n_local = 0, others = 0;
    for (size_t i = 0; i < s->n_rows; i++) {
        const rd_dlq_entry *d = &m->dlq.items[s->rows[i]];
        if (sg && d->source && strcmp(d->source, "postgresql") == 0)
            continue;
        rows[n_local++] = d;
        others += sg != NULL;
    }
    free(s->groups);
    s->n_groups = dlq_group_with(sg, rows, n_local, s->by, &s->groups);
    free(rows);
    char *t;
    if (sg) {
        long in_store = 0;
        for (size_t i = 0; i < sg->n; i++)
            in_store += sg->items[i].by == s->by ? sg->items[i].count : 0;
        char more[64] = "";
        if (others)
            snprintf(more, sizeof more, " and %zu peeked from the broker", others);
        t = xasprintf("DLQ by %s  %zu group%s of the store's %ld%s entries%s%s (enter: the entries of one)",
                      dlq_by_name(s->by), s->n_groups, s->n_groups == 1 ? "" : "s", in_store, sg->capped ? "+" : "",
                      c->filter[VIEW_DLQ].text[0] ? " matching the search" : "", more);
    } else
        t = xasprintf("DLQ by %s  %zu group%s of the %zu entries loaded (enter: the entries of one%s)",
                      dlq_by_name(s->by), s->n_groups, s->n_groups == 1 ? "" : "s", s->n_rows,
                      m->dlq_first > 0 ? ", searched in the whole store" : "");
    draw_clean(w, r.y, r.x, r.w, t, theme_attr(c->theme, TS_TITLE));
    free(t);
    ui_col cols[] = {
        {.title = s->by == DLQ_BY_REASON ? "REASON" : "QUEUE", .min = 12, .want = 40, .weight = 2},
        {.title = "N", .min = 5, .want = 7, .right = true},
        {.title = "FIRST", .min = 5, .want = 6, .right = true},
        {.title = "LAST", .min = 5, .want = 6, .drop = 1, .right = true},
    };
    col_clock(c, &cols[2]);
    col_clock(c, &cols[3]);
    cols_layout(cols, 4, r.w);
    cols_header(w, r.y + 1, r.x, cols, 4, theme_attr(c->theme, TS_HEADER));
    v->rows = r.h - 2 < 1 ? 1 : r.h - 2;
    v->list_y = r.y + 2;
    s->glist.n = (int)s->n_groups;
    list_fit(&s->glist, v->rows);
    for (int i = 0; i < v->rows && s->glist.top + i < s->glist.n; i++) {
        const rd_dlq_group *g = &s->groups[s->glist.top + i];
        int base = s->glist.top + i == s->glist.cur ? theme_attr(c->theme, TS_CURSOR) : 0;
        char n[24], first[32], last[32];
        snprintf(n, sizeof n, "%zu", g->count);
        ctx_age(c, g->first, first, sizeof first);
        ctx_age(c, g->last, last, sizeof last);
        draw_fill(w, r.y + 2 + i, r.x, r.w, base);
        cols_cell(w, r.y + 2 + i, r.x, &cols[0], g->key, base, c->san);
        cols_cell(w, r.y + 2 + i, r.x, &cols[1], n, base, c->san);
        cols_cell(w, r.y + 2 + i, r.x, &cols[2], first, base, c->san);
        cols_cell(w, r.y + 2 + i, r.x, &cols[3], last, base, c->san);
    }
}

/* r or V on a group, R on the search: the whole set is every page of the store's DLQ,
 * selected by the store and acted on as a guarded, resumable batch (setretry.h). A
 * broker's dead letters are not the store's: one entry at a time. */
static unsigned dlq_set_act(ui_ctx *c, ui_action a, const char *what)
{
    if (c->model->dlq_first <= 0) {
        ctx_msg(c, true, "a broker's dead letters are acted on one entry at a time (enter: the entries)");
        return UI_CH_REDRAW;
    }
    ctx_fx(c, FX_DLQ_SET, a == UA_RESOLVE ? RD_ACT_RESOLVE : RD_ACT_RETRY, what);
    return UI_CH_REDRAW;
}

static unsigned dlq_group_act(ui_ctx *c, ui_action a, const dlq_st *s)
{
    char what[200];
    if (snprintf(what, sizeof what, "%s:%s", dlq_by_name(s->by), s->groups[s->glist.cur].key) >= (int)sizeof what) {
        ctx_msg(c, true, "this group's key is too long to select by: enter, then its entries one at a time");
        return UI_CH_REDRAW;
    }
    return dlq_set_act(c, a, what);
}

/* Grouped: the cursor moves among the groups; Enter shows one group's entries (the view
 * searched for its key), back or the group-by key again leaves the grouping. */
static unsigned dlq_groups_key(ui_view *v, ui_ctx *c, ui_action a, dlq_st *s)
{
    if (a == UA_GROUP_BY || a == UA_BACK) {
        s->by = a == UA_BACK ? DLQ_BY_NONE : (rd_dlq_by)((s->by + 1) % DLQ_BY__COUNT);
        s->glist.cur = s->glist.top = 0;
        return UI_CH_REDRAW;
    }
    if (a == UA_OPEN && s->glist.cur < (int)s->n_groups) {
        snprintf(c->filter[VIEW_DLQ].text, sizeof c->filter[VIEW_DLQ].text, "%s", s->groups[s->glist.cur].key);
        s->by = DLQ_BY_NONE;
        list_unpin(&v->list);
        ctx_fx(c, FX_FILTER, VIEW_DLQ, NULL);
        return UI_CH_REDRAW;
    }
    if ((a == UA_RETRY || a == UA_RESOLVE) && s->glist.cur < (int)s->n_groups)
        return dlq_group_act(c, a, s);
    s->glist.n = (int)s->n_groups;
    return list_nav(&s->glist, a, v->rows);
}

static void dlq_draw(ui_view *v, ui_ctx *c, WINDOW *w, ui_rect r)
{
    const rd_model *m = c->model;
    dlq_st *s = st_of(v);
    dlq_rows(v, c, s);
    if (s->by != DLQ_BY_NONE && !s->detail) {
        dlq_groups_draw(v, c, w, r, s);
        return;
    }
    list_follow(&v->list, c, "DLQ entry", dlq_row_id, s);   /* a re-peek reorders */
    list_fit(&v->list, v->rows);
    if (s->detail && s->n_rows) {
        dlq_detail_draw(v, c, w, r, &m->dlq.items[s->rows[v->list.cur]]);
        return;
    }
    s->detail = false;
    dlq_list_title(v, c, w, r);
    ui_col cols[] = {
        {.title = "ID", .min = 8, .want = 12, .weight = 1, .mid = true},
        {.title = "QUEUE", .min = 10, .want = 18, .weight = 1, .drop = 3},
        {.title = "EXECUTION", .min = 9, .want = 12, .weight = 1, .mid = true},
        {.title = "REASON", .min = 8, .want = 10},
        {.title = "N", .min = 3, .want = 4, .right = true},
        {.title = "FIRST", .min = 5, .want = 6, .right = true},
        {.title = "LAST", .min = 5, .want = 6, .drop = 2, .right = true},
        {.title = "PAYLOAD", .min = 12, .want = 20, .weight = 4},
    };
    char hz[HORIZON_BASIS_LEN + 256];
    bool hz_warn = dlq_horizon_line(c, hz, sizeof hz);
    int bottom = hz[0] && r.h > 4 ? 1 : 0;   /* the horizon line, the view's last line */
    if (bottom)
        draw_raw(w, r.y + r.h - 1, r.x, r.w, hz, theme_attr(c->theme, hz_warn ? TS_WARNING : TS_DIM), c->san);
    int panel = dlq_peek_off(c) ? peek_off_draw(c, w, (ui_rect){r.y + 2, r.x, r.h - 2 - bottom, r.w}) : 0;
    bool sqs_note = !dlq_peek_off(c) && dlq_is_sqs(c) && !s->sqs_asked && !m->dlq.n;
    view_table(v, c, w, r, &(ui_table){
        .cols = cols, .n_cols = (int)(sizeof cols / sizeof *cols), .y = r.y + 1, .rows = r.h - 2 - bottom - panel,
        .n = (int)s->n_rows, .st = s, .fit = dlq_widths, .empty = sqs_note ? NULL : dlq_empty(c),
        .row = dlq_row});
    if (sqs_note) {
        ui_lines lc = {w, r.y + 2, r.x + 2, r.w - 2, 0, r.h - 2 - bottom, 0, theme_attr(c->theme, TS_WARNING)};
        char *note = sqs_peek_note(c);
        word_breaks(note, r.w - 2);
        text_wrap(note, r.w - 2, draw_lines_cb, &lc);
        free(note);
    }
}

static unsigned dlq_detail_key(ui_view *v, ui_ctx *c, ui_action a)
{
    dlq_st *s = st_of(v);
    int max = s->detail_lines - v->rows;
    switch (a) {
    case UA_UP: s->scroll--; break;
    case UA_DOWN: s->scroll++; break;
    case UA_PAGE_UP: s->scroll -= v->rows; break;
    case UA_PAGE_DOWN: s->scroll += v->rows; break;
    case UA_TOP: s->scroll = 0; break;
    case UA_BOTTOM: s->scroll = max; break;
    case UA_BACK: case UA_QUIT: s->detail = false; return UI_CH_REDRAW;
    default: return UI_CH_UNHANDLED;
    }
    if (s->scroll > max)
        s->scroll = max;
    if (s->scroll < 0)
        s->scroll = 0;
    (void)c;
    return UI_CH_REDRAW;
}

/* The target's state as the store has it: on the executions page, or the newest attempt of
 * its chain once read (a Tasker chain's rows are the step's transitions, each with the
 * step's verdict). NULL when not read yet. */
static const rd_execution *dlq_target_state(const ui_ctx *c, const char *id)
{
    const rd_model *m = c->model;
    for (size_t i = 0; i < m->execs.n; i++)
        if (m->execs.items[i].id && strcmp(m->execs.items[i].id, id) == 0)
            return &m->execs.items[i];
    if (m->chain_id && strcmp(m->chain_id, id) == 0 && !chain_missing(m))
        return &m->chain.items[m->chain.n - 1];
    return NULL;
}

/* The guarded retry (guard.h) of the entry's execution, named by its action: its state is
 * read first (the chain, as Enter does), then r opens the confirmation. */
static unsigned dlq_retry(ui_ctx *c, const rd_dlq_entry *d)
{
    const char *id = d ? dlq_target(d) : NULL;
    if (!id) {
        ctx_msg(c, true, "this entry names no execution to retry");
        return UI_CH_REDRAW;
    }
    const rd_execution *e = dlq_target_state(c, id);
    const rd_model *m = c->model;
    if (!e && m->chain_id && strcmp(m->chain_id, id) == 0) {
        ctx_msg(c, true, "%s: no record in the store: nothing to retry", id);
        return UI_CH_REDRAW;
    }
    if (!e) {
        char kr[32] = "r";
        keymap_first(c->km, UA_RETRY, kr, sizeof kr);
        ctx_fx(c, FX_CHAIN, 0, id);
        ctx_msg(c, false, "reading %s from the store for its retry eligibility: %s again to retry", id, kr);
        return UI_CH_REDRAW;
    }
    sel_clear(&c->sel);
    sel_add_exec_as(&c->sel, c, e, id);
    if (d->step_id && d->execution_id) {   /* the step's task, as the route needs it */
        free(c->sel.parents[0]);
        c->sel.parents[0] = xstrdup(d->execution_id);
    }
    sel_note(&c->sel, "from the DLQ: entry %s in %s", d->id ? d->id : "-", d->queue ? d->queue : "-");
    ctx_fx(c, FX_ACT, RD_ACT_RETRY, NULL);
    return UI_CH_REDRAW;
}

/* true when this console resolved entry id of the open system already (app_dlq_resolved). */
static bool dlq_was_resolved(const ui_ctx *c, const char *id)
{
    const char *sys = c->cfg && c->cfg->name ? c->cfg->name : "";
    size_t n = strlen(sys);
    for (size_t i = 0; i < c->n_dlq_resolved; i++) {
        const char *k = c->dlq_resolved[i];
        if (strncmp(k, sys, n) == 0 && k[n] == '\t' && strcmp(k + n + 1, id) == 0)
            return true;
    }
    return false;
}

/* The entry itself resolved through the core ([action resolve]: Tasker's DLQ update); the
 * dialog says when the profile has no such action. A broker's message is not the store's.
 * One this console resolved already is refused here: a store read before the resolve may
 * still list it, and a second update would be sent and journaled again. */
static unsigned dlq_resolve(ui_ctx *c, const rd_dlq_entry *d)
{
    if (!d || !d->id || !d->source || strcmp(d->source, "postgresql") != 0) {
        ctx_msg(c, true, "only a store's DLQ entry resolves (a broker's message is not the store's)");
        return UI_CH_REDRAW;
    }
    if (dlq_was_resolved(c, d->id)) {
        ctx_msg(c, true, "DLQ entry %.80s was resolved already from this console (see the journal): not sent again",
                d->id);
        return UI_CH_REDRAW;
    }
    sel_clear(&c->sel);
    sel_add(&c->sel, d->id, NULL, NULL, NULL);
    sel_note(&c->sel, "DLQ entry of %s, %s", d->execution_id ? d->execution_id : "-", d->reason ? d->reason : "-");
    ctx_fx(c, FX_ACT, RD_ACT_RESOLVE, NULL);
    return UI_CH_REDRAW;
}

/* The cursor goes to row `row` of the page asked for (1 << 30: its last), following none. */
static unsigned dlq_turn(ui_view *v, ui_ctx *c, fx_kind k, int arg, int row)
{
    list_unpin(&v->list);
    v->list.cur = row;
    v->list.top = 0;
    ctx_fx(c, k, arg, NULL);
    return UI_CH_REDRAW;
}

/* A DLQ of thousands a screen at a time: past the last row loaded, the next page (the
 * store's) or a bigger peek (RabbitMQ, to its cap); before the first, the store's page
 * before; G the oldest (the store reads it oldest first), g back to the newest. */
static unsigned dlq_page_key(ui_view *v, ui_ctx *c, ui_action a)
{
    const rd_model *m = c->model;
    bool paged = m->dlq_first > 0, at_end = v->list.cur >= v->list.n - 1, at_top = v->list.cur <= 0;
    if ((a == UA_PAGE_DOWN || a == UA_DOWN) && at_end && v->list.n) {
        if (paged && m->dlq_more)
            return dlq_turn(v, c, FX_DLQ_PAGE, 1, 0);
        if (!paged && rabbit_capped(m)) {
            ctx_msg(c, false, "the RabbitMQ peek stops at %d messages a queue (%d queues): each get requeues them",
                    RD_RABBIT_PEEK_MAX, RD_RABBIT_PEEK_QUEUES);
            return UI_CH_REDRAW;
        }
        if (!paged && a == UA_PAGE_DOWN) {
            ctx_fx(c, FX_PEEK, 1, NULL);   /* a bigger peek, as peek-more */
            return UI_CH_REDRAW;
        }
    }
    if ((a == UA_PAGE_UP || a == UA_UP) && at_top && paged && m->dlq_first > 1)
        return dlq_turn(v, c, FX_DLQ_PAGE, -1, 1 << 30);
    if (a == UA_BOTTOM && paged && !m->dlq_oldest)
        return dlq_turn(v, c, FX_DLQ_ORDER, 1, 0);
    if (a == UA_TOP && paged && (m->dlq_oldest || m->dlq_first > 1))
        return dlq_turn(v, c, FX_DLQ_ORDER, 0, 0);
    return UI_CH_UNHANDLED;
}

static unsigned dlq_key(ui_view *v, ui_ctx *c, ui_action a)
{
    const rd_model *m = c->model;
    dlq_st *s = st_of(v);
    dlq_rows(v, c, s);
    if (a == UA_RETRY_ALL && !s->detail)   /* everything the search matches, every page */
        return dlq_set_act(c, a, "filter");
    if (s->by != DLQ_BY_NONE && !s->detail && a != UA_REFRESH && a != UA_PEEK_MORE)
        return dlq_groups_key(v, c, a, s);
    if (a == UA_GROUP_BY && !s->detail) {
        s->by = DLQ_BY_REASON;
        return UI_CH_REDRAW;
    }
    bool kept = list_follow(&v->list, c, "DLQ entry", dlq_row_id, s);
    const rd_dlq_entry *d = s->n_rows ? &m->dlq.items[s->rows[v->list.cur < v->list.n ? v->list.cur : 0]] : NULL;
    if (!kept && (a == UA_RETRY || a == UA_RESOLVE || a == UA_OPEN)) {
        char was[sizeof c->msg];   /* never act on the entry that slid under the cursor */
        memcpy(was, c->msg, sizeof was);
        ctx_msg(c, true, "%.200s: nothing done", was);
        return UI_CH_REDRAW;
    }
    if (a == UA_RETRY)
        return dlq_retry(c, d);
    if (a == UA_RESOLVE)
        return dlq_resolve(c, d);
    if (a == UA_COPY) {   /* the entry's message id (its execution's id is in the detail) */
        sel_clear(&c->sel);
        if (d)
            sel_add(&c->sel, d->id, NULL, NULL, NULL);
        ctx_fx(c, FX_COPY, 0, NULL);
        return UI_CH_REDRAW;
    }
    if (a == UA_REFRESH || a == UA_PEEK_MORE) {
        /* an SQS DLQ's first request is the first page, whichever key asked */
        ctx_fx(c, FX_PEEK, a == UA_PEEK_MORE && (s->sqs_asked || !dlq_is_sqs(c)), NULL);
        s->sqs_asked = true;
        return UI_CH_REDRAW;
    }
    if (s->detail) {
        unsigned ch = dlq_detail_key(v, c, a);
        if (!(ch & UI_CH_UNHANDLED))
            return ch;
    }
    if (!s->detail) {
        unsigned pg = dlq_page_key(v, c, a);
        if (!(pg & UI_CH_UNHANDLED))
            return pg;
    }
    unsigned ch = list_nav(&v->list, a, v->rows);
    if (!(ch & UI_CH_UNHANDLED)) {
        list_pin(&v->list, c, dlq_row_id, s);
        return ch;
    }
    if (a == UA_OPEN && d) {
        s->detail = true;
        s->scroll = 0;
        if (dlq_target(d))
            ctx_fx(c, FX_CHAIN, 0, dlq_target(d));
        return UI_CH_REDRAW;
    }
    return UI_CH_UNHANDLED;
}

static void dlq_select(ui_view *v, ui_ctx *c, int row)
{
    if (!st_of(v)->detail)      /* the detail's lines are not the list's rows */
        view_select(v, c, row);
}

static void dlq_free(ui_view *v)
{
    dlq_st *s = v->st;
    if (s) {
        free(s->shown_id);
        free(s->pretty);
        free(s->rows);
        free(s->groups);
    }
    free(s);
    v->st = NULL;
}

const ui_view_ops view_dlq_ops = {
    .name = "dlq", .title = "DLQ", .bar = dlq_bar,
    .panels = PANELS_NONE, .snapshot = "dlq",
    .open = dlq_open, .draw = dlq_draw, .key = dlq_key, .search = true,
    .clickable = true, .row_id = dlq_row_id, .select = dlq_select, .free = dlq_free,
};
