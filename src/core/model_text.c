/* The snapshot's text output: one aligned table per array, every cell sanitized. */
#include "model_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groupid.h"
#include "groups.h"
#include "storegroups.h"
#include "health.h"
#include "model_fields.h"
#include "model_tables.h"
#include "detail.h"
#include "dlqhorizon.h"
#include "sanitize.h"
#include "textutil.h"
#include "views.h"
#include "xalloc.h"

#define CELL_MAX 40     /* display columns per cell */
#define WIDE_MAX 72     /* for error / payload columns */
#define MAX_COLS 12


typedef struct table {
    const char *title;
    size_t ncols, ncells, cap;
    const char *heads[MAX_COLS];
    char **cells;        /* nrows * ncols, sanitized and fitted */
} table;

static void table_begin(table *t, const char *title, const char *const *heads, size_t n)
{
    memset(t, 0, sizeof *t);
    t->title = title;
    t->ncols = n;
    for (size_t i = 0; i < n; i++)
        t->heads[i] = heads[i];
}

/* Appends one raw (unsanitized) cell to the current row. */
static void table_cell(table *t, const char *raw, int maxw)
{
    char *clean = sanitize_str(raw ? raw : "-", 0);
    size_t cap = (size_t)maxw * 4 + 8;
    char *fit = xmalloc(cap);
    sanitize_fit(clean, maxw, fit, cap, 0);
    free(clean);
    xgrow(&t->cells, &t->cap, t->ncells + 1, sizeof *t->cells);
    t->cells[t->ncells++] = fit;
}

static void table_num(table *t, long v)
{
    char b[32];
    snprintf(b, sizeof b, "%ld", v);
    table_cell(t, v >= 0 ? b : "-", CELL_MAX);
}

/* Age of an epoch time relative to now ("5m"), "-" when unknown. */
static void table_age(table *t, double at, double now)
{
    char b[24];
    if (at <= 0) {
        table_cell(t, "-", CELL_MAX);
        return;
    }
    format_age(now - at, b, sizeof b);
    table_cell(t, b, CELL_MAX);
}

static void pad(text_buf *b, int n)
{
    for (; n > 0; n--)
        text_buf_add(b, " ", 1);
}

static void table_end(table *t, text_buf *out)
{
    int w[MAX_COLS];
    size_t nrows = t->ncells / t->ncols;
    for (size_t c = 0; c < t->ncols; c++) {
        w[c] = sanitize_width(t->heads[c]);
        for (size_t r = 0; r < nrows; r++) {
            int cw = sanitize_width(t->cells[r * t->ncols + c]);
            w[c] = cw > w[c] ? cw : w[c];
        }
    }
    text_buf_str(out, t->title);
    text_buf_str(out, "\n");
    for (size_t r = 0; r <= nrows; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            const char *s = r == 0 ? t->heads[c] : t->cells[(r - 1) * t->ncols + c];
            text_buf_str(out, s);
            if (c + 1 < t->ncols)
                pad(out, w[c] - sanitize_width(s) + 2);
        }
        text_buf_rtrim(out);
        text_buf_str(out, "\n");
    }
    if (!nrows)
        text_buf_str(out, "(none)\n");
    text_buf_str(out, "\n");
    for (size_t i = 0; i < t->ncells; i++)
        free(t->cells[i]);
    free(t->cells);
}

/* "via HOST standby lag 0s; failed over from HOST (why)" (reading from replicas). */
static void replica_text(const rd_source_status *s, char *out, size_t cap)
{
    char lag[32] = "";
    if (s->lag_known)
        snprintf(lag, sizeof lag, " lag %.0fs", s->lag_s);
    int n = s->host[0] || s->role[0]
                ? snprintf(out, cap, "via %s%s%s%s", s->host[0] ? s->host : "?",
                           s->role[0] ? " " : "", s->role, lag)
                : 0;
    if (s->failover[0])
        snprintf(out + n, cap - (size_t)n, "%sfailed over %s", n ? "; " : "", s->failover);
}

