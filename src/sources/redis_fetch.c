/*
 * Per-task fetches for the Alakai store; redis_sweep.c decides which keys (a SCAN step,
 * the notified keys, one chain) and hands them over as a batch.
 *
 * Sweeps and notified keys (steady state): one read-only script per group of up to
 * RS_SCRIPT_KEYS keys (EVAL_RO, Redis 7), which runs one HGETALL per key on the server
 * and sends back, per key, [nfields, field, value | byte length, ...]: a record above
 * 1 MiB never leaves the server (its length comes instead), older attempts come only when
 * the hash is small (overlap check), and a reply stops at RS_REPLY_BUDGET bytes of values
 * (the keys it did not reach are sent again in a new group). Commands per task: the HGETALL
 * plus 1/RS_SCRIPT_KEYS EVAL_RO plus 1/RS_SCAN_COUNT SCAN.
 *
 * Fallback, per key (chains always; sweeps when the server refuses EVAL_RO: an ACL without
 * it, Redis < 7, scripting disabled), all keys of a batch pipelined, a round trip a phase:
 *   HLEN key                      → N attempt fields (0: gone; > cap: flagged)
 *   MEMORY USAGE key              → size estimate, except for chains and where the server
 *                                   refuses MEMORY (then sizes come from HSTRLEN alone)
 *   HSTRLEN key 1..N              → sizes, assuming fields "1".."N" (the normal layout);
 *                                   a missing one switches to HKEYS + HSTRLEN (slow path)
 *   HMGET key newest | all        → records; newest > 1 MiB is never fetched (oversized);
 *                                   all attempts only when N > 1 and small (overlap check)
 * Replies on one connection arrive in order, so a job's replies are matched by count.
 */
#include "redis_priv.h"

#include <assert.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fingerprint.h"
#include "../core/retry.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "redis_record.h"

typedef enum { JP_HLEN, JP_STRLEN, JP_HKEYS, JP_DATA, JP_DONE } rs_phase;

typedef struct rs_job {
    rs_batch *b;
    char *key;
    size_t keylen;
    rs_phase phase;
    int pending, got;
    bool failed, slow;
    int nf;                          /* numeric attempt fields */
    int *nums;                       /* ascending */
    long long *sizes;
    int *fetch;                      /* indices into nums fetched by HMGET */
    int nfetch;
    bool handled;                    /* result already applied by on_data */
    bool probing;                    /* HLEN + MEMORY USAGE sent together */
    long long hlen;                  /* HLEN result, -1 unreadable */
    long long mem;                   /* MEMORY USAGE bytes, -1 unknown */
    char why[112];                   /* layout problem (non-numeric field, ...) */
} rs_job;

struct rs_batch {
    rs_src *s;
    rs_batch_kind kind;
    size_t njobs, open;
    bool failed;
    char err[160];
    rs_job jobs[];
};

typedef void rs_cb(struct redisAsyncContext *, void *, void *);
static rs_cb on_hlen, on_memusage, on_strlen, on_hkeys, on_data, on_all;
static void job_done(rs_job *j);
static void batch_finish(rs_batch *b);

const char *rs_task_id(const rs_src *s, const char *key, size_t len, size_t *idlen)
{
    size_t pl = strlen(s->prefix);
    if (len <= pl + 1 || memcmp(key, s->prefix, pl) != 0 || key[pl] != ':')
        return NULL;
    *idlen = len - pl - 1;
    return *idlen <= 255 ? key + pl + 1 : NULL;
}

