#pragma once
/*
 * Fetch batches of the Redis source (redis_fetch.c): one job per key, run with bounded
 * commands in flight. Sweep and notified-key batches turn each key's hash into a summary
 * in the index; a chain batch puts the task's attempts into the model's chain. The sweep
 * (redis_sweep.c) decides which keys and counts its batches through the done callback.
 */
#include <stdbool.h>
#include <stddef.h>

#include "redis_conn.h"
#include "redis_index.h"
#include "source.h"

typedef enum { RS_BATCH_SWEEP, RS_BATCH_DIRTY, RS_BATCH_CHAIN } rs_batch_kind;

typedef struct rs_fetch_env {       /* what batches work with (borrowed; outlives them) */
    rs_conn *conn;
    rix *ix;                        /* sweep and notified-key results */
    const char *prefix;             /* "alakai-executions": keys are {prefix}:{taskId} */
    rd_model *model;                /* chain results */
    const rd_system_cfg *cfg;
} rs_fetch_env;

typedef struct rs_batch rs_batch;
/* Called once every job is done (a failed chain batch has put its error into the chain
 * already); the batch is freed after it returns. */
typedef void rs_batch_done(const rs_batch *b, void *ud);

rs_batch *rs_batch_new(const rs_fetch_env *env, rs_batch_kind kind, size_t n,
                       rs_batch_done *done, void *ud);
size_t rs_batch_size(const rs_batch *b);
const char *rs_batch_last_key(const rs_batch *b);     /* NULL when empty */
void rs_batch_add(rs_batch *b, const char *key, size_t len);
void rs_batch_run(rs_batch *b);
const char *rs_batch_error(const rs_batch *b);        /* NULL when it succeeded */
/* "taskId" from a key "{prefix}:{taskId}"; NULL when the key is not ours. */
const char *rs_task_id(const char *prefix, const char *key, size_t len, size_t *idlen);
