#pragma once
/*
 * The action layer (SPEC §3, §4): retry / drain / undrain / deactivate / activate / resolve
 * (a store's DLQ entry: Tasker's dlq_update) through
 * the system's core HTTP API, authenticated as the operator. Used by the console and
 * by the CLI subcommands. Never blocks the loop: credentials (token commands, password
 * commands, login/refresh) are obtained asynchronously, requests go through rd_http.
 *
 * Safety rules implemented here:
 *   - a batch acts on a FROZEN copy of the targets (copied at actor_run time);
 *   - requests are rate-limited (cfg->rate_limit per second, default 5);
 *   - every request carries an Idempotency-Key (random 128-bit hex);
 *   - a timeout or lost connection after sending is never re-sent automatically
 *     (code RD_RES_MAYBE_APPLIED); only actor_resend() re-sends, with the SAME key;
 *   - a 401 obtains credentials again, once, and re-sends (same key) only when that gave
 *     a different token (jwt-login, token-command, a rotated file:); a static token is
 *     not re-sent: the item fails with the 401;
 *   - the audit journal (journal.h) is written ahead: each request is journaled as
 *     "pending" before it is sent and completed with its outcome; a request still in
 *     flight when the actor or its batch is freed (quit, signal, :system) is completed
 *     as "unknown: may have been applied". Never the token.
 *   - read_only (flag or cfg->read_only) refuses everything.
 * Messages in rd_result are raw text (may contain server-provided bytes): sanitize
 * before display.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/config.h"
#include "../core/profile.h"
#include "../io/loop.h"

typedef struct rd_http rd_http;
typedef struct rd_actor rd_actor;
typedef struct rd_batch rd_batch;

/* The one list of actions: X(ENUM, name, past tense, target kind, what a 403 says
 * the role may not do). */
#define RD_ACTION_LIST(X)                                                           \
    X(RETRY, "retry", "retried", "execution", "retry executions")                  \
    X(DRAIN, "drain", "drained", "worker", "drain workers")                        \
    X(UNDRAIN, "undrain", "undrained", "worker", "undrain workers")                \
    X(DEACTIVATE, "deactivate", "deactivated", "worker", "deactivate workers")     \
    X(ACTIVATE, "activate", "activated", "worker", "activate workers")             \
    X(RESOLVE, "resolve", "resolved", "DLQ entry", "update DLQ entries")

typedef enum {
#define RD_X_(e, n, p, t, f) RD_ACT_##e,
    RD_ACTION_LIST(RD_X_)
#undef RD_X_
    RD_ACT__COUNT
} rd_action;

const char *action_name(rd_action a);          /* "retry" */
const char *action_past(rd_action a);          /* "retried" */
const char *action_target_kind(rd_action a);   /* "execution" | "worker" | "DLQ entry" */
bool action_on_worker(rd_action a);
bool action_from_name(const char *name, rd_action *out);

/* One target. Strings are copied by actor_run. */
typedef struct rd_target {
    const char *id;          /* execution id / tasker step uuid / alakai task id / worker id */
    const char *parent;      /* tasker: task uuid ({task}); NULL otherwise */
    const char *label;       /* optional, for the journal/UI (e.g. action name); NULL ok */
    /* the target as the operator named it (typed on the command line: "STEP" or
     * "TASK/STEP"); a single action's journal line names it so (NULL: id). A batch item's
     * line names parent/id, as its record does (batchscan.c matches them by that text). */
    const char *named;
    const char *fp;          /* optional: its error fingerprint, journaled (loop breaker) */
    int attempt;             /* optional: its attempt, journaled; <= 0 = unknown */
    /* what the operator overrode to send it, journaled as "override": "loop_retry",
     * "ineligible" (guard.h), "drain_warning"; a static string, NULL none */
    const char *override_;
} rd_target;

#define RD_RESULT_LIST(X)                                                  \
    X(PENDING, "pending")                                                  \
    X(OK, "ok")                                                            \
    X(UNAUTHORIZED, "unauthorized")                                        \
    X(FORBIDDEN, "forbidden")                                              \
    X(NOT_FOUND, "not_found")                                              \
    X(CONFLICT_STATUS, "conflict_status")                                  \
    X(CONFLICT_BUDGET, "conflict_budget")                                  \
    X(BAD_GATEWAY, "bad_gateway")                                          \
    X(UNREACHABLE, "unreachable")     /* nothing was sent (connect/DNS failed) */ \
    X(MAYBE_APPLIED, "maybe_applied") /* timeout / lost connection after send */  \
    X(REFUSED, "refused")             /* refused locally: read-only, auth setup... */ \
    X(ABORTED, "aborted")             /* batch aborted before this item was sent */ \
    X(UNKNOWN, "unknown")             /* redrive stopped with the request in flight */ \
    X(OTHER, "other")