/* Each encrypted source's TLS state under the table, from what the source saw on its
 * connection: an unverified one is a warning (the console's top bar says TLS NOT VERIFIED). */
static void text_tls(const rd_model *m, text_buf *out)
{
    bool any = false;
    for (size_t i = 0; i < m->sources.n; i++) {
        const rd_source_status *s = &m->sources.items[i];
        if (!(s->facts_known & RD_FACT_TLS) || !(s->facts & RD_FACT_TLS))
            continue;
        char name[sizeof s->name + 1];
        snprintf(name, sizeof name, "%.*s", (int)sizeof s->name, s->name);
        char *clean = sanitize_str(name, 0);
        text_buf_str(out, s->facts & RD_FACT_TLS_VERIFIED ? "" : "WARNING: ");
        text_buf_str(out, clean);
        text_buf_str(out, s->facts & RD_FACT_TLS_VERIFIED
                        ? ": TLS verified (certificate and host name)\n"
                        : ": TLS NOT VERIFIED (the server's certificate and host name are not "
                          "checked)\n");
        free(clean);
        any = true;
    }
    if (any)
        text_buf_str(out, "\n");
}

static void text_sources(const rd_model *m, double now, text_buf *out)
{
    static const char *const h[] = { "SOURCE", "STATE", "LAST OK", "SINCE", "ERROR" };
    table t;
    table_begin(&t, "SOURCES", h, 5);
    for (size_t i = 0; i < m->sources.n; i++) {
        const rd_source_status *s = &m->sources.items[i];
        char name[sizeof s->name + 1], err[sizeof s->error + 1];
        snprintf(name, sizeof name, "%.*s", (int)sizeof s->name, s->name);
        snprintf(err, sizeof err, "%.*s", (int)sizeof s->error, s->error);
        table_cell(&t, name, CELL_MAX);
        table_cell(&t, src_state_name(s->state), CELL_MAX);
        table_age(&t, s->last_ok, now);
        table_age(&t, s->since, now);
        char notes[RD_SRC_NOTES * RD_SRC_NOTE_LEN + 600] = "";
        replica_text(s, notes, sizeof notes);
        if (s->progress.active) {
            size_t l = strlen(notes);
            snprintf(notes + l, sizeof notes - l, "%s", l ? "; " : "");
            l = strlen(notes);
            source_progress_text(s, notes + l, sizeof notes - l);
        }
        for (size_t k = 0; k < s->n_notes && k < RD_SRC_NOTES; k++)
            snprintf(notes + strlen(notes), sizeof notes - strlen(notes), "%snote: %.*s",
                     notes[0] ? "; " : "", (int)RD_SRC_NOTE_LEN, s->notes[k]);
        if (s->push[0])
            snprintf(notes + strlen(notes), sizeof notes - strlen(notes), "%spush: %.*s",
                     notes[0] ? "; " : "", (int)sizeof s->push, s->push);
        table_cell(&t, err[0] ? err : notes[0] ? notes : "-", WIDE_MAX);
    }
    table_end(&t, out);
    text_tls(m, out);
}

/* "PARTIAL: reading tasks: ... (counts, DLQ and groups so far)", a line per source reading. */
static void text_partial(const rd_model *m, text_buf *out)
{
    for (size_t i = 0; i < m->sources.n; i++) {
        char t[200];
        source_progress_text(&m->sources.items[i], t, sizeof t);
        if (!t[0])
            continue;
        text_buf_str(out, "PARTIAL: ");
        text_buf_str(out, t);
        text_buf_str(out, " (counts, DLQ and groups so far)\n\n");
    }
}

