/*
 * Per-task fetches for the Alakai store; redis_sweep.c decides which keys (a SCAN step,
 * the notified keys, one chain) and hands them over as a batch. This file owns batches
 * and jobs (creation, completion, what a job's result does to the index or the chain
 * view).
 *
 * Sweeps and notified keys: HLEN then HGETALL per key. The HLENs of a batch (a SCAN step
 * of ~RS_SCAN_COUNT keys cut in batches) are pipelined; each reply sends its key's HGETALL
 * at once when the hash has at most RS_MAX_FIELDS fields, so the HGETALLs of a batch leave
 * together one round trip later (redis_sweep.c keeps RS_SWEEP_INFLIGHT batches in flight, so
 * the commands and replies waiting are bounded). Two commands per task (HLEN is O(1),
 * ~1 µs; HGETALL ~1-2 µs of Redis CPU). A hash of more than RS_MAX_FIELDS fields is never
 * asked for: the server does not build that reply (a hostile 1,000,000-field hash was a
 * ~66 MB reply every sweep), and the task is listed as oversized with its field count.
 * The record cap is kept on the client: a newest record over RS_RECORD_CAP is never
 * decoded (the task is listed as oversized), older attempts are decoded only when all of
 * them together fit RS_SWEEP_ALL_CAP (the overlap check), a hash that grew past
 * RS_MAX_FIELDS between its HLEN and its HGETALL is listed as oversized too, and a key
 * that is not a hash (WRONGTYPE) is listed as malformed with the server's reason. The
 * price: an oversized value crosses the wire (a server-side cap would need scripting,
 * EVAL_RO, ~8 µs per key), but the reader never builds more of it than the caps allow
 * (redis_reply.c: strings over RS_RECORD_CAP are not copied, arrays keep
 * RS_REPLY_ELEMENTS elements), so memory stays bounded.
 *
 * Chains, a key at a time with its sizes known before any record is read, a round trip a
 * phase (replies on one connection arrive in order, so a job's replies are matched by
 * count):
 *   HLEN key                      → N attempt fields (0: gone; > cap: flagged)
 *   HKEYS key                     → the attempt numbers
 *   HSTRLEN key n...              → sizes
 *   HMGET key n...                → every attempt of at most 1 MiB; larger ones are listed
 *                                   as oversized, never fetched
 */
#include "redis_fetch.h"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fingerprint.h"
#include "../core/retry.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/loop.h"
#include "redis_record.h"
#include "redis_reply.h"

enum {
    RS_MAX_FIELDS = 64,             /* attempt fields read per task in a sweep */
    RS_SWEEP_ALL_CAP = 256 << 10,   /* fetch all attempts (overlap) below this total */
};

typedef enum { JP_HLEN, JP_STRLEN, JP_HKEYS, JP_DATA, JP_DONE } rs_phase;

typedef struct rs_job {
    rs_batch *b;
    char *key;
    size_t keylen;
    rs_phase phase;
    int pending, got;
    bool failed;
    int nf;                          /* numeric attempt fields */
    int *nums;                       /* ascending */
    long long *sizes;
    int *fetch;                      /* indices into nums fetched by HMGET */
    int nfetch;
    bool handled;                    /* result applied already (on_all, on_data) */
    long long hlen;                  /* HLEN result, -1 unreadable */
    char why[112];                   /* layout problem (non-numeric field, ...) */
} rs_job;

struct rs_batch {
    const rs_fetch_env *env;
    rs_batch_kind kind;
    rs_batch_done *done;
    void *ud;
    size_t njobs, open;
    bool failed;
    char err[160];
    rs_job jobs[];
};

typedef void rs_cb(struct redisAsyncContext *, void *, void *);
static rs_cb on_hlen, on_strlen, on_hkeys, on_data, on_all, on_sweep_hlen;
static void job_done(rs_job *j);
static void batch_finish(rs_batch *b);

const char *rs_task_id(const char *prefix, const char *key, size_t len, size_t *idlen)
{
    size_t pl = strlen(prefix);
    if (len <= pl + 1 || memcmp(key, prefix, pl) != 0 || key[pl] != ':')
        return NULL;
    *idlen = len - pl - 1;
    return *idlen <= 255 ? key + pl + 1 : NULL;
}