rs_batch *rs_batch_new(rs_src *s, rs_batch_kind kind, size_t n)
{
    rs_batch *b = xcalloc(1, sizeof *b + n * sizeof(rs_job));
    b->s = s;
    b->kind = kind;
    return b;
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
    if (!rs_command(j->b->s, cb, j, argc, argv, lens)) {
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
                rs_error_text(b->s, cmd, r->str, b->err, sizeof b->err);
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

/* HLEN, and for sweeps MEMORY USAGE in the same round trip: a small hash of a few
 * attempts (the common case) is then read whole with one HGETALL, bounded by the
 * reported size; anything else takes the HSTRLEN path. */
static void job_start(rs_job *j)
{
    j->phase = JP_HLEN;
    j->hlen = j->mem = -1;
    j->probing = j->b->kind != RS_BATCH_CHAIN && !j->b->s->no_memusage;
    if (!job_cmd2(j, on_hlen, "HLEN", NULL)) {
        job_done(j);
        return;
    }
    if (j->probing) {
        const char *argv[3] = { "MEMORY", "USAGE", j->key };
        size_t lens[3] = { 6, 5, j->keylen };
        if (!job_send(j, on_memusage, 3, argv, lens))
            j->probing = false;
    }
}

/* ---- results ---------------------------------------------------------------------- */

static void index_problem(rs_job *j, unsigned flags, const char *why)
{
    rs_src *s = j->b->s;
    size_t idlen;
    const char *id = rs_task_id(s, j->key, j->keylen, &idlen);
    if (!id)
        return;
    rix_sum sum = { .status = "unknown", .flags = flags, .error = why,
                    .attempt = j->nf > 0 ? j->nums[j->nf - 1] : 0, .nfields = j->nf };
    rix_upsert(s->ix, id, idlen, &sum);
}

static void index_remove(rs_job *j)
{
    rs_src *s = j->b->s;
    size_t idlen;
    const char *id = rs_task_id(s, j->key, j->keylen, &idlen);
    if (id)
        rix_remove(s->ix, id, idlen);
}

static char *job_task_id(const rs_job *j)
{
    size_t idlen;
    const char *id = rs_task_id(j->b->s, j->key, j->keylen, &idlen);
    return id ? xstrndup(id, idlen) : xstrdup(j->key);
}

static void chain_problem(rs_job *j, const char *why, unsigned flags)
{
    rs_src *s = j->b->s;
    rd_execution *e = xcalloc(1, sizeof *e);
    e->id = job_task_id(j);
    e->status = xstrdup(flags || j->failed ? "unknown" : "missing");
    e->error = xstrdup(why);
    e->attempt = -1;
    e->max_attempts = -1;
    e->flags = flags;
    if (j->nf > 0)
        e->attempt = j->nums[j->nf - 1];
    model_set_chain(s->base.ctx.model, e->id, e, 1);
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

static void after_probe(rs_job *j)
{
    int cap = j->b->kind == RS_BATCH_CHAIN ? RS_CHAIN_MAX_FIELDS : RS_MAX_FIELDS;
    if (j->why[0] || j->hlen == 0) {
        job_done(j);
        return;
    }
    if (j->hlen > cap) {
        snprintf(j->why, sizeof j->why, "%lld attempt fields (more than %d)", j->hlen, cap);
        job_done(j);
        return;
    }
    j->nf = (int)j->hlen;
    j->nums = xcalloc((size_t)j->nf, sizeof *j->nums);
    for (int i = 0; i < j->nf; i++)
        j->nums[i] = i + 1;
    if (j->b->kind == RS_BATCH_CHAIN) {
        j->slow = true;
        j->phase = JP_HKEYS;
        if (!job_cmd2(j, on_hkeys, "HKEYS", NULL))
            job_done(j);
    } else if (j->mem >= 0 && j->nf <= RS_PROBE_FIELDS && j->mem <= RS_SWEEP_ALL_CAP) {
        j->phase = JP_DATA;          /* MEMORY USAGE samples all of <= 5 fields: bounded */
        if (!job_cmd2(j, on_all, "HGETALL", NULL))
            job_done(j);
    } else {
        send_strlens(j);
    }
}

static void on_hlen(struct redisAsyncContext *ac, void *reply, void *priv)
{
    rs_job *j = priv;
    rs_src *s = j->b->s;
    rs_reply_begin(s);
    const redisReply *r = reply;
    if (!job_reply(j, r, "HLEN"))
        goto out;
    if (r->type == REDIS_REPLY_INTEGER)
        j->hlen = r->integer;
    else
        snprintf(j->why, sizeof j->why, "not a hash (%.80s)",
                 r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
    if (!j->probing)
        after_probe(j);              /* else wait for MEMORY USAGE (next reply) */
out:
    rs_reply_end(s);
}

static void on_memusage(struct redisAsyncContext *ac, void *reply, void *priv)
{
    rs_job *j = priv;
    rs_src *s = j->b->s;
    rs_reply_begin(s);
    const redisReply *r = reply;
    if (!job_reply(j, r, NULL))
        goto out;
    if (r->type == REDIS_REPLY_INTEGER)
        j->mem = r->integer;
    else if (r->type == REDIS_REPLY_ERROR)
        s->no_memusage = true;       /* not allowed (ACL) or renamed: HSTRLEN from now on */
    after_probe(j);
out:
    rs_reply_end(s);
}

/* "non-numeric attempt fields: 'latest', '-1'" (as many as fit). */
static void note_bad_field(rs_job *j, const char *name)
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
    rs_src *s = j->b->s;
    rs_reply_begin(s);
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
                note_bad_field(j, e->str);
        }
    }
    qsort(j->nums, (size_t)j->nf, sizeof *j->nums, cmp_int);
    if (j->nf > 0)
        send_strlens(j);
    else
        job_done(j);
out:
    rs_reply_end(s);
}

/* Which fields to fetch: newest (unless oversized), or all when worth it. */
static void plan_fetch(rs_job *j)
{
    long long total = 0;
    bool all_ok = true;
    for (int i = 0; i < j->nf; i++) {
        total += j->sizes[i];
        all_ok = all_ok && j->sizes[i] <= RS_RECORD_CAP;
    }
    j->fetch = xcalloc((size_t)j->nf, sizeof *j->fetch);
    j->nfetch = 0;
    if (j->b->kind == RS_BATCH_CHAIN) {
        for (int i = 0; i < j->nf; i++)
            if (j->sizes[i] > 0 && j->sizes[i] <= RS_RECORD_CAP)
                j->fetch[j->nfetch++] = i;
    } else if (j->sizes[j->nf - 1] > RS_RECORD_CAP) {
        /* newest oversized: nothing fetched */
    } else if (j->nf > 1 && all_ok && total <= RS_SWEEP_ALL_CAP) {
        for (int i = 0; i < j->nf; i++)
            j->fetch[j->nfetch++] = i;
    } else {
        j->fetch[j->nfetch++] = j->nf - 1;
    }
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
    rs_src *s = j->b->s;
    rs_reply_begin(s);
    const redisReply *r = reply;
    if (!job_reply(j, r, "HSTRLEN"))
        goto out;
    int i = j->got++;
    if (i < j->nf)
        j->sizes[i] = r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
    if (j->pending > 0)
        goto out;
    bool gap = false;
    for (int k = 0; k < j->nf; k++)
        gap = gap || j->sizes[k] <= 0;
    if (gap && !j->slow) {
        j->slow = true;              /* fields are not exactly "1".."N" */
        j->phase = JP_HKEYS;
        if (!job_cmd2(j, on_hkeys, "HKEYS", NULL))
            job_done(j);
    } else {
        send_fetch(j);
    }
out:
    rs_reply_end(s);
}

/* ---- records ---------------------------------------------------------------------- */

static int max_attempts(const rs_src *s)
{
    int m = s->base.ctx.cfg->max_retries;
    return m >= 0 ? m + 1 : -1;
}

static void exec_from_rec(const rs_src *s, rd_execution *e, const char *id,
                          const rd_alakai_rec *rec, bool ok, int attempt, int newest)
{
    const rd_system_cfg *cfg = s->base.ctx.cfg;
    e->id = xstrdup(id);
    e->name = xstrdup(rec->name);
    e->status = xstrdup(ok && rec->status[0] ? rec->status : "unknown");
    e->attempt = attempt;
    e->max_attempts = max_attempts(s);
    e->reason = rec->code[0] ? xstrdup(rec->code) : NULL;
    e->error = xstrdup(ok ? rec->error : rec->why);
    e->fingerprint = e->error ? fingerprint_dup(e->error) : NULL;
    e->created_at = rec->dispatched_at;
    e->finished_at = rec->resolved_at;
    e->updated_at = rec->resolved_at > 0 ? rec->resolved_at : rec->dispatched_at;
    e->flags = ok ? 0 : RD_EXEC_MALFORMED;
    if (attempt == newest) {
        e->elig = retry_alakai(e->status, attempt, cfg->max_retries);
        if (strcmp(e->status, "running") == 0 && rec->dispatched_at > 0 &&
            rs_now() - rec->dispatched_at > cfg->orphan_after_s)
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
    rs_src *s = j->b->s;
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
            exec_from_rec(s, e, id, &rec, ok, j->nums[i], newest);
            alakai_rec_clear(&rec);
            k++;
        } else {
            rd_alakai_rec rec = { .attempt = j->nums[i] };
            snprintf(rec.why, sizeof rec.why, "record is %lld bytes: not fetched",
                     j->sizes[i]);
            exec_from_rec(s, e, id, &rec, false, j->nums[i], newest);
            e->flags = (e->flags & ~(unsigned)RD_EXEC_MALFORMED) | RD_EXEC_OVERSIZED;
        }
    }
    mark_overlaps(items, (size_t)j->nf);
    model_set_chain(s->base.ctx.model, id, items, (size_t)j->nf);
    free(id);
}