typedef enum {
#define RD_X_(e, s) RD_RES_##e,
    RD_RESULT_LIST(RD_X_)
#undef RD_X_
    RD_RES__COUNT
} rd_result_code;

const char *result_code_name(rd_result_code c);   /* "maybe_applied" */
bool result_code_from_name(const char *s, rd_result_code *out);

typedef struct rd_result {
    rd_action action;
    char *id;                /* target id (copied) */
    char *parent;            /* target parent or NULL */
    rd_result_code code;
    long http_status;        /* 0 = no HTTP response */
    int attempt;             /* new attempt number from a 202, 0 = unknown */
    char message[256];       /* one line, rendered per SPEC §3; raw, sanitize to show */
    char idem_key[33];       /* the Idempotency-Key used (32 hex digits) */
    bool replayed;           /* the server answered from its idempotency cache */
} rd_result;

typedef struct rd_batch_cbs {
    /* after each item got its final result (index into the frozen selection) */
    void (*on_item)(rd_batch *b, size_t index, const rd_result *r, void *ud);
    /* once, when every item has a result (also after batch_abort). The batch stays
     * valid until batch_free (which may be called from here). */
    void (*on_done)(rd_batch *b, void *ud);
} rd_batch_cbs;

/* Password prompt for jwt-login when no password source is configured. The UI/CLI
 * asks the operator (echo off) and calls actor_supply_password() now or later
 * (NULL = the operator cancelled). `prompt` is a short text such as
 * "password for ops@attune-prod: ". */
typedef void (*rd_password_prompt)(rd_actor *a, const char *prompt, void *ud);

/* What an actor acts with (given by its session). Borrowed pointers must outlive it. */
typedef struct rd_actor_env {
    const rd_system_cfg *cfg;
    const rd_profile *prof;          /* the system's profile */
    /* optional: the profile in use now, asked at each use (a schema-era variant, whose
     * routes fall back to its actions_from profile); NULL or returning NULL = prof */
    const rd_profile *(*profile_now)(void *ud);
    void *profile_ud;
    const char *local_user;          /* the operator's local login name (copied); NULL = "?" */
    bool read_only;                  /* --read-only (cfg->read_only is honoured as well) */
} rd_actor_env;

/* Never NULL. */
rd_actor *actor_new(rd_loop *base, rd_http *http, const rd_actor_env *env);
void actor_free(rd_actor *a);        /* aborts running batches (no more callbacks) */
void actor_set_password_prompt(rd_actor *a, rd_password_prompt fn, void *ud);
void actor_supply_password(rd_actor *a, const char *password);   /* copied, then wiped */
/* Per-request deadline for action requests (default 15000 ms). */
void actor_set_timeout_ms(rd_actor *a, long ms);
/* Journal file override (tests); default journal_default_path(). NULL = default. */
void actor_set_journal(rd_actor *a, const char *path);
/* Where a journal write error goes (raw text, a path and errno, never a secret): the
 * console's status line. Without one (the CLI) it goes to stderr. */
typedef void (*rd_journal_error_fn)(const char *why, void *ud);
void actor_set_journal_errors(rd_actor *a, rd_journal_error_fn fn, void *ud);

/* Operator identity: JWT sub/email, login, dev_user, or what /auth/me said. NULL until
 * known; actor_prepare() starts finding out. */
const char *actor_identity(const rd_actor *a);
/* Obtain credentials now (login, token command) without acting; optional. cb may be
 * NULL; ok=false with a reason when credentials could not be obtained. */
void actor_prepare(rd_actor *a, void (*cb)(bool ok, const char *why, void *ud), void *ud);
/* false (with a reason) when no action may be taken at all: read-only, no core URL,
 * http:// to a non-loopback host without insecure, dev-user not allowed, unknown auth. */
bool actor_can_act(const rd_actor *a, char *why, size_t whycap);
/* true when the profile defines (or the default contract provides) this action. */
bool actor_supports(const rd_actor *a, rd_action kind);
/* "insecure" when the core is plain http to a non-loopback host (banner). */
bool actor_insecure(const rd_actor *a);

/* Who the core says the operator is (`redrive check`): GET /auth/me with the configured
 * credentials, obtained as for an action. Strings are raw: sanitize to show. */