static void text_counts(const rd_model *m, double now, text_buf *out)
{
    (void)now;
    text_partial(m, out);
    static const char *const h[] = { "STATUS", "COUNT" };
    table t;
    table_begin(&t, "COUNTS", h, 2);
    for (size_t i = 0; i < m->counts.n; i++) {
        const rd_count *c = &m->counts.items[i];
        char st[sizeof c->status + 1], n[40];
        snprintf(st, sizeof st, "%.*s", (int)sizeof c->status, c->status);
        if (c->count < 0)
            snprintf(n, sizeof n, "-");
        else
            snprintf(n, sizeof n, "%s%ld%s", c->estimated ? "\xE2\x89\x88" : "", c->count,
                     c->capped ? "+" : "");
        table_cell(&t, st, CELL_MAX);
        table_cell(&t, n, CELL_MAX);
    }
    table_end(&t, out);
    char line[400], rate[32] = "-", dlq[200] = "-", orph[24] = "-", parts[160];
    if (m->failing_rate >= 0)
        snprintf(rate, sizeof rate, "%.1f/min", m->failing_rate);
    model_dlq_breakdown(m, parts, sizeof parts);
    if (m->dlq_total >= 0)
        snprintf(dlq, sizeof dlq, "%ld%s", m->dlq_total, parts);
    if (m->orphan_suspects >= 0)
        snprintf(orph, sizeof orph, "%ld", m->orphan_suspects);
    snprintf(line, sizeof line, "DLQ size: %s  orphan suspects: %s  failing now: %s\n%s", dlq,
             orph, rate, m->queues.n ? "" : "\n");
    text_buf_str(out, line);
    rd_backlog b;
    model_backlog(m, &b);
    if (b.queues || b.dlqs) {
        snprintf(line, sizeof line, "SQS backlog: %ld visible, %ld in flight, %ld delayed  "
                 "DLQ: %ld%s\n", b.visible, b.in_flight, b.delayed, b.dead,
                 b.not_draining ? "  NOT DRAINING" : "");
        text_buf_str(out, line);
        if (b.stuck) {               /* the name is outside data: sanitized like the rest */
            char *name = sanitize_str(b.stuck, 0);
            text_buf_str(out, "not draining: ");
            text_buf_str(out, name);
            text_buf_str(out, "\n");
            free(name);
        }
    }
    if (m->queues.n)
        text_buf_str(out, "\n");
}

/* ---- the record tables' columns ---- */

/* A column of a record's table: its heading and the field it shows (model_tables.c), or a
 * cell function for what several fields make together; `only` its tables (TC_*, 0 all). */
typedef struct tcol {
    const char *head;
    const char *key;
    int width;
    void (*cell)(table *t, const void *rec, double now);
    unsigned only;
} tcol;

enum { TC_LIST = 1u << 0, TC_CHAIN = 1u << 1 };

static void rate_cell(table *t, double r)
{
    char b[32];
    if (r >= 0)
        snprintf(b, sizeof b, "%.1f", r);
    table_cell(t, r >= 0 ? b : "-", CELL_MAX);
}

/* One cell of a field, formatted by its kind. */
static void field_cell(table *t, const rd_record *r, const tcol *c, const void *rec,
                       double now)
{
    const rd_field *f = record_field(r, c->key);
    if (!f)
        abort();                    /* a column names a field of its table */
    switch (f->kind) {
    case FK_BUF: {
        char *s = xasprintf("%.*s", (int)f->size, field_str(f, rec));
        table_cell(t, s[0] ? s : "-", c->width);
        free(s);
        return;
    }
    case FK_INT:
    case FK_LONG: table_num(t, field_long(f, rec)); return;
    case FK_RATE: rate_cell(t, field_num(f, rec)); return;
    case FK_TIME: table_age(t, field_num(f, rec), now); return;
    case FK_BOOL:
    case FK_FLAG:
    case FK_TEST: table_cell(t, field_long(f, rec) ? "yes" : "no", c->width); return;
    default: table_cell(t, field_str(f, rec), c->width); return;
    }
}

