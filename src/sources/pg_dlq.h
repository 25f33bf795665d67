#pragma once
/*
 * The store's DLQ read a page at a time (pg_dlq.c, owned by pg_view.c): the page's start,
 * the starts of the pages before it, the order (oldest first after G) and the text searched
 * by the store ($4, $5 of [query dlq]).
 */
#include <libpq-fe.h>
#include <stdbool.h>

#include "../core/model.h"

enum { DLQ_PAGE = 50 };           /* DLQ entries per page */

typedef struct pg_dlq pg_dlq;

pg_dlq *pg_dlq_new(void);
void pg_dlq_free(pg_dlq *d);
void pg_dlq_page(pg_dlq *d, int dir);        /* +1 the next (older) page, -1 the one before */
/* From the first page, in that order, searched for text (NULL: all). */
void pg_dlq_order(pg_dlq *d, bool oldest, const char *text);
/* The first page again, the order and the search kept. */
void pg_dlq_first(pg_dlq *d);
/* The parameters of [query dlq] for the page wanted (p: 5 slots, limit the page size + 1
 * as text); returns how many the profile's SQL takes (3, 4 or 5). */
int pg_dlq_params(const pg_dlq *d, const char *sql, const char *limit, const char **p);
/* [query dlq_groups] answered (r: columns by 'reason'|'queue', key, n, first_at, last_at,
 * capped): the store's whole DLQ grouped, published to the model (model_set_dlq_sgroups). */
void pg_dlq_got_groups(rd_model *m, const PGresult *r);
/* A page read (DLQ_PAGE + 1 rows at most): published to the model with its position. */
void pg_dlq_got(pg_dlq *d, rd_model *m, const PGresult *r);