rs_batch *rs_batch_new(const rs_fetch_env *env, rs_batch_kind kind, size_t n,
                       rs_batch_done *done, void *ud)
{
    rs_batch *b = xcalloc(1, sizeof *b + n * sizeof(rs_job));
    b->env = env;
    b->kind = kind;
    b->done = done;
    b->ud = ud;
    return b;
}

const char *rs_batch_error(const rs_batch *b)
{
    return b->failed ? b->err : NULL;
}

size_t rs_batch_size(const rs_batch *b)
{
    return b->njobs;
}

const char *rs_batch_last_key(const rs_batch *b)
{
    return b->njobs ? b->jobs[b->njobs - 1].key : NULL;
}

void rs_batch_add(rs_batch *b, const char *key, size_t len)
{
    rs_job *j = &b->jobs[b->njobs++];
    j->b = b;
    j->key = xstrndup(key, len);
    j->keylen = len;
    b->open++;
}

static void batch_free(rs_batch *b)
{
    for (size_t i = 0; i < b->njobs; i++) {
        free(b->jobs[i].key);
        free(b->jobs[i].nums);
        free(b->jobs[i].sizes);
        free(b->jobs[i].fetch);
    }
    free(b);
}

static bool job_send(rs_job *j, rs_cb *cb, int argc, const char **argv, const size_t *lens)
{
    if (!rs_conn_command(j->b->env->conn, cb, j, argc, argv, lens)) {
        j->failed = true;
        if (!j->b->failed) {
            j->b->failed = true;
            snprintf(j->b->err, sizeof j->b->err, "redis connection lost");
        }
        return false;
    }
    j->pending++;
    return true;
}

static bool job_cmd2(rs_job *j, rs_cb *cb, const char *cmd, const char *arg)
{
    const char *argv[3] = { cmd, j->key, arg };
    size_t lens[3] = { strlen(cmd), j->keylen, arg ? strlen(arg) : 0 };
    return job_send(j, cb, arg ? 3 : 2, argv, lens);
}

/* A reply arrived for j (to cmd); false when the job cannot go on (connection gone, or
 * the server refused cmd for want of authentication or permission: the whole batch
 * fails with that, as the source's error). cmd NULL: the caller handles every error. */
static bool job_reply(rs_job *j, const redisReply *r, const char *cmd)
{
    j->pending--;
    rs_batch *b = j->b;
    if (!r || (cmd && r->type == REDIS_REPLY_ERROR && rs_access_error(r->str))) {
        j->failed = true;
        if (!b->failed) {
            b->failed = true;
            if (r)
                rs_conn_error_text(b->env->conn, cmd, r->str, b->err, sizeof b->err);
            else
                snprintf(b->err, sizeof b->err, "redis connection lost");
        }
    }
    if (j->failed) {
        if (j->pending == 0)
            job_done(j);
        return false;
    }
    return true;
}

/* A chain: HLEN first (the field count), then HKEYS, HSTRLEN, HMGET. */
static void job_start(rs_job *j)
{
    j->phase = JP_HLEN;
    j->hlen = -1;
    if (!job_cmd2(j, on_hlen, "HLEN", NULL))
        job_done(j);
}

/* A sweep or notified key: its size (on_sweep_hlen), then the whole hash (on_all). */
static void job_fetch_all(rs_job *j)
{
    j->phase = JP_HLEN;
    j->hlen = -1;
    if (!job_cmd2(j, on_sweep_hlen, "HLEN", NULL))
        job_done(j);
}

/* ---- results ---------------------------------------------------------------------- */

static void index_problem(rs_job *j, unsigned flags, const char *why)
{
    const rs_fetch_env *env = j->b->env;
    size_t idlen;
    const char *id = rs_task_id(env->prefix, j->key, j->keylen, &idlen);
    if (!id)
        return;
    rix_sum sum = { .status = "unknown", .flags = flags, .error = why,
                    .attempt = j->nf > 0 ? j->nums[j->nf - 1] : 0, .nfields = j->nf };
    rix_upsert(env->ix, id, idlen, &sum);
}