/* vals: the fetched records, oldest first, the newest last. */
static void summary_from_values(rs_job *j, const redisReply *const *vals, size_t n)
{
    rs_src *s = j->b->s;
    size_t idlen;
    const char *id = rs_task_id(s, j->key, j->keylen, &idlen);
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
        if (o->type == REDIS_REPLY_STRING && alakai_rec_decode(o->str, o->len, &orec) &&
            strcmp(orec.status, "running") == 0)
            sum.flags |= RD_EXEC_OVERLAP;
        if (o->type == REDIS_REPLY_STRING)
            alakai_rec_clear(&orec);
    }
    rix_upsert(s->ix, id, idlen, &sum);
    alakai_rec_clear(&rec);
}

/* HGETALL: numeric fields in order, non-numeric ones noted. */
static void on_all(struct redisAsyncContext *ac, void *reply, void *priv)
{
    rs_job *j = priv;
    rs_src *s = j->b->s;
    rs_reply_begin(s);
    const redisReply *r = reply;
    if (!job_reply(j, r, "HGETALL"))
        goto out;
    j->nf = 0;
    size_t pairs = r->type == REDIS_REPLY_ARRAY ? r->elements / 2 : 0;
    const redisReply **vals = xcalloc(pairs + 1, sizeof *vals);
    j->nums = xrealloc(j->nums, (pairs + 1) * sizeof *j->nums);
    for (size_t i = 0; i < pairs; i++) {
        const redisReply *f = r->element[2 * i], *v = r->element[2 * i + 1];
        int n = f->type == REDIS_REPLY_STRING ? alakai_field_num(f->str, f->len) : -1;
        if (n <= 0) {
            note_bad_field(j, f->type == REDIS_REPLY_STRING ? f->str : "?");
            continue;
        }
        int k = j->nf++;             /* insertion sort: a handful of fields */
        while (k > 0 && j->nums[k - 1] > n) {
            j->nums[k] = j->nums[k - 1];
            vals[k] = vals[k - 1];
            k--;
        }
        j->nums[k] = n;
        vals[k] = v;
    }
    if (j->nf > 0) {
        j->handled = true;
        summary_from_values(j, vals, (size_t)j->nf);
    }
    free(vals);
    job_done(j);
out:
    rs_reply_end(s);
}

