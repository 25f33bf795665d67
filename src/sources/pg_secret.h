#pragma once
/*
 * The secret references of a PostgreSQL source (io/secret.h), resolved on the loop before
 * every connect (a cmd: may hand out short-lived tokens): a `store = env:DATABASE_URL`
 * (the whole conninfo, credentials included) and `store_password`. The conninfo and the
 * password go straight into the pg_conn (the password as a keyword parameter, never into a
 * conninfo string); the resolved store value is kept (wiped when freed) only so that no
 * message quotes any part of it (pg_secrets_redact).
 */
#include <stddef.h>

#include "../core/config.h"
#include "../io/loop.h"
#include "pg_conn.h"

typedef struct pg_secrets pg_secrets;

/* err: NULL when every reference resolved, else "file:line: why" (no secret in it). */
typedef void (*pg_secrets_done)(const char *err, void *ud);

pg_secrets *pg_secrets_new(rd_loop *base, const rd_system_cfg *cfg, pg_conn *conn,
                           pg_secrets_done done, void *ud);
void pg_secrets_free(pg_secrets *sec);
/* Resolves the references into the connection; done() follows, at once when there are
 * none. Nothing happens while an earlier resolve is still under way (its done() follows). */
void pg_secrets_resolve(pg_secrets *sec);
/* msg with no part of a referenced store value in it (core/redact.h); a copy otherwise. */
void pg_secrets_redact(const pg_secrets *sec, const char *msg, char *out, size_t cap);
