#pragma once
/*
 * What the PostgreSQL source is asked to show (pg_view.c): the lists on screen, the
 * executions page (filter, keyset cursors and the stack of earlier pages), the chain,
 * id lookup, one execution in full (the detail pane), cockpit worker and DLQ page (pg_dlq.c)
 * the UI wants, and the ones in flight. pg_source.c
 * turns the rd_source ops into wants, pg_batch.c reads them into a batch (pg_view_wants)
 * and hands them over (pg_view_sent), pg_apply.c hands the answers back (pg_view_got_*),
 * which this file publishes to the model.
 */
#include <libpq-fe.h>
#include <stdbool.h>

#include "../core/model.h"
#include "pg_dlq.h"
#include "pg_qkind.h"
#include "pg_rows.h"
#include "source.h"

typedef struct pg_view pg_view;

/* What the next batch should carry (pointers valid until the view changes). */
typedef struct pg_wants {
    bool main;                    /* the refresh queries (counts, workers, queues, ...) */
    bool page;                    /* the executions page */
    bool workers_shown, execs_shown;
    bool page_asked;              /* the operator moved the page (filter, paging, jump):
                                   * read even when not on screen, never skipped */
    int page_size;
    bool filtered;                /* status, text or worker filter */
    long budget;                  /* the rows a filtered page searches ($6) */
    bool set;                     /* the page is a store's set: [query by_status] */
    long set_budget;              /* its rows read per request, a fingerprint kept (0: a page) */
    const char *window;           /* its window in seconds ($6; NULL: none) */
    const char *key, *id;         /* the page's start (NULL: the newest) */
    const char *status, *text, *worker;   /* the filter */
    const char *chain, *jump, *running;   /* NULL: not wanted */
    bool dlq;
    const pg_dlq *dlq_at;         /* the DLQ page's start, order and search */
    const char *detail;           /* one execution in full; NULL: not wanted */
    const char *groups_window, *groups_cap;   /* the error groups ($1 seconds, $2 the
                                   * failures read at most); NULL: not wanted */
} pg_wants;

pg_view *pg_view_new(rd_model *m, int page_size);
void pg_view_free(pg_view *v);

/* ---- the ops (pg_source.c) ---- */
void pg_view_want_refresh(pg_view *v);                  /* the lists and the page */
/* The lists on screen (RD_PANEL_*); returns the ones gained (wanted now). */
unsigned pg_view_set_interest(pg_view *v, unsigned panels);
void pg_view_set_filter(pg_view *v, const rd_exec_filter *f);
/* Whether the profile has [query by_status] (a status's or a group's set by its index). */
void pg_view_set_query(pg_view *v, bool has);
/* dir 0: the newest page; > 0 older; < 0 back. False when there is nowhere to go. */
bool pg_view_turn(pg_view *v, int dir);
void pg_view_want_jump(pg_view *v, const char *id);
void pg_view_want_chain(pg_view *v, const char *id);
/* The cockpit's worker (NULL: none); true when one is wanted. */
bool pg_view_want_worker(pg_view *v, const char *id);
void pg_view_want_dlq(pg_view *v, bool more);
/* The store's DLQ page before (-1) or after (+1); the order and the text searched. */
void pg_view_dlq_page(pg_view *v, int dir);
void pg_view_dlq_order(pg_view *v, bool oldest, const char *text);
/* One execution in full (model_set_detail), read once. */
void pg_view_want_detail(pg_view *v, const char *id);
/* The error groups of the store's last window_s seconds, reading at most cap failures. */
void pg_view_want_groups(pg_view *v, double window_s, long cap);
/* Nothing the operator asked for is pending (a chain, lookup, detail, DLQ page or page). */
bool pg_view_idle(const pg_view *v);
/* Query k of a batch that will not be answered is wanted again. */
void pg_view_again(pg_view *v, qkind k);

/* ---- a batch (pg_batch.c) ---- */
void pg_view_wants(const pg_view *v, pg_wants *w);
/* Requests the profile cannot answer (no such query) are answered empty at once. */
void pg_view_drop(pg_view *v, bool chain, bool jump, bool dlq, bool running, bool groups, bool detail);
/* The batch sent carries the wants (page: the executions page; running: the cockpit's). */
void pg_view_sent(pg_view *v, bool page, bool running, bool groups);
/* The batch was answered or lost: nothing in flight. */
void pg_view_answered(pg_view *v);

/* ---- the answers (pg_apply.c); r NULL: an optional query failed (empty) ---- */
void pg_view_got_execs(pg_view *v, const PGresult *r, const pg_row_ctx *x);
void pg_view_got_unchanged(pg_view *v);   /* the page was skipped: unchanged */
void pg_view_got_chain(pg_view *v, const PGresult *r, const pg_row_ctx *x);
void pg_view_got_running(pg_view *v, const PGresult *r, const pg_row_ctx *x);
void pg_view_got_lookup(pg_view *v, const PGresult *r);
void pg_view_got_dlq(pg_view *v, const PGresult *r);
/* r NULL: the store could not read it; no row: no such execution. */
void pg_view_got_detail(pg_view *v, const PGresult *r);
void pg_view_got_groups(pg_view *v, const PGresult *r, const pg_row_ctx *x);
/* The window's baseline for what stands out ([query groups_window]; NULL: it failed),
 * kept for the groups answered next. */
void pg_view_got_groups_window(pg_view *v, const PGresult *r);