/* The table `title` of n records at items, the columns of `have`. */
static void text_records(const char *title, const rd_record *r, const tcol *cols, size_t ncols,
                         unsigned have, const void *items, size_t n, double now, text_buf *out)
{
    const char *heads[MAX_COLS];
    size_t nh = 0;
    for (size_t i = 0; i < ncols && nh < MAX_COLS; i++)
        if (!cols[i].only || (cols[i].only & have))
            heads[nh++] = cols[i].head;
    table t;
    table_begin(&t, title, heads, nh);
    for (size_t k = 0; k < n; k++) {
        const void *rec = (const char *)items + k * r->size;
        for (size_t i = 0; i < ncols; i++) {
            if (cols[i].only && !(cols[i].only & have))
                continue;
            if (cols[i].cell)
                cols[i].cell(&t, rec, now);
            else
                field_cell(&t, r, &cols[i], rec, now);
        }
    }
    table_end(&t, out);
}

#define TEXT(title, r, cols, have, items, n, now, out) \
    text_records(title, r, cols, sizeof cols / sizeof *cols, have, items, n, now, out)

static void exec_attempt(table *t, const void *rec, double now)
{
    const rd_execution *e = rec;
    char att[48];
    if (e->max_attempts >= 0)
        snprintf(att, sizeof att, "%d/%d", e->attempt, e->max_attempts);
    else
        snprintf(att, sizeof att, "%d", e->attempt);
    table_cell(t, att, CELL_MAX);
}

static void exec_elig(table *t, const void *rec, double now)
{
    const rd_execution *e = rec;
    char el[160];
    snprintf(el, sizeof el, "%s%s%s%s", elig_name(e->elig.verdict), e->elig.why[0] ? " (" : "",
             e->elig.why, e->elig.why[0] ? ")" : "");
    table_cell(t, el, CELL_MAX);
}

static void exec_eta(table *t, const void *rec, double now)
{
    const rd_execution *e = rec;
    char eta[40];
    if (e->next_retry_min <= 0) {
        snprintf(eta, sizeof eta, "-");
    } else if (e->next_retry_min <= now) {
        snprintf(eta, sizeof eta, "due");
    } else {
        char a[16];
        format_age(e->next_retry_min - now, a, sizeof a);
        snprintf(eta, sizeof eta, "in %s", a);
    }
    table_cell(t, eta, CELL_MAX);
}

static void exec_error(table *t, const void *rec, double now)
{
    const rd_execution *e = rec;
    const char *flag = e->flags & RD_EXEC_ORPHAN ? "[orphan suspect] "
                       : e->flags & RD_EXEC_OVERLAP ? "[overlapping] "
                       : e->flags & RD_EXEC_MALFORMED ? "[malformed] "
                       : e->flags & RD_EXEC_OVERSIZED ? "[oversized] " : "";
    char *err = xasprintf("%s%s", flag, e->error ? e->error : (*flag ? "" : "-"));
    table_cell(t, err, WIDE_MAX);
    free(err);
}

static const tcol exec_cols[] = {
    { "ID", MF_ID, CELL_MAX, NULL, 0 },
    { "NAME", MF_NAME, CELL_MAX, NULL, 0 },
    { "STATUS", MF_STATUS, CELL_MAX, NULL, 0 },
    { "ATTEMPT", NULL, CELL_MAX, exec_attempt, 0 },
    { "ELIGIBLE", NULL, CELL_MAX, exec_elig, 0 },
    { "NEXT RETRY", NULL, CELL_MAX, exec_eta, 0 },
    { "AGE", MF_CREATED_AT, CELL_MAX, NULL, 0 },
    { "WORKER", MF_WORKER, CELL_MAX, NULL, 0 },
    { "REASON", MF_REASON, CELL_MAX, NULL, TC_CHAIN },
    { "ERROR", NULL, WIDE_MAX, exec_error, 0 },
};