static void on_data(struct redisAsyncContext *ac, void *reply, void *priv)
{
    rs_job *j = priv;
    rs_src *s = j->b->s;
    rs_reply_begin(s);
    const redisReply *r = reply;
    if (!job_reply(j, r, "HMGET"))
        goto out;
    if (r->type == REDIS_REPLY_ARRAY) {
        j->handled = true;
        if (j->b->kind == RS_BATCH_CHAIN)
            chain_from_reply(j, r);
        else
            summary_from_values(j, (const redisReply *const *)r->element, r->elements);
    } else {
        snprintf(j->why, sizeof j->why, "unexpected reply to HMGET");
        j->nf = 0;
    }
    job_done(j);
out:
    rs_reply_end(s);
}

/* ---- the batch script (sweeps and notified keys) ------------------------------------- */

/* KEYS: the task hashes; ARGV: record cap, all-attempts cap, field cap, reply budget.
 * Per key: [n] (gone: n = 0, or more than the field cap), [n, f, v|len, ...], or the
 * error text (not a hash). NOPERM aborts the script: the caller falls back and reports
 * the refusal as the per-key path does. Read-only: runs on replicas, needs +eval_ro. */
static const char fetch_script[] =
    "local cap,allcap,maxf,budget=tonumber(ARGV[1]),tonumber(ARGV[2]),"
    "tonumber(ARGV[3]),tonumber(ARGV[4])\n"
    "local out,used={},0\n"
    "for i=1,#KEYS do\n"
    " local h=redis.pcall('HGETALL',KEYS[i])\n"
    " if type(h)=='table' and h.err then\n"
    "  if string.sub(h.err,1,6)=='NOPERM' then return h end\n"
    "  out[i]=h.err\n"
    " elseif #h/2>maxf then out[i]={#h/2}\n"
    " else\n"
    "  local nums,newest,total={},0,0\n"
    "  for j=1,#h,2 do\n"
    "   local f=h[j]\n"
    "   local n=(#f<=6 and string.match(f,'^[1-9]%d*$')) and tonumber(f) or 0\n"
    "   nums[j]=n\n"
    "   if n>0 then total=total+#h[j+1]; if n>newest then newest=n end end\n"
    "  end\n"
    "  local r,size={#h/2},0\n"
    "  for j=1,#h,2 do\n"
    "   local v=h[j+1]\n"
    "   local keep=nums[j]>0 and #v<=cap and (nums[j]==newest or total<=allcap)\n"
    "   r[#r+1]=h[j]\n"
    "   if keep then r[#r+1]=v; size=size+#v else r[#r+1]=#v end\n"
    "  end\n"
    "  if i>1 and used+size>budget then break end\n"
    "  used=used+size\n"
    "  out[i]=r\n"
    " end\n"
    "end\n"
    "return out\n";

