#pragma once
/*
 * What the sweep costs the Redis server (redis_cost.c), for `sweep_budget`: the sweep's
 * commands counted as they are sent, and the server's own figures read now and then on
 * the same connection (INFO commandstats, INFO cpu).
 *
 * commandstats counts every client's commands, so our share is not its delta: it gives,
 * per command type the sweep uses (SCAN, HLEN, HGETALL, INFO), the server-wide microseconds
 * per call over the window, and INFO cpu gives how much process CPU the server spent per
 * microsecond of command time (the reads, writes and event loop around the commands). The
 * sweep's cost over a window is then its own calls of each type × that type's cost per call
 * × that ratio: exact on a server that serves only us, an average when other clients run
 * the same kinds of commands. Before the first window, fixed estimates per call are used
 * (measured on Redis 7 with ~500-byte records).
 */
#include <stdbool.h>

#include "redis_conn.h"

typedef enum { RS_CMD_SCAN, RS_CMD_HGETALL, RS_CMD_INFO, RS_CMD_HLEN, RS_CMD_N } rs_cmd;

typedef struct rs_cost_sample {     /* one reading of INFO commandstats and INFO cpu */
    double calls[RS_CMD_N], usec[RS_CMD_N];
    double usec_all;                /* every command type's usec */
    double cpu;                     /* used_cpu_user + used_cpu_sys (s) */
} rs_cost_sample;

/* Reads the two INFO texts (either may be NULL: its part stays 0); false when neither
 * says anything we know. Pure. */
bool rs_cost_parse(const char *commandstats, const char *cpu, rs_cost_sample *out);

typedef struct rs_cost rs_cost;
/* A window ended: what our commands sent in it cost the server (s of CPU) minus what was
 * charged for them (rs_cost_send): the correction, either sign. */
typedef void rs_cost_fn(double correction, void *ud);

rs_cost *rs_cost_new(rs_conn *conn, rs_cost_fn *fn, void *ud);
void rs_cost_free(rs_cost *c);
/* Our commands, as sent: their estimated cost (s of server CPU), which is charged. */
double rs_cost_send(rs_cost *c, rs_cmd cmd, unsigned n);
/* Reads the server's figures (two INFO commands, charged) unless a reading is under way;
 * the first reading is the baseline, each later one ends a window. The charged cost. */
double rs_cost_read(rs_cost *c);
void rs_cost_forget(rs_cost *c);    /* the connection went: no baseline, no reading */
bool rs_cost_measured(const rs_cost *c);   /* a window has been measured */