static void text_execs(const char *title, const rd_execution *items, size_t n, double now,
                       bool chain, text_buf *out)
{
    TEXT(title, &exec_record, exec_cols, chain ? TC_CHAIN : TC_LIST, items, n, now, out);
}

static void worker_health(table *t, const void *rec, double now)
{
    const rd_worker *w = rec;
    char hl[96];
    const char *hn = health_name(w->health);
    if (w->reported_health && strcmp(w->reported_health, hn) != 0)
        snprintf(hl, sizeof hl, "%s (reported %.60s)", hn, w->reported_health);
    else
        snprintf(hl, sizeof hl, "%s", hn);
    table_cell(t, hl, CELL_MAX);
}

static void worker_flight(table *t, const void *rec, double now)
{
    const rd_worker *w = rec;
    char fl[48];
    snprintf(fl, sizeof fl, "-");
    if (w->in_flight >= 0 || w->capacity >= 0) {
        char a[16] = "-", b[16] = "-";
        if (w->in_flight >= 0)
            snprintf(a, sizeof a, "%d", w->in_flight);
        if (w->capacity >= 0)
            snprintf(b, sizeof b, "%d", w->capacity);
        snprintf(fl, sizeof fl, "%s/%s", a, b);
    }
    table_cell(t, fl, CELL_MAX);
}

static void worker_rate(table *t, const void *rec, double now)
{
    const rd_worker *w = rec;
    char rate[16];
    if (w->failure_rate >= 0)
        snprintf(rate, sizeof rate, "%.0f%%", w->failure_rate * 100);
    else
        snprintf(rate, sizeof rate, "-");
    table_cell(t, rate, CELL_MAX);
}

static const tcol worker_cols[] = {
    { "ID", MF_ID, CELL_MAX, NULL, 0 },
    { "NAME", MF_NAME, CELL_MAX, NULL, 0 },
    { "STATUS", MF_STATUS, CELL_MAX, NULL, 0 },
    { "HEALTH", NULL, CELL_MAX, worker_health, 0 },
    { "WHY", MF_HEALTH_REASON, CELL_MAX, NULL, 0 },
    { "HEARTBEAT", MF_HEARTBEAT_AT, CELL_MAX, NULL, 0 },
    { "DEPTH", MF_QUEUE_DEPTH, CELL_MAX, NULL, 0 },
    { "IN-FLIGHT", NULL, CELL_MAX, worker_flight, 0 },
    { "FAIL RATE", NULL, CELL_MAX, worker_rate, 0 },
    { "FAILS", MF_CONSECUTIVE_FAILURES, CELL_MAX, NULL, 0 },
    { "TAGS", MF_TAGS, CELL_MAX, NULL, 0 },
};

static void text_workers(const rd_model *m, double now, text_buf *out)
{
    TEXT("WORKERS", &worker_record, worker_cols, 0, m->workers.items, m->workers.n, now, out);
}

static void queue_note(table *t, const void *rec, double now)
{
    const rd_queue *q = rec;
    table_cell(t, q->depth > 0 && q->consumers == 0 ? "no consumers" : "", CELL_MAX);
}

static const tcol queue_cols[] = {
    { "QUEUE", MF_NAME, WIDE_MAX, NULL, 0 },
    { "DEPTH", MF_DEPTH, CELL_MAX, NULL, 0 },
    { "READY", MF_READY, CELL_MAX, NULL, 0 },
    { "UNACKED", MF_UNACKED, CELL_MAX, NULL, 0 },
    { "CONSUMERS", MF_CONSUMERS, CELL_MAX, NULL, 0 },
    { "IN/S", MF_PUBLISH_RATE, CELL_MAX, NULL, 0 },
    { "OUT/S", MF_DELIVER_RATE, CELL_MAX, NULL, 0 },
    { "DLQ", MF_IS_DLQ, CELL_MAX, NULL, 0 },
    { "NOTE", NULL, CELL_MAX, queue_note, 0 },
};

