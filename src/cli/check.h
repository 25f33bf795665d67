#pragma once
/*
 * `redrive check`'s report (cli/check_report.c): lines per system, each ok / warning /
 * failed with the fix, printed as text (✓ ! ✗, or ok warn FAIL in ASCII) or JSON.
 * Messages are raw (they quote servers' errors): ck_print sanitizes them.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "../session/session.h"

typedef enum { CK_OK, CK_WARN, CK_FAIL } ck_status;

typedef struct ck_line {
    ck_status st;
    char *what;                 /* "store", "identity", ... */
    char *msg;
    char *fix;                  /* NULL when none */
} ck_line;

typedef struct ck_report {
    char *system, *profile;     /* NULL for the lines about this process (dns) */
    ck_line *lines;
    size_t n, cap;
} ck_report;

typedef struct ck_list {
    ck_report global;           /* about this process, printed once */
    ck_report **items;          /* one per system */
    size_t n, cap;
} ck_list;

/* The new report stays valid until ck_list_free. */
ck_report *ck_list_add(ck_list *l, const char *system, const char *profile);
void ck_list_free(ck_list *l);

#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
void ck_add(ck_report *r, ck_status st, const char *what, const char *fix, const char *fmt, ...);

/* The store (PostgreSQL or Redis) as its source saw it: connection, server version, the
 * profile in use, read-only session, TLS, optional features. */
void ck_report_store(ck_report *r, const rd_system_cfg *cfg, const rd_profile *prof,
                     const rd_model *m);
/* The broker (RabbitMQ management API) and the worker /health probes, with the DLQ. */
void ck_report_broker(ck_report *r, const rd_system_cfg *cfg, const rd_profile *prof,
                      const rd_model *m);
/* Amazon SQS (sqs_queue_url): TLS, which credentials provider supplied the keys (never
 * a secret), the queues read. */
void ck_report_sqs(ck_report *r, const rd_system_cfg *cfg, const rd_model *m);
/* The core API: URL and TLS, auth mode, and who the core says we are (who: NULL when
 * not asked). */
void ck_report_core(ck_report *r, const rd_system_cfg *cfg, rd_actor *a,
                    const rd_whoami *who);

/* Prints the lines; returns RD_EXIT_OK, or RD_EXIT_PARTIAL when a check failed. */
int ck_print(const ck_list *l, bool json, bool ascii, const char *config_path, FILE *out);
