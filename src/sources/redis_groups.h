#pragma once
/*
 * The error groups of the Alakai index (docs/error-groups.md), computed in C where the
 * data is: the failures (failed, lost) of the window — by when each failed: resolvedAt,
 * else the newest attempt's dispatchedAt — the newest `cap` of them at most, tallied per
 * distinct raw error, task name, status and attempt (what the system's rule reads), then
 * normalized and merged by storegroups.c (fingerprint.c: the one definition). Pure over
 * the index (no I/O); the index in memory is walked once, whole (rs_groups_build) or in
 * slices (rs_groups_begin, _offer each task once, _end: the publish job of redis_view.c).
 * The same pass counts every task of the window by name and attempt: the baseline of what
 * stands out about each group (standout.h; Alakai records no worker, queue or host).
 */
#include "../core/storegroups.h"
#include "redis_index.h"

/* Fills e (zeroed) as a row of the executions list would be: id, status, name, error and
 * its fingerprint, eligibility by the system's rule. */
typedef void (*rs_groups_proto)(const rix_task *t, rd_execution *e, void *ud);

/* The groups of the failures of the window_s seconds before now, at most cap read (the
 * newest; capped when more failed). */
rd_sgroups *rs_groups_build(const rix *ix, double now, double window_s, long cap,
                            rs_groups_proto proto, void *ud);

/* The same in slices: no removal from the index between begin and end (rix_layout). */
typedef struct rs_groups_job rs_groups_job;
rs_groups_job *rs_groups_begin(const rix *ix, double now, double window_s, long cap);
void rs_groups_offer(rs_groups_job *g, size_t i);
rd_sgroups *rs_groups_end(rs_groups_job *g, rs_groups_proto proto, void *ud);   /* frees g */
void rs_groups_cancel(rs_groups_job *g);