static void text_queues(const rd_model *m, double now, text_buf *out)
{
    TEXT("QUEUES", &queue_record, queue_cols, 0, m->queues.items, m->queues.n, now, out);
}

static const tcol dlq_cols[] = {
    { "ID", MF_ID, CELL_MAX, NULL, 0 },
    { "QUEUE", MF_QUEUE, CELL_MAX, NULL, 0 },
    { "EXECUTION", MF_EXECUTION_ID, CELL_MAX, NULL, 0 },
    { "REASON", MF_REASON, CELL_MAX, NULL, 0 },
    { "COUNT", MF_COUNT, CELL_MAX, NULL, 0 },
    { "FIRST DEATH", MF_FIRST_DEATH_AT, CELL_MAX, NULL, 0 },
    { "LAST DEATH", MF_LAST_DEATH_AT, CELL_MAX, NULL, 0 },
    { "PAYLOAD", MF_PAYLOAD, WIDE_MAX, NULL, 0 },
};

/* "DLQ HORIZONS" and a line per DLQ: "attune.dlx.queue: oldest dead letter expires in 12m
 * (message-ttl 1h from x-death)" (dlqhorizon.h), sanitized. */
static void text_horizons(const rd_model *m, double now, text_buf *out)
{
    rd_horizon *h;
    size_t n = dlq_horizons(m, now, &h);
    if (n)
        text_buf_str(out, "DLQ HORIZONS\n");
    for (size_t i = 0; i < n; i++) {
        char what[HORIZON_BASIS_LEN + 64];
        horizon_text(&h[i], what, sizeof what);
        char *line = xasprintf("%s (%s): %s\n", h[i].queue ? h[i].queue : "-",
                               h[i].source ? h[i].source : "-", what);
        char *clean = sanitize_str(line, SAN_KEEP_NL);
        text_buf_str(out, clean);
        free(clean);
        free(line);
    }
    if (n)
        text_buf_str(out, "\n");
    free(h);
}

static void text_dlq(const rd_model *m, double now, text_buf *out)
{
    TEXT("DLQ", &dlq_record, dlq_cols, 0, m->dlq.items, m->dlq.n, now, out);
    if (m->dlq_peek_off) {   /* read-only: what the broker's statistics say instead */
        char total[32] = "unknown";
        if (m->dlq_total >= 0)
            snprintf(total, sizeof total, "%ld", m->dlq_total);
        text_buf_str(out, "note: peeking is off in read-only (a RabbitMQ get requeues the messages, an SQS receive "
                    "raises their receive count): DLQ size ");
        text_buf_str(out, total);
        text_buf_str(out, " from the broker's statistics; see the queues view\n\n");
    }
    if (m->dlq.n && m->dlq.items[0].queue && strcmp(m->dlq.items[0].queue, "tasks_dlq") != 0)
        text_buf_str(out, "note: peeking a RabbitMQ queue requeues the messages (redelivered)\n\n");
    text_horizons(m, now, out);
}