typedef struct rs_group {          /* one EVAL_RO: jobs [first, first + n) of a batch */
    rs_batch *b;
    size_t first, n;
} rs_group;

static void job_start(rs_job *j);
static void group_send(rs_batch *b, size_t first, size_t n);

/* One key's answer from the script (e: an element of its reply). */
static void job_from_script(rs_job *j, const redisReply *e)
{
    if (e->type == REDIS_REPLY_STRING || e->type == REDIS_REPLY_ERROR) {
        snprintf(j->why, sizeof j->why, "not a hash (%.80s)", e->str);
        return;
    }
    if (e->type != REDIS_REPLY_ARRAY || e->elements == 0 ||
        e->element[0]->type != REDIS_REPLY_INTEGER) {
        snprintf(j->why, sizeof j->why, "unexpected reply to the fetch script");
        return;
    }
    long long n = e->element[0]->integer;
    if (n > RS_MAX_FIELDS) {
        snprintf(j->why, sizeof j->why, "%lld attempt fields (more than %d)", n,
                 RS_MAX_FIELDS);
        return;
    }
    size_t pairs = (e->elements - 1) / 2;
    const redisReply **vals = xcalloc(pairs + 1, sizeof *vals);
    j->nums = xcalloc(pairs + 1, sizeof *j->nums);
    j->nf = 0;
    for (size_t i = 0; i < pairs; i++) {
        const redisReply *f = e->element[1 + 2 * i], *v = e->element[2 + 2 * i];
        int num = f->type == REDIS_REPLY_STRING ? alakai_field_num(f->str, f->len) : -1;
        if (num <= 0) {
            note_bad_field(j, f->type == REDIS_REPLY_STRING ? f->str : "?");
            continue;
        }
        int k = j->nf++;             /* insertion sort: a handful of fields */
        while (k > 0 && j->nums[k - 1] > num) {
            j->nums[k] = j->nums[k - 1];
            vals[k] = vals[k - 1];
            k--;
        }
        j->nums[k] = num;
        vals[k] = v;
    }
    const redisReply *newest = j->nf > 0 ? vals[j->nf - 1] : NULL;
    if (newest && newest->type == REDIS_REPLY_INTEGER) {
        char msg[112];
        snprintf(msg, sizeof msg, "newest record is %lld bytes (over 1 MiB): not fetched",
                 newest->integer);
        index_problem(j, RD_EXEC_OVERSIZED, msg);
        j->handled = true;
    } else if (newest) {
        summary_from_values(j, vals, (size_t)j->nf);
        j->handled = true;
    }
    free(vals);
}