static void index_remove(rs_job *j)
{
    const rs_fetch_env *env = j->b->env;
    size_t idlen;
    const char *id = rs_task_id(env->prefix, j->key, j->keylen, &idlen);
    if (id)
        rix_remove(env->ix, id, idlen);
}

static char *job_task_id(const rs_job *j)
{
    size_t idlen;
    const char *id = rs_task_id(j->b->env->prefix, j->key, j->keylen, &idlen);
    return id ? xstrndup(id, idlen) : xstrdup(j->key);
}

static void chain_problem(rs_job *j, const char *why, unsigned flags)
{
    const rs_fetch_env *env = j->b->env;
    rd_execution *e = xcalloc(1, sizeof *e);
    e->id = job_task_id(j);
    e->status = xstrdup(flags || j->failed ? "unknown" : "missing");
    e->error = xstrdup(why);
    e->attempt = -1;
    e->max_attempts = -1;
    e->flags = flags;
    if (j->nf > 0)
        e->attempt = j->nums[j->nf - 1];
    model_set_chain(env->model, e->id, e, 1);
    model_set_detail(env->model, e->id, NULL, why);   /* the detail pane reads it this way */
}

/* ---- phases ----------------------------------------------------------------------- */

static void send_strlens(rs_job *j)
{
    j->phase = JP_STRLEN;
    j->got = 0;
    free(j->sizes);
    j->sizes = xcalloc((size_t)j->nf, sizeof *j->sizes);
    for (int i = 0; i < j->nf; i++) {
        char f[16];
        snprintf(f, sizeof f, "%d", j->nums[i]);
        if (!job_cmd2(j, on_strlen, "HSTRLEN", f))
            break;
    }
    if (j->pending == 0)
        job_done(j);
}

static void after_hlen(rs_job *j)
{
    int cap = RS_CHAIN_MAX_FIELDS;
    if (j->why[0] || j->hlen == 0) {
        job_done(j);
        return;
    }
    if (j->hlen > cap) {             /* too large to read, as in a sweep */
        char msg[112];
        snprintf(msg, sizeof msg, "hash with %lld fields (more than %d): not read", j->hlen, cap);
        chain_problem(j, msg, RD_EXEC_OVERSIZED);
        j->handled = true;
        job_done(j);
        return;
    }
    j->phase = JP_HKEYS;
    if (!job_cmd2(j, on_hkeys, "HKEYS", NULL))
        job_done(j);
}