static void text_groups(const rd_model *m, double now, text_buf *out)
{
    static const char *const h[] = { "ID", "COUNT", "ELIGIBLE", "TREND", "LAST 15M", "BEFORE", "FIRST",
                                     "LAST", "ACTIONS", "ERROR" };
    rd_group *g = NULL;
    size_t n = sgroups_of_model(m, NULL, now, &g);
    char title[160] = "ERROR GROUPS (failed executions loaded, by error fingerprint)";
    if (m->sgroups) {
        char win[16];
        sgroups_window_text(sgroups_window(m->sgroups), win, sizeof win);
        snprintf(title, sizeof title, "ERROR GROUPS (the store's failures of the last %s: %zu, by error fingerprint)",
                 win, sgroups_failures(m->sgroups));
        if (sgroups_capped(m->sgroups))
            snprintf(title + strlen(title), sizeof title - strlen(title), " capped at %ld failures",
                     sgroups_cap(m->sgroups));
    }
    table t;
    table_begin(&t, title, h, 10);
    for (size_t i = 0; i < n; i++) {
        char acts[256] = "";
        size_t used = 0;
        for (size_t k = 0; k < g[i].n_actions && used + 1 < sizeof acts; k++)
            used += (size_t)snprintf(acts + used, sizeof acts - used, "%s%s(%zu)", k ? " " : "",
                                     g[i].actions[k].name, g[i].actions[k].count);
        if (used >= sizeof acts)
            used = sizeof acts - 1;
        char gid[GROUPID_LEN + 1];
        groupid_make(g[i].fp, gid);
        table_cell(&t, gid, CELL_MAX);
        table_num(&t, (long)g[i].count);
        table_num(&t, (long)g[i].eligible);
        table_cell(&t, trend_name(g[i].trend), CELL_MAX);
        table_num(&t, (long)g[i].recent);
        table_num(&t, (long)g[i].before);
        table_age(&t, g[i].first_seen, now);
        table_age(&t, g[i].last_seen, now);
        table_cell(&t, acts, WIDE_MAX);
        table_cell(&t, g[i].fp[0] ? g[i].fp : "(no error text)", WIDE_MAX);
    }
    table_end(&t, out);
    /* what stands out about each group against its window (standout.h) */
    for (size_t i = 0; m->sgroups && i < n; i++) {
        char gid[GROUPID_LEN + 1], line[1024];
        groupid_make(g[i].fp, gid);
        sgroups_standout_text(m->sgroups, &g[i], SO_MAX, line, sizeof line);
        text_buf_str(out, gid);
        text_buf_str(out, "  ");
        text_buf_str(out, line);
        text_buf_str(out, "\n");
    }
    groups_free(g, n);
}

static void text_loaded(const rd_model *m, double now, text_buf *out)
{
    text_execs("EXECUTIONS", m->execs.items, m->execs.n, now, false, out);
}

static void text_chain(const rd_model *m, double now, text_buf *out)
{
    char *title = xasprintf("RETRY CHAIN %s", m->chain_id ? m->chain_id : "");
    char *clean = sanitize_str(title, 0);
    text_execs(clean, m->chain.items, m->chain.n, now, true, out);
    free(clean);
    free(title);
}

static void text_detail(const rd_model *m, double now, text_buf *out)
{
    (void)now;
    char *t = m->detail ? detail_text(m->detail, 0) : NULL;
    if (!t) {
        char *raw = xasprintf("EXECUTION %s: %s", m->detail_id ? m->detail_id : "-",
                              m->detail_why ? m->detail_why : "not read");
        t = sanitize_str(raw, 0);
        free(raw);
    }
    text_buf_str(out, t);
    text_buf_str(out, "\n");
    free(t);
}

/* The text renderer of a view is its mask (views.h): one table per part, in this order. */
static const struct {
    unsigned part;
    void (*render)(const rd_model *m, double now, text_buf *out);
} sections[] = {
    { VPART_SOURCES, text_sources }, { VPART_COUNTS, text_counts }, { VPART_EXECS, text_loaded },
    { VPART_CHAIN, text_chain },     { VPART_WORKERS, text_workers },  { VPART_QUEUES, text_queues },
    { VPART_DLQ, text_dlq },         { VPART_GROUPS, text_groups },   { VPART_DETAIL, text_detail },
};

char *model_to_text(const rd_model *m, const char *view, double now)
{
    text_buf out = { NULL, 0, 0 };
    text_buf_str(&out, "");
    const rd_view *v = view_find(view);
    unsigned mask = v && v->mask ? v->mask : view_find("overview")->mask;
    for (size_t i = 0; i < sizeof sections / sizeof *sections; i++)
        if (mask & sections[i].part)
            sections[i].render(m, now, &out);
    return out.p;
}