typedef struct rd_whoami {
    bool ok;                 /* 2xx naming an identity */
    long http_status;        /* 0 = no answer */
    char identity[128];      /* data.identity / login / sub / email */
    char role[64];           /* data.role, "" when not said */
    char auth[32];           /* data.auth: how the core authenticated us, "" when not said */
    char why[256];           /* when !ok: credentials, refusal, unreachable ... */
    bool unreachable;        /* no HTTP answer at all (connect, DNS, timeout) */
    /* the credentials could not be had, so GET /auth/me was never sent: login_status is
     * the core's answer to the login (jwt-login; 0 = none, or no login asked) */
    bool creds_failed;
    long login_status;
    bool anonymous;          /* asked without credentials (actor_probe before a login,
                                read-only) */
} rd_whoami;
typedef void (*rd_whoami_cb)(const rd_whoami *w, void *ud);
/* Starts the request (one at a time per actor); cb runs once, later, from the loop
 * (not after actor_free). false when there is no core URL or one is already running. */
bool actor_whoami(rd_actor *a, rd_whoami_cb cb, void *ud);
/* The same as a low-rate probe of the core's state: never prompts. Without credentials
 * yet when getting them would ask the operator (jwt-login without a password source,
 * not logged in): then a 401 still shows the core is up. */
bool actor_probe(rd_actor *a, rd_whoami_cb cb, void *ud);
/* Read-only (--read-only or the system's read_only = true): no action, and no
 * credentials either: actor_whoami and actor_probe ask anonymously, nothing logs in. */
bool actor_read_only(const rd_actor *a);

/* Acts on a frozen copy of targets[0..n). reason may be NULL (a default is used).
 * Returns NULL (and writes why) when refused before anything starts, e.g. read-only;
 * the refusal is still journaled. Otherwise callbacks run later, from the loop. */
rd_batch *actor_run(rd_actor *a, rd_action kind, const rd_target *targets, size_t n,
                    const char *reason, const rd_batch_cbs *cbs, void *ud,
                    char *why, size_t whycap);
/* The same, journaled as one batch: every line of its items carries one batch id. */
rd_batch *actor_run_batch(rd_actor *a, rd_action kind, const rd_target *targets, size_t n,
                          const char *reason, const rd_batch_cbs *cbs, void *ud,
                          char *why, size_t whycap);
/* A part of a resumable batch (batchrec.h): its items are journaled with its record's
 * batch id and their item number in it ("item"), so `redrive batch list` and a resume
 * know each item's state from the journal alone. */
typedef struct rd_batch_opts {
    const char *id;             /* the batch id (16 hex digits); NULL = a new one */
    const size_t *items;        /* each target's item number in the record */
    double rate;                /* requests per second; <= 0: the system's rate_limit */
    double last_send;           /* clock_mono() of the batch's previous request (its
                                 * previous part), 0 = none: the pace goes on across parts */
    /* NULL, or one Idempotency-Key per target (NULL or "": a new one): the re-send of an
     * item whose outcome is unknown keeps its key, so the core applies it at most once */
    const char *const *keys;
    /* NULL, or the pace shared by batches that run side by side (a window of requests in
     * flight, batchrun.h): clock_mono() of the latest request any of them sent or is about
     * to send; each waits for it + 1/rate, so together they are never faster than rate */
    double *pace;
} rd_batch_opts;
rd_batch *actor_run_batch_opts(rd_actor *a, rd_action kind, const rd_target *targets,
                               size_t n, const char *reason, const rd_batch_opts *bo,
                               const rd_batch_cbs *cbs, void *ud, char *why, size_t whycap);
/* A new rate (requests per second, > 0) from the next request on, at once (the console's
 * + and - on a running batch). */
void batch_set_rate(rd_batch *b, double rate);
/* clock_mono() of the batch's latest request, 0 = none yet. */
double batch_last_send(const rd_batch *b);
/* The batch id (16 hex digits), "" for a batch not journaled as one. */
const char *batch_id(const rd_batch *b);
/* Explicit operator re-send of one earlier result with the SAME Idempotency-Key. */
rd_batch *actor_resend(rd_actor *a, const rd_result *prev, const char *reason,
                       const rd_batch_cbs *cbs, void *ud, char *why, size_t whycap);

size_t batch_count(const rd_batch *b);
size_t batch_finished(const rd_batch *b);          /* items with a final result */
size_t batch_succeeded(const rd_batch *b);
bool batch_done(const rd_batch *b);
const rd_result *batch_result(const rd_batch *b, size_t i);
rd_action batch_action(const rd_batch *b);
/* Stops sending: unsent items become RD_RES_ABORTED; an in-flight request finishes
 * normally (it may already have been applied). */
void batch_abort(rd_batch *b);
void batch_free(rd_batch *b);    /* also cancels; safe from on_done/on_item */
