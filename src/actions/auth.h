#pragma once
/*
 * Credentials for the core API (SPEC §4), internal to the action layer.
 * Modes: none, bearer, token-command, jwt-login, api-key, dev-user. Credentials are
 * obtained asynchronously (secret references and commands through io/secret.h,
 * login/refresh over rd_http)
 * and cached: token-command until a 401 or the JWT exp; jwt-login refreshes before
 * expiry or after a 401 and logs in again when the refresh fails. Token buffers are
 * wiped on release. Nothing here ever prints a token.
 */
#include <stdbool.h>
#include <stddef.h>

#include "../core/config.h"
#include "../io/loop.h"

typedef struct rd_http rd_http;
typedef struct rd_auth rd_auth;

typedef enum {
    AUTH_NONE, AUTH_BEARER, AUTH_TOKEN_CMD, AUTH_JWT_LOGIN, AUTH_API_KEY, AUTH_DEV_USER,
    AUTH_INVALID
} rd_auth_mode;

typedef void (*rd_auth_cb)(bool ok, const char *why, void *ud);
typedef void (*rd_auth_prompt)(const char *prompt, void *ud);

rd_auth *auth_new(rd_loop *base, rd_http *http, const rd_system_cfg *cfg);
void auth_free(rd_auth *a);
rd_auth_mode auth_mode(const rd_auth *a);
/* Static checks of the configuration (mode known, secrets configured, dev-user only
 * on a loopback core of a local system). */
bool auth_check(const rd_auth *a, char *why, size_t whycap);
/* Credentials ready (or failed): cb runs later, from the loop, exactly once unless
 * auth_forget(ud) is called first. */
void auth_ensure(rd_auth *a, rd_auth_cb cb, void *ud);
void auth_forget(rd_auth *a, void *ud);
/* Counts the tokens installed that differed from the one before (0 = none yet): after
 * a 401 and auth_invalidate + auth_ensure, an unchanged serial means the same token came
 * back (a static bearer/api-key, a token command printing the same): do not re-send. */
unsigned long auth_serial(const rd_auth *a);
/* After a 401: drop cached credentials so the next auth_ensure obtains fresh ones. */
void auth_invalidate(rd_auth *a);
/* Appends the credential header lines ("Authorization: Bearer …") as allocated strings
 * (free with secret_free). Returns how many were added (≤ cap). */
size_t auth_headers(const rd_auth *a, char **hdrs, size_t cap);
const char *auth_identity(const rd_auth *a);
/* The core's HTTP status for the last login (jwt-login), 0 when none was answered. */
long auth_login_status(const rd_auth *a);
/* true while GET /auth/me is on its way (the identity may arrive). */
bool auth_identity_coming(const rd_auth *a);
/* A token is held now (whether it is still accepted is the core's to say). */
bool auth_has_token(const rd_auth *a);
void auth_set_prompt(rd_auth *a, rd_auth_prompt fn, void *ud);
/* Read-only (--read-only, read_only = true) never authenticates: from here on
 * auth_ensure fails without a login, a token reference, token_command or a password
 * prompt, and auth_headers adds nothing (no bearer, API key or dev-user header). */
void auth_set_read_only(rd_auth *a);
/* Reads the claims of a JWT without verifying it (the server does): "exp" into *exp
 * when it is a finite positive number, "sub"/"email"/"preferred_username"/"login" into
 * *ident (allocated, at most 128 bytes, replacing the old value; ident may be NULL).
 * false when tok is not a JWT with a JSON object payload. Pure (fuzzable). */
bool auth_jwt_claims(const char *tok, double *exp, char **ident);
void auth_supply_password(rd_auth *a, const char *password);
