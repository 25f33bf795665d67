#pragma once
/*
 * Private to pg_conn.c and pg_conn_hosts.c: the connection's state, and the functions
 * pg_conn.c calls in pg_conn_hosts.c. pg_conn.c holds the connection's life and its I/O
 * (the name lookups' answers, leaving out a host that is silent); pg_conn_hosts.c what libpq
 * is asked to connect to: the host list, its name lookups started (io/resolve.h, never
 * getaddrinfo on the loop), the parameters. The file reads downward: pg_conn_hosts.c calls
 * nothing of pg_conn.c (tests/house/layering.py checks it).
 */
#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "../io/resolve.h"
#include "../io/loop.h"
#include "pg_conn.h"

enum { ERR_CAP = 4096, MAX_HOSTS = 16, MAX_PARAMS = 8 };

typedef enum { C_CLOSED, C_RESOLVING, C_CONNECTING, C_READY, C_BUSY } conn_state;

typedef struct pg_lookup {       /* one host of the list being looked up */
    pg_conn *c;
    size_t idx;
    rd_lookup *l;                /* NULL once answered or cancelled */
} pg_lookup;

struct pg_conn {
    rd_loop *base;
    char *conninfo;
    bool conninfo_secret;        /* from a secret reference: never quoted in errors */
    char *pkw[MAX_PARAMS], *pval[MAX_PARAMS];   /* pg_conn_set_param; values wiped */
    size_t n_params;
    pg_conn_cbs cbs;
    conn_state state;
    PGconn *pg;
    rd_event *io;
    int io_fd;
    short io_what;
    rd_event *deadline;
    double deadline_s;
    rd_resolver *dns;            /* created at the first host name */
    /* resolution of the host list */
    char *hosts[MAX_HOSTS];
    char *addrs[MAX_HOSTS];      /* resolved IP, or NULL (literal / unix socket) */
    char *ports[MAX_HOSTS];      /* each host's port as written, NULL = libpq's default */
    pg_lookup look[MAX_HOSTS];
    size_t n_hosts, dns_pending;
    bool dead[MAX_HOSTS];        /* the lookup failed or the host never answered: left out
                                  * of the list libpq gets (for this connect) */
    size_t n_dead;
    double host_deadline_s;      /* each host of a list gets this long to answer */
    char trying[300];            /* "host|port" libpq is connecting to now */
    /* batch in flight */
    PGresult **res;
    size_t n, got;                  /* queries in the batch; syncs answered */
    size_t n_sync, cur;             /* syncs sent; the query whose results come now */
    bool cur_has;                   /* cur has given a result */
    bool *no_sync;                  /* [n]: query i shares the next one's sync */
    int nulls;
    char err[ERR_CAP];
};

static inline void pgc_arm_deadline(pg_conn *c, double s)
{
    c->deadline_s = s;
    loop_timer_in(c->deadline, s);
}

/* pg_conn.c */
void pgc_fail(pg_conn *c, const char *msg);          /* closes; calls cbs.failed */
bool pgc_watch(pg_conn *c, short what);

/* pg_conn_hosts.c: the lowest file of the connection (it calls nothing of pg_conn.c) */
void pgc_set_err(pg_conn *c, const char *msg);
int pgc_count_list(const char *v);                   /* entries of "a,b,c" */
void pgc_hosts_clear(pg_conn *c);
/* The host list from the conninfo (or PGHOST); true when a name needs a lookup. */
bool pgc_want_lookup(pg_conn *c);
/* Looks up every host name of the list; connects when the last one answers. */
bool pgc_start_lookup(pg_conn *c, void (*on_dns)(const char *ip, const char *why, void *ud));
/* PQconnectStartParams with the live hosts, the session options and the parameters
 * (the caller watches the socket). */
bool pgc_start_connect(pg_conn *c);
/* libpq moved on to the next host of the list: that host gets its own deadline. */
void pgc_host_changed(pg_conn *c);