static void on_script(struct redisAsyncContext *ac, void *reply, void *priv)
{
    rs_group *g = priv;
    rs_batch *b = g->b;
    rs_src *s = b->s;
    rs_reply_begin(s);
    double t0 = clock_mono();
    const redisReply *r = reply;
    size_t done = 0;
    if (!r) {
        if (!b->failed) {
            b->failed = true;
            snprintf(b->err, sizeof b->err, "redis connection lost");
        }
        for (size_t i = 0; i < g->n; i++)
            b->jobs[g->first + i].failed = true;
        done = g->n;
    } else if (r->type != REDIS_REPLY_ARRAY) {
        /* refused (ACL without EVAL_RO, Redis < 7, scripting off, NOPERM on a key):
         * this group and every later one take the per-key path */
        if (!s->no_script && getenv("RD_REDIS_DEBUG"))
            fprintf(stderr, "redis: fetch script refused, per-key fetches from now on\n");
        s->no_script = true;
        for (size_t i = 0; i < g->n; i++)
            job_start(&b->jobs[g->first + i]);
        g->n = 0;
    } else {
        done = r->elements < g->n ? r->elements : g->n;
        for (size_t i = 0; i < done; i++)
            job_from_script(&b->jobs[g->first + i], r->element[i]);
    }
    size_t rest_first = g->first + done, rest = g->n - done;
    b->open++;                       /* hold: job_done may finish the batch */
    for (size_t i = 0; i < done; i++) {
        rs_job *j = &b->jobs[g->first + i];
        if (!j->failed)
            j->phase = JP_DATA;
        job_done(j);
    }
    if (rest > 0 && !b->failed)      /* the reply budget ran out: ask again for the rest */
        group_send(b, rest_first, rest);
    else
        for (size_t i = 0; i < rest; i++) {
            b->jobs[rest_first + i].failed = true;
            job_done(&b->jobs[rest_first + i]);
        }
    free(g);
    double dt = clock_mono() - t0;
    if (dt > s->cb_max)
        s->cb_max = dt;
    if (--b->open == 0)
        batch_finish(b);
    rs_reply_end(s);
}

