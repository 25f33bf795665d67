#pragma once
/*
 * What the Redis source publishes (redis_view.c): the index turned into the model's
 * counts, executions page (filtered, keyset paging), orphan suspects and DLQ share; the
 * operator's filter and page; the chain and DLQ pages asked for until answered.
 */
#include <stdbool.h>

#include "redis_index.h"
#include "source.h"

typedef struct rs_view rs_view;

rs_view *rs_view_new(const rd_source_ctx *ctx, const rix *ix);   /* ix: borrowed */
void rs_view_free(rs_view *v);
/* Publishes to the model (and tells ctx.on_change) when something changed since the last
 * time, or force: one walk over the index (counts, orphans, the page, the DLQ, the groups
 * asked for), in steps of a bounded number of tasks on zero-delay timers of ctx.base (all
 * at once without one); the model is set once, when the walk is over. A forced publish
 * restarts a walk under way; a removal from the index (rix_layout) restarts it too. When
 * only the clock moved it costs O(1): it republishes once a running task turned orphan. */
void rs_view_publish(rs_view *v, bool force);
bool rs_view_busy(const rs_view *v);        /* a publish under way */
/* The publish's next step now (the timer runs them otherwise): the tasks it visited. */
size_t rs_view_step(rs_view *v);
void rs_view_set_slice(rs_view *v, size_t tasks);   /* tests: tasks a step, 0 default */
void rs_view_set_filter(rs_view *v, const rd_exec_filter *f);
bool rs_view_page(rs_view *v, int dir);     /* false: no such page (nothing to publish) */
void rs_view_jump(rs_view *v, const char *id);
void rs_view_want_chain(rs_view *v, const char *id);
/* The chain to fetch now (marked busy until rs_view_chain_done), NULL when none waits. */
const char *rs_view_chain_take(rs_view *v);
void rs_view_chain_done(rs_view *v);
void rs_view_want_dlq(rs_view *v, bool more);
/* The error groups of the window_s seconds before the next publish, at most cap failures
 * read (redis_groups.h): computed then, once (again at the publish after the first sweep
 * when computed over a partial index). */
void rs_view_want_groups(rs_view *v, double window_s, long cap);
/* The index is whole: the first sweep is complete. */
void rs_view_whole(rs_view *v);
/* Answers a waiting chain / DLQ request with msg (the source cannot serve it now), so a
 * one-shot reader (snapshot) does not wait for them. swept: the index has been complete. */
void rs_view_answer(rs_view *v, const char *msg, bool swept);
bool rs_view_idle(const rs_view *v);        /* no chain or DLQ request waiting, no publish
                                               under way */