static void on_hlen(struct redisAsyncContext *ac, void *reply, void *priv)
{
    rs_job *j = priv;
    rs_conn *conn = j->b->env->conn;
    rs_conn_reply_begin(conn);
    const redisReply *r = reply;
    if (!job_reply(j, r, "HLEN"))
        goto out;
    if (r->type == REDIS_REPLY_INTEGER)
        j->hlen = r->integer;
    else
        snprintf(j->why, sizeof j->why, "not a hash (%.80s)",
                 r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
    after_hlen(j);
out:
    rs_conn_reply_end(conn);
}

/* "non-numeric attempt fields: 'latest', '-1'" (as many as fit). */
static void job_bad_field(rs_job *j, const char *name)
{
    size_t n = strlen(j->why);
    if (n == 0)
        n = (size_t)snprintf(j->why, sizeof j->why, "non-numeric attempt fields:");
    if (n + 8 < sizeof j->why)
        snprintf(j->why + n, sizeof j->why - n, "%s '%.24s'", n > 28 ? "," : "", name);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void on_hkeys(struct redisAsyncContext *ac, void *reply, void *priv)
{
    rs_job *j = priv;
    rs_conn *conn = j->b->env->conn;
    rs_conn_reply_begin(conn);
    const redisReply *r = reply;
    if (!job_reply(j, r, "HKEYS"))
        goto out;
    j->nf = 0;
    if (r->type == REDIS_REPLY_ARRAY) {
        j->nums = xrealloc(j->nums, (r->elements + 1) * sizeof *j->nums);
        for (size_t i = 0; i < r->elements; i++) {
            const redisReply *e = r->element[i];
            if (e->type != REDIS_REPLY_STRING)
                continue;
            int n = alakai_field_num(e->str, e->len);
            if (n > 0)
                j->nums[j->nf++] = n;
            else
                job_bad_field(j, e->str);
        }
    }
    qsort(j->nums, (size_t)j->nf, sizeof *j->nums, cmp_int);
    if (j->nf > 0)
        send_strlens(j);
    else
        job_done(j);
out:
    rs_conn_reply_end(conn);
}

/* A chain fetches every attempt within the record cap. */
static void plan_fetch(rs_job *j)
{
    j->fetch = xcalloc((size_t)j->nf, sizeof *j->fetch);
    j->nfetch = 0;
    for (int i = 0; i < j->nf; i++)
        if (j->sizes[i] > 0 && j->sizes[i] <= RS_RECORD_CAP)
            j->fetch[j->nfetch++] = i;
}

static void send_fetch(rs_job *j)
{
    plan_fetch(j);
    if (j->nfetch == 0) {
        job_done(j);
        return;
    }
    j->phase = JP_DATA;
    size_t argc = (size_t)j->nfetch + 2;
    const char **argv = xcalloc(argc, sizeof *argv);
    size_t *lens = xcalloc(argc, sizeof *lens);
    char (*names)[16] = xcalloc((size_t)j->nfetch, sizeof *names);
    argv[0] = "HMGET"; lens[0] = 5;
    argv[1] = j->key; lens[1] = j->keylen;
    for (int i = 0; i < j->nfetch; i++) {
        snprintf(names[i], sizeof names[i], "%d", j->nums[j->fetch[i]]);
        argv[i + 2] = names[i];
        lens[i + 2] = strlen(names[i]);
    }
    if (!job_send(j, on_data, (int)argc, argv, lens))
        job_done(j);
    free(names);
    free(lens);
    free(argv);
}

static void on_strlen(struct redisAsyncContext *ac, void *reply, void *priv)
{
    rs_job *j = priv;
    rs_conn *conn = j->b->env->conn;
    rs_conn_reply_begin(conn);
    const redisReply *r = reply;
    if (!job_reply(j, r, "HSTRLEN"))
        goto out;
    int i = j->got++;
    if (i < j->nf)
        j->sizes[i] = r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
    if (j->pending == 0)
        send_fetch(j);
out:
    rs_conn_reply_end(conn);
}

/* ---- records ---------------------------------------------------------------------- */

static int max_attempts(const rs_fetch_env *env)
{
    int m = env->cfg->alakai.max_retries;
    return m >= 0 ? m + 1 : -1;
}

static void exec_from_rec(const rs_fetch_env *env, rd_execution *e, const char *id,
                          const rd_alakai_rec *rec, bool ok, int attempt, int newest)
{
    const rd_system_cfg *cfg = env->cfg;
    e->id = xstrdup(id);
    e->name = xstrdup(rec->name);
    e->status = xstrdup(ok && rec->status[0] ? rec->status : "unknown");
    e->attempt = attempt;
    e->max_attempts = max_attempts(env);
    e->reason = rec->code[0] ? xstrdup(rec->code) : NULL;
    e->error = xstrdup(ok ? rec->error : rec->why);
    e->fingerprint = e->error ? fingerprint_dup(e->error) : NULL;
    e->created_at = rec->dispatched_at;
    e->started_at = rec->dispatched_at;   /* an attempt starts when it is dispatched */
    e->finished_at = rec->resolved_at;
    e->updated_at = rec->resolved_at > 0 ? rec->resolved_at : rec->dispatched_at;
    e->flags = ok ? 0 : RD_EXEC_MALFORMED;
    if (attempt == newest) {
        e->elig = retry_alakai(e->status, attempt, cfg->alakai.max_retries);
        if (strcmp(e->status, "running") == 0 && rec->dispatched_at > 0 &&
            clock_wall() - rec->dispatched_at > cfg->alakai.orphan_after_s)
            e->flags |= RD_EXEC_ORPHAN;
    } else {
        e->elig.verdict = RD_ELIG_NO;
        snprintf(e->elig.why, sizeof e->elig.why, "superseded by attempt %d", newest);
    }
}

/* An older attempt still running while a newer one exists: flag both. */
static void mark_overlaps(rd_execution *items, size_t n)
{
    bool any = false;
    for (size_t i = 0; i + 1 < n; i++)
        if (items[i].status && strcmp(items[i].status, "running") == 0) {
            items[i].flags |= RD_EXEC_OVERLAP;
            any = true;
        }
    if (any)
        items[n - 1].flags |= RD_EXEC_OVERLAP;
}

static void chain_from_reply(rs_job *j, const redisReply *r)
{
    const rs_fetch_env *env = j->b->env;
    rd_execution *items = xcalloc((size_t)j->nf, sizeof *items);
    int newest = j->nums[j->nf - 1], k = 0;
    char *id = job_task_id(j);
    for (int i = 0; i < j->nf; i++) {
        rd_execution *e = &items[i];
        if (k < j->nfetch && j->fetch[k] == i) {
            const redisReply *v = (size_t)k < r->elements ? r->element[k] : NULL;
            rd_alakai_rec rec;
            bool ok = v && v->type == REDIS_REPLY_STRING &&
                      alakai_rec_decode(v->str, v->len, &rec);
            if (!v || v->type != REDIS_REPLY_STRING) {
                memset(&rec, 0, sizeof rec);
                snprintf(rec.why, sizeof rec.why, "attempt vanished while reading");
            }
            exec_from_rec(env, e, id, &rec, ok, j->nums[i], newest);
            alakai_rec_clear(&rec);
            k++;
        } else {
            rd_alakai_rec rec = { .attempt = j->nums[i] };
            snprintf(rec.why, sizeof rec.why, "record is %lld bytes: not fetched",
                     j->sizes[i]);
            exec_from_rec(env, e, id, &rec, false, j->nums[i], newest);
            e->flags = (e->flags & ~(unsigned)RD_EXEC_MALFORMED) | RD_EXEC_OVERSIZED;
        }
    }
    mark_overlaps(items, (size_t)j->nf);
    /* the task in full (the detail pane, snapshot --view execution): its newest record */
    const redisReply *nv = j->nfetch > 0 && j->fetch[j->nfetch - 1] == j->nf - 1 &&
                           (size_t)(j->nfetch - 1) < r->elements ? r->element[j->nfetch - 1] : NULL;
    bool nok = nv && nv->type == REDIS_REPLY_STRING;
    model_set_detail(env->model, id, alakai_rec_detail(id, nok ? nv->str : NULL, nok ? nv->len : 0, j->nf,
                                                       max_attempts(env)), NULL);
    model_set_chain(env->model, id, items, (size_t)j->nf);
    free(id);
}

/* Could this record say it is running? False only when it certainly does not: neither
 * "running" in any case nor a \u escape appears. Saves decoding most older attempts
 * (the overlap check wants only running ones). */
static bool maybe_running(const char *p, size_t n)
{
    static const char word[] = "running";
    for (size_t i = 0; i + 1 < n; i++) {
        if (p[i] == '\\' && p[i + 1] == 'u')
            return true;
        if ((p[i] | 0x20) == 'r' && n - i >= sizeof word - 1) {
            size_t k = 1;
            while (k < sizeof word - 1 && (p[i + k] | 0x20) == word[k])
                k++;
            if (k == sizeof word - 1)
                return true;
        }
    }
    return false;
}

/* vals: the fetched records, oldest first, the newest last. */
static void summary_from_values(rs_job *j, const redisReply *const *vals, size_t n)
{
    const rs_fetch_env *env = j->b->env;
    size_t idlen;
    const char *id = rs_task_id(env->prefix, j->key, j->keylen, &idlen);
    if (!id || n == 0)
        return;
    const redisReply *v = vals[n - 1];
    rd_alakai_rec rec;
    bool ok = v->type == REDIS_REPLY_STRING && alakai_rec_decode(v->str, v->len, &rec);
    if (v->type != REDIS_REPLY_STRING) {
        memset(&rec, 0, sizeof rec);
        snprintf(rec.why, sizeof rec.why, "attempt vanished while reading");
    }
    rix_sum sum = {
        .status = ok ? rec.status : "unknown", .attempt = j->nums[j->nf - 1],
        .nfields = j->nf, .code = rec.code, .name = rec.name,
        .error = ok ? rec.error : rec.why,
        .dispatched_at = rec.dispatched_at, .resolved_at = rec.resolved_at,
        .flags = ok ? 0 : RD_EXEC_MALFORMED,
    };
    if (j->why[0]) {
        sum.flags |= RD_EXEC_MALFORMED;
        sum.error = j->why;
    }
    for (size_t i = 0; i + 1 < n; i++) {
        const redisReply *o = vals[i];
        rd_alakai_rec orec;
        if (o->type != REDIS_REPLY_STRING || !maybe_running(o->str, o->len))
            continue;
        if (alakai_rec_decode(o->str, o->len, &orec) && strcmp(orec.status, "running") == 0)
            sum.flags |= RD_EXEC_OVERLAP;
        alakai_rec_clear(&orec);
    }
    rix_upsert(env->ix, id, idlen, &sum);
    alakai_rec_clear(&rec);
}

/* A value's length as the server sent it (an over-cap string arrives empty: redis_reply.h). */
static size_t value_len(const redisReply *v)
{
    if (v->type != REDIS_REPLY_STRING)
        return 0;
    return v->len == 0 && v->integer > 0 ? (size_t)v->integer : v->len;
}

/* A hash of at most RS_MAX_FIELDS fields: numeric fields in order, non-numeric ones
 * noted; the newest record decoded unless over the cap, older ones only when all fit
 * RS_SWEEP_ALL_CAP. */
static void summary_from_hash(rs_job *j, const redisReply *r)
{
    const redisReply *vals[RS_MAX_FIELDS];
    size_t pairs = r->elements / 2, total = 0;
    j->nums = xrealloc(j->nums, (pairs + 1) * sizeof *j->nums);
    j->nf = 0;
    for (size_t i = 0; i < pairs; i++) {
        const redisReply *f = r->element[2 * i], *v = r->element[2 * i + 1];
        int n = f->type == REDIS_REPLY_STRING ? alakai_field_num(f->str, f->len) : -1;
        if (n <= 0) {
            job_bad_field(j, f->type == REDIS_REPLY_STRING ? f->str : "?");
            continue;
        }
        total += value_len(v);
        int k = j->nf++;             /* insertion sort: a handful of fields */
        while (k > 0 && j->nums[k - 1] > n) {
            j->nums[k] = j->nums[k - 1];
            vals[k] = vals[k - 1];
            k--;
        }
        j->nums[k] = n;
        vals[k] = v;
    }
    if (j->nf == 0)
        return;                      /* gone (empty), or no attempt field: job_result */
    const redisReply *newest = vals[j->nf - 1];
    if (value_len(newest) > RS_RECORD_CAP) {
        char msg[112];
        snprintf(msg, sizeof msg, "newest record is %zu bytes (over 1 MiB): not read",
                 value_len(newest));
        index_problem(j, RD_EXEC_OVERSIZED, msg);
    } else {
        size_t from = total <= RS_SWEEP_ALL_CAP ? 0 : (size_t)j->nf - 1;
        summary_from_values(j, vals + from, (size_t)j->nf - from);
    }
    j->handled = true;
}

/* A hash of more fields than a task has attempts: listed, never read. */
static void index_too_many(rs_job *j, long long fields)
{
    char msg[112];
    snprintf(msg, sizeof msg, "hash with %lld fields (more than %d): not read", fields, RS_MAX_FIELDS);
    index_problem(j, RD_EXEC_OVERSIZED, msg);
    j->handled = true;
}

/* A reply to cmd on a task's hash of the type wanted; else false with j->why (WRONGTYPE:
 * the key is listed as malformed). */
static bool hash_reply_is(rs_job *j, const redisReply *r, int type, const char *cmd)
{
    if (r->type == REDIS_REPLY_ERROR)
        snprintf(j->why, sizeof j->why, "not a hash (%.80s)", r->str);
    else if (r->type != type)
        snprintf(j->why, sizeof j->why, "unexpected reply to %s", cmd);
    return r->type == type;
}

/* HLEN (sweeps, notified keys): 0 the key is gone, past the cap listed, else HGETALL. */
static void on_sweep_hlen(struct redisAsyncContext *ac, void *reply, void *priv)
{
    rs_job *j = priv;
    rs_conn *conn = j->b->env->conn;
    rs_conn_reply_begin(conn);
    const redisReply *r = reply;
    if (!job_reply(j, r, "HLEN"))
        goto out;
    if (hash_reply_is(j, r, REDIS_REPLY_INTEGER, "HLEN") && r->integer > RS_MAX_FIELDS)
        index_too_many(j, r->integer);
    else if (r->type == REDIS_REPLY_INTEGER && r->integer > 0) {
        j->phase = JP_DATA;
        job_cmd2(j, on_all, "HGETALL", NULL);   /* not sent: the batch failed, job_done */
    }
    job_done(j);                             /* waits for the HGETALL when one was sent */
out:
    rs_conn_reply_end(conn);
}

/* HGETALL (sweeps, notified keys). */
static void on_all(struct redisAsyncContext *ac, void *reply, void *priv)
{
    rs_job *j = priv;
    rs_conn *conn = j->b->env->conn;
    rs_conn_reply_begin(conn);
    const redisReply *r = reply;
    if (!job_reply(j, r, "HGETALL"))
        goto out;
    if (hash_reply_is(j, r, REDIS_REPLY_ARRAY, "HGETALL")) {
        if (rs_reply_count(r) / 2 > RS_MAX_FIELDS)   /* grown since its HLEN: built in part */
            index_too_many(j, (long long)(rs_reply_count(r) / 2));
        else
            summary_from_hash(j, r);
    }
    job_done(j);
out:
    rs_conn_reply_end(conn);
}

static void on_data(struct redisAsyncContext *ac, void *reply, void *priv)
{
    rs_job *j = priv;
    rs_conn *conn = j->b->env->conn;
    rs_conn_reply_begin(conn);
    const redisReply *r = reply;
    if (!job_reply(j, r, "HMGET"))
        goto out;
    if (r->type == REDIS_REPLY_ARRAY) {
        j->handled = true;
        chain_from_reply(j, r);
    } else {
        snprintf(j->why, sizeof j->why, "unexpected reply to HMGET");
        j->nf = 0;
    }
    job_done(j);
out:
    rs_conn_reply_end(conn);
}

/* ---- job and batch completion ----------------------------------------------------- */

static void job_result(rs_job *j)
{
    bool chain = j->b->kind == RS_BATCH_CHAIN;
    char msg[160];
    if (j->nf > 0 && j->nfetch == 0 && j->sizes) {
        snprintf(msg, sizeof msg, "newest record is %lld bytes (over 1 MiB): not fetched",
                 j->sizes[j->nf - 1]);
        if (chain)
            chain_problem(j, msg, RD_EXEC_OVERSIZED);
        else
            index_problem(j, RD_EXEC_OVERSIZED, msg);
    } else if (j->why[0]) {
        if (chain)
            chain_problem(j, j->why, RD_EXEC_MALFORMED);
        else
            index_problem(j, RD_EXEC_MALFORMED, j->why);
    } else if (chain) {
        chain_problem(j, "no such task", 0);
    } else {
        index_remove(j);
    }
}

static void job_done(rs_job *j)
{
    if (j->phase == JP_DONE || j->pending > 0)
        return;
    j->phase = JP_DONE;
    if (!j->failed && !j->handled)
        job_result(j);
    rs_batch *b = j->b;
    if (--b->open == 0)
        batch_finish(b);
}

void rs_batch_run(rs_batch *b)
{
    if (b->njobs == 0) {
        batch_finish(b);
        return;
    }
    b->open++;                       /* hold: jobs may complete synchronously */
    for (size_t i = 0; i < b->njobs; i++) {
        if (b->kind == RS_BATCH_CHAIN)
            job_start(&b->jobs[i]);
        else
            job_fetch_all(&b->jobs[i]);
    }
    if (--b->open == 0)
        batch_finish(b);
}

static void batch_finish(rs_batch *b)
{
    if (b->kind == RS_BATCH_CHAIN && b->failed)
        chain_problem(&b->jobs[0], b->err, 0);
    b->done(b, b->ud);
    batch_free(b);
}