static void group_send(rs_batch *b, size_t first, size_t n)
{
    enum { FIXED = 3, TAIL = 4 };
    char nk[24], argbuf[TAIL][24];
    const char *argv[FIXED + RS_SCRIPT_KEYS + TAIL];
    size_t lens[FIXED + RS_SCRIPT_KEYS + TAIL];
    assert(n > 0 && n <= RS_SCRIPT_KEYS);
    snprintf(nk, sizeof nk, "%zu", n);
    argv[0] = "EVAL_RO"; lens[0] = 7;
    argv[1] = fetch_script; lens[1] = sizeof fetch_script - 1;
    argv[2] = nk; lens[2] = strlen(nk);
    for (size_t i = 0; i < n; i++) {
        argv[FIXED + i] = b->jobs[first + i].key;
        lens[FIXED + i] = b->jobs[first + i].keylen;
    }
    const long long tail[TAIL] = { RS_RECORD_CAP, RS_SWEEP_ALL_CAP, RS_MAX_FIELDS,
                                   RS_REPLY_BUDGET };
    for (int i = 0; i < TAIL; i++) {
        snprintf(argbuf[i], sizeof argbuf[i], "%lld", tail[i]);
        argv[FIXED + n + (size_t)i] = argbuf[i];
        lens[FIXED + n + (size_t)i] = strlen(argbuf[i]);
    }
    rs_group *g = xcalloc(1, sizeof *g);
    *g = (rs_group){ .b = b, .first = first, .n = n };
    if (!rs_command(b->s, on_script, g, (int)(FIXED + n + TAIL), argv, lens)) {
        free(g);
        if (!b->failed) {
            b->failed = true;
            snprintf(b->err, sizeof b->err, "redis connection lost");
        }
        for (size_t i = 0; i < n; i++) {
            b->jobs[first + i].failed = true;
            job_done(&b->jobs[first + i]);
        }
    }
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
    bool script = b->kind != RS_BATCH_CHAIN && !b->s->no_script;
    for (size_t i = 0; i < b->njobs; i += script ? RS_SCRIPT_KEYS : 1) {
        if (script) {
            size_t n = b->njobs - i < RS_SCRIPT_KEYS ? b->njobs - i : RS_SCRIPT_KEYS;
            group_send(b, i, n);
        } else {
            job_start(&b->jobs[i]);
        }
    }
    if (--b->open == 0)
        batch_finish(b);
}

static void sweep_finish(rs_src *s)
{
    s->sweeping = false;
    size_t removed = rix_sweep_end(s->ix);
    double now = rs_now();
    s->sweep_secs = now - s->sweep_started;
    s->sweep_last = now;
    s->swept_once = true;
    s->settled = true;
    if (getenv("RD_REDIS_DEBUG"))
        fprintf(stderr, "redis: sweep %u keys, %zu tasks, %zu removed, %.3f s, "
                "longest fetch callback %.2f ms\n", s->sweep_keys, rix_size(s->ix), removed,
                s->sweep_secs, s->cb_max * 1e3);
    model_source_ok(s->base.ctx.model, "redis", now);
    rs_publish(s, true);
}

static void batch_finish(rs_batch *b)
{
    rs_src *s = b->s;
    switch (b->kind) {
    case RS_BATCH_SWEEP:
        s->batches--;
        if (b->failed || !s->sweeping) {
            if (s->sweeping)
                rs_fail(s, b->err);
            s->sweeping = false;
        } else if (s->cursor_done && s->batches == 0 && !s->scan_inflight) {
            sweep_finish(s);
        } else {
            rs_sweep_continue(s);
        }
        break;
    case RS_BATCH_DIRTY:
        s->batches--;
        if (b->failed)
            rs_fail(s, b->err);
        else
            rs_publish(s, false);
        break;
    case RS_BATCH_CHAIN:
        s->chain_busy = false;
        if (b->failed)
            chain_problem(&b->jobs[0], b->err, 0);
        if (s->base.ctx.on_change)
            s->base.ctx.on_change(s->base.ctx.ud);
        rs_chain_fetch(s);           /* a newer request may be waiting */
        break;
    }
    batch_free(b);
}
