/*
 * The read-only fetch script: the steady-state path for sweeps and notified keys
 * (redis_fetch.c runs a batch through here unless it is a chain or the server refused
 * the script before).
 *
 * One script per group of up to RS_SCRIPT_KEYS keys (EVAL_RO, Redis 7), which runs one
 * HGETALL per key on the server and sends back, per key, [nfields, field, value | byte
 * length, ...]: a record above 1 MiB never leaves the server (its length comes instead),
 * older attempts come only when the hash is small (overlap check), and a reply stops at
 * RS_REPLY_BUDGET bytes of values (the keys it did not reach are sent again in a new
 * group). Commands per task: the HGETALL plus 1/RS_SCRIPT_KEYS EVAL_RO plus
 * 1/RS_SCAN_COUNT SCAN. A refusal switches the source to the per-key path for good
 * (s->no_script); the group's keys go there at once.
 */
#include "redis_priv.h"

#include <assert.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"
#include "../io/clock.h"
#include "redis_record.h"

/* KEYS: the task hashes; ARGV: record cap, all-attempts cap, field cap, reply budget.
 * Per key: [n] (gone: n = 0, or more than the field cap), [n, f, v|len, ...], or the
 * error text (not a hash). The common case, all values together within the all-attempts
 * cap, sends the hash as HGETALL returned it (one pass over it, no copy); the rest goes
 * through the per-field rules. NOPERM aborts the script: the caller falls back and reports
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
    "  local total=0\n"
    "  for j=2,#h,2 do total=total+#h[j] end\n"
    "  if total<=allcap then\n"
    "   if i>1 and used+total>budget then break end\n"
    "   used=used+total\n"
    "   table.insert(h,1,#h/2)\n"
    "   out[i]=h\n"
    "  else\n"
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
    "  end\n"
    " end\n"
    "end\n"
    "return out\n";

typedef struct rs_group {          /* one EVAL_RO: jobs [first, first + n) of a batch */
    rs_batch *b;
    size_t first, n;
} rs_group;

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
            rs_job_bad_field(j, f->type == REDIS_REPLY_STRING ? f->str : "?");
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
        rs_index_problem(j, RD_EXEC_OVERSIZED, msg);
        j->handled = true;
    } else if (newest) {
        rs_summary_from_values(j, vals, (size_t)j->nf);
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
    double t0 = clock_cpu();
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
            rs_job_start(&b->jobs[g->first + i]);
        g->n = 0;
    } else {
        done = r->elements < g->n ? r->elements : g->n;
        for (size_t i = 0; i < done; i++)
            job_from_script(&b->jobs[g->first + i], r->element[i]);
    }
    size_t rest_first = g->first + done, rest = g->n - done;
    b->open++;                       /* hold: rs_job_done may finish the batch */
    for (size_t i = 0; i < done; i++) {
        rs_job *j = &b->jobs[g->first + i];
        if (!j->failed)
            j->phase = JP_DATA;
        rs_job_done(j);
    }
    if (rest > 0 && !b->failed)      /* the reply budget ran out: ask again for the rest */
        rs_script_send(b, rest_first, rest);
    else
        for (size_t i = 0; i < rest; i++) {
            b->jobs[rest_first + i].failed = true;
            rs_job_done(&b->jobs[rest_first + i]);
        }
    free(g);
    double dt = clock_cpu() - t0;
    if (dt > s->cb_max)
        s->cb_max = dt;
    if (--b->open == 0)
        rs_batch_finish(b);
    rs_reply_end(s);
}

void rs_script_send(rs_batch *b, size_t first, size_t n)
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
            rs_job_done(&b->jobs[first + i]);
        }
    }
}
