/*
 * The sweep's cost to the Redis server (redis_cost.h): our commands counted, the server's
 * figures read, the cost per command type calibrated from them.
 */
#include "redis_cost.h"

#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"

/* Before the first window: per call, in s of server CPU (Redis 7, ~500-byte records,
 * SCAN COUNT 250 with MATCH; bench_redis's figures, with the server's I/O around them). */
static const double DEFAULT_COST[RS_CMD_N] = { 150e-6, 2.5e-6, 40e-6, 1e-6 };
static const char *const CMD_NAME[RS_CMD_N] = { "scan", "hgetall", "info", "hlen" };

struct rs_cost {
    rs_conn *conn;
    rs_cost_fn *fn;
    void *ud;
    double per_call[RS_CMD_N];      /* s of server CPU per call, with the I/O ratio */
    double sent[RS_CMD_N];          /* our calls so far */
    double charged;                 /* their estimated cost so far (s) */
    double sent_at_read[RS_CMD_N];  /* ... when the reading under way was sent */
    double charged_at_read;
    rs_cost_sample base;            /* the last reading */
    double sent_base[RS_CMD_N];     /* our calls when it was sent */
    double charged_base;
    bool have_base, measured;
    int reading;                    /* replies of the reading under way still to come */
    bool failed;                    /* this reading: an error or a NULL reply */
    char *stats;                    /* the INFO commandstats text, until INFO cpu */
};

/* "cmdstat_hgetall:calls=3,usec=12,usec_per_call=4.00,..." lines. */
static void parse_stats(const char *t, rs_cost_sample *out, bool *any)
{
    for (const char *p = t; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (strncmp(p, "cmdstat_", 8) != 0)
            continue;
        const char *name = p + 8, *colon = strchr(name, ':');
        const char *calls = colon ? strstr(colon, "calls=") : NULL;
        const char *usec = colon ? strstr(colon, ",usec=") : NULL;
        const char *eol = strchr(p, '\n');
        if (!calls || !usec || (eol && (calls > eol || usec > eol)))
            continue;
        double c = strtod(calls + 6, NULL), u = strtod(usec + 6, NULL);
        out->usec_all += u;
        *any = true;
        for (int k = 0; k < RS_CMD_N; k++)
            if ((size_t)(colon - name) == strlen(CMD_NAME[k]) &&
                strncmp(name, CMD_NAME[k], strlen(CMD_NAME[k])) == 0) {
                out->calls[k] = c;
                out->usec[k] = u;
            }
    }
}

static bool info_num(const char *t, const char *key, double *out)
{
    size_t kl = strlen(key);
    for (const char *p = t; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, key, kl) == 0 && p[kl] == ':') {
            *out = strtod(p + kl + 1, NULL);
            return true;
        }
    return false;
}

bool rs_cost_parse(const char *commandstats, const char *cpu, rs_cost_sample *out)
{
    memset(out, 0, sizeof *out);
    bool any = false;
    if (commandstats)
        parse_stats(commandstats, out, &any);
    double user, sys;
    if (cpu && info_num(cpu, "used_cpu_user", &user) && info_num(cpu, "used_cpu_sys", &sys)) {
        out->cpu = user + sys;
        any = true;
    }
    return any;
}

/* A window ended: the cost per call of each type from its deltas, our calls' cost. */
static void window(rs_cost *c, const rs_cost_sample *now)
{
    const rs_cost_sample *b = &c->base;
    double dall = now->usec_all - b->usec_all, dcpu = (now->cpu - b->cpu) * 1e6;
    double ratio = dall > 0 && dcpu > 0 ? dcpu / dall : 0;
    if (ratio > 0) {
        /* below 1 when the server was preempted inside commands (their usec is wall
           time); the clamp only guards against a reading torn by a restart */
        ratio = ratio < 0.05 ? 0.05 : ratio > 20 ? 20 : ratio;
        for (int k = 0; k < RS_CMD_N; k++) {
            double dc = now->calls[k] - b->calls[k], du = now->usec[k] - b->usec[k];
            if (dc > 0 && du >= 0)
                c->per_call[k] = du / dc * ratio * 1e-6;
        }
        c->measured = true;
    }
    double cost = 0;
    for (int k = 0; k < RS_CMD_N; k++)
        cost += (c->sent_at_read[k] - c->sent_base[k]) * c->per_call[k];
    c->fn(cost - (c->charged_at_read - c->charged_base), c->ud);
}

static void reading_done(rs_cost *c, const char *cpu)
{
    rs_cost_sample s;
    bool ok = !c->failed && rs_cost_parse(c->stats, cpu, &s) && s.usec_all > 0 && s.cpu > 0;
    free(c->stats);
    c->stats = NULL;
    if (!ok) {
        c->have_base = false;        /* not allowed (ACL), or gone: the estimates stay */
        return;
    }
    if (c->have_base)
        window(c, &s);
    c->base = s;
    memcpy(c->sent_base, c->sent_at_read, sizeof c->sent_base);
    c->charged_base = c->charged_at_read;
    c->have_base = true;
}

static void on_info(struct redisAsyncContext *ac, void *reply, void *priv)
{
    (void)ac;
    rs_cost *c = priv;
    rs_conn_reply_begin(c->conn);
    const redisReply *r = reply;
    bool text = r && r->type == REDIS_REPLY_STRING;
    c->failed |= !text;
    if (--c->reading == 1 && text)
        c->stats = xstrdup(r->str);  /* commandstats: the cpu part comes next */
    else if (c->reading == 0)
        reading_done(c, text ? r->str : NULL);
    rs_conn_reply_end(c->conn);
}

double rs_cost_read(rs_cost *c)
{
    if (c->reading || !rs_conn_ready(c->conn))
        return 0;
    const char *stats[2] = { "INFO", "commandstats" }, *cpu[2] = { "INFO", "cpu" };
    memcpy(c->sent_at_read, c->sent, sizeof c->sent);
    c->charged_at_read = c->charged;
    c->failed = false;
    if (!rs_conn_command(c->conn, on_info, c, 2, stats, NULL))
        return 0;
    c->reading = 2;
    if (!rs_conn_command(c->conn, on_info, c, 2, cpu, NULL)) {
        c->reading = 1;              /* the first one's reply finishes it */
        c->failed = true;
        return rs_cost_send(c, RS_CMD_INFO, 1);
    }
    return rs_cost_send(c, RS_CMD_INFO, 2);
}

double rs_cost_send(rs_cost *c, rs_cmd cmd, unsigned n)
{
    double cost = c->per_call[cmd] * n;
    c->sent[cmd] += n;
    c->charged += cost;
    return cost;
}

bool rs_cost_measured(const rs_cost *c)
{
    return c->measured;
}

void rs_cost_forget(rs_cost *c)
{
    c->have_base = false;            /* replies in flight come back NULL: reading_done */
}

rs_cost *rs_cost_new(rs_conn *conn, rs_cost_fn *fn, void *ud)
{
    rs_cost *c = xcalloc(1, sizeof *c);
    c->conn = conn;
    c->fn = fn;
    c->ud = ud;
    memcpy(c->per_call, DEFAULT_COST, sizeof c->per_call);
    return c;
}

void rs_cost_free(rs_cost *c)
{
    free(c->stats);
    free(c);
}
