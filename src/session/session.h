#pragma once
/*
 * A session turns one config section into a running system, the same way for the
 * console, `snapshot` and the CLI actions: the configuration (loaded once, with its
 * diagnostics), the operator's local name (resolved once), and at most one open system:
 * its profile, model, source set and actor.
 *
 * One error policy: every problem is a diagnostic "file:line: message" in
 * session_diags() (config, profile, "no system named ..."), all of them, in order;
 * session_open() says what came of it (rd_session_status); session_exit_code() maps that
 * to the process exit code. The console shows the diagnostics and keeps going; the
 * command-line tools print them and exit 2 unless the status is SESSION_OK.
 *
 * `:system NAME` in the console is session_close() then session_open(NAME).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "../actions/actions.h"
#include "../actions/batchout.h"
#include "../core/config.h"
#include "../core/diag.h"
#include "../core/history.h"
#include "../core/model.h"
#include "../core/profile.h"
#include "../sources/sources.h"
#include "../io/loop.h"


/* Global command-line options, parsed once by the CLI and passed down. */
typedef struct rd_opts {
    const char *config_path;   /* --config, NULL = default path */
    const char *system;        /* --system, NULL = the first */
    const char *theme;         /* --theme */
    const char *keymap;        /* --keymap */
    bool read_only;            /* --read-only */
    bool ascii;                /* --ascii */
    bool no_mouse;             /* --no-mouse */
    bool yes;                  /* --yes */
    double main_cpu;           /* CPU time used when main() began (REDRIVE_START_TRACE) */
} rd_opts;

/* Process exit codes of every entry point. */
enum { RD_EXIT_OK = 0, RD_EXIT_FAIL = 1, RD_EXIT_USAGE = 2, RD_EXIT_PARTIAL = 3 };

typedef enum {
    SESSION_OK,              /* the system is open */
    SESSION_CONFIG_ERRORS,   /* open, but the configuration had errors */
    SESSION_NO_SYSTEM,       /* no such system, or none configured: nothing is open */
    SESSION_NO_PROFILE,      /* the system is chosen but its profile did not load: no parts */
} rd_session_status;

/* The parts session_open() builds (none: only choose the system, e.g. a fixed model). */
enum {
    SESSION_SOURCES = 1u << 0,
    SESSION_ACTOR = 1u << 1,
    /* probe the core's state (model->core; the console, `snapshot`), with the actor —
     * built for it when SESSION_ACTOR is not asked: then its credentials are not checked
     * as configuration, a failure shows in the core state */
    SESSION_PROBE = 1u << 2,
    /* the system's last hour (syshist.h): loaded from the state directory; with a loop
     * also sampled every step from session_start on and saved (periodically, at close) */
    SESSION_HISTORY = 1u << 3,
};

typedef struct rd_session_io {
    rd_loop *base;           /* the loop the parts run on (required with parts) */
    unsigned parts;                    /* SESSION_SOURCES | SESSION_ACTOR */
    rd_change_cb on_change;            /* sources: after each model update */
    void *change_ud;
    rd_password_prompt on_password;    /* actor: jwt-login without a password source */
    void *password_ud;
} rd_session_io;

typedef struct rd_session rd_session;

/* Loads the configuration named by opts (opts must outlive the session). A missing file
 * at the default path is no error until a system is opened. Never NULL. */
rd_session *session_new(const rd_opts *opts);
void session_free(rd_session *s);

/* The system called name (NULL = the first), without opening it; no diagnostic. */
rd_system_cfg *session_find(rd_session *s, const char *name);
/* " (did you mean NAME?)" for a system name not found, or "" (suggest.h). */
const char *session_suggest_system(const rd_session *s, const char *name, char *buf, size_t cap);
/* true when the configuration has at least one system. */
bool session_has_systems(const rd_session *s);
/* The configured systems in file order (`redrive check` walks them all). */
size_t session_system_count(const rd_session *s);
const rd_system_cfg *session_system_at(const rd_session *s, size_t i);
/* Chooses the system and builds the parts asked for (not started). Close first. */
rd_session_status session_open(rd_session *s, const char *name, const rd_session_io *io);
void session_start(rd_session *s);   /* connects the sources and starts polling */
/* The core's state (model->core): probed at start, every core_probe seconds (config,
 * default 30) and when asked here (after an action). A probe already running is kept. */
void session_core_probe(rd_session *s);
/* false while the first probe has not answered. */
bool session_core_settled(const rd_session *s);
/* Stops and frees the open system's parts and empties the model. The configuration,
 * the diagnostics and the operator stay. */
void session_close(rd_session *s);

rd_system_cfg *session_system(const rd_session *s);   /* NULL when none is open */
/* What a batch record is bound to (session_bound.c): the store c points at
 * ("postgresql system SYSID db NAME", asked of the store with a short blocking connection:
 * CLI only, never the console's loop; "postgresql://HOST:PORT/DB (the store did not
 * answer)" when it does not; "redis://HOST:PORT/DB"; with " sqs=QUEUE_URL"; never a
 * credential; NULL when it cannot be said, e.g. a cmd: reference; env: and file: are
 * read) for a profile whose store is store_kind, and its core URL (NULL none).
 * Allocated. */
char *session_store_identity(const rd_system_cfg *c, const char *store_kind);
char *session_core_identity(const rd_system_cfg *c);
/* A batch's outcome from the store (session_outcome.c, actions/batchout.h): each item the
 * core accepted followed to the attempt its retry made, read in pages of 500 (one query,
 * or one pipelined Redis round, a page; never one a item) over a short synchronous
 * connection of its own: the CLI's, never the console's loop. prof: the system's profile
 * (its variant_query picks the era). The tracker holds each item's outcome (rd_bout, one
 * byte by item number) and reads the record's items again at each refresh (memory: one
 * page, whatever the batch's size); an outcome once final is not read again. */
typedef struct rd_outtrack rd_outtrack;
rd_outtrack *outtrack_new(const rd_system_cfg *c, const rd_profile *prof,
                          const rd_batch_info *b, const char *journal, char *why,
                          size_t cap);
void outtrack_mark_ok(rd_outtrack *t, size_t item);     /* the core accepted it now */
/* Reads up to max_pages pages (0: all) of the accepted items not finished yet, round robin
 * from where the last refresh stopped; false with why (the outcomes read so far stay). */
bool outtrack_refresh(rd_outtrack *t, size_t max_pages, char *why, size_t cap);
const unsigned char *outtrack_outs(const rd_outtrack *t);
/* The counts of every accepted item, or (this_run) of those marked in this run only. */
rd_bout_counts outtrack_counts(const rd_outtrack *t, bool this_run);
size_t outtrack_queries(const rd_outtrack *t);          /* queries sent so far */
void outtrack_free(rd_outtrack *t);
/* The guard again at send time (session_outcome.c, issue 35): targets read again from the
 * store just before they leave, each judged by the rule the executions list applies
 * (sources.h: outread_verdicts), in pages of 500 (one query, or two pipelined Redis rounds,
 * a page), over the same short synchronous connection: the CLI's, never the console's
 * loop. c and prof must outlive it. */
typedef struct rd_recheck rd_recheck;
rd_recheck *recheck_new(const rd_system_cfg *c, const rd_profile *prof);
/* out[i]: t[i]'s verdict now (RD_ELIG_YES: send it); false with why when the store could
 * not be read (then judge nothing: send nothing). */
bool recheck_verdicts(rd_recheck *k, const rd_target *t, size_t n, rd_verdict *out, char *why,
                      size_t cap);
size_t recheck_queries(const rd_recheck *k);            /* queries (rounds) sent so far */
void recheck_free(rd_recheck *k);
/* The profile in use now: the schema-era variant the store chose, else the system's
 * profile; NULL when none is loaded. Valid until the next callback from the loop. */
const rd_profile *session_profile(const rd_session *s);
rd_model *session_model(const rd_session *s);          /* owned by the session; never NULL */
rd_sources *session_sources(const rd_session *s);      /* NULL unless SESSION_SOURCES */
rd_actor *session_actor(const rd_session *s);          /* NULL unless SESSION_ACTOR */
/* The last hour (core/history.h); NULL unless SESSION_HISTORY. */
const rd_history *session_history(const rd_session *s);
rd_diags *session_diags(rd_session *s);                /* stable for the session's life */
const char *session_config_path(const rd_session *s);
const char *session_operator(const rd_session *s);     /* local login name, or NULL */
/* The actions' journal: $REDRIVE_JOURNAL (tests) or journal_default_path(). Allocated;
 * NULL when neither XDG_STATE_HOME nor HOME is set. */
char *session_journal_path(void);

/* What the console and the CLI ask of the open system's sources (session_ask.c; they
 * never call sources_* themselves): the sources.h operation of the same name, a no-op
 * without sources (settled and idle then say false, request_groups that it cannot). */
bool session_settled(const rd_session *s);
bool session_idle(const rd_session *s);
void session_refresh(rd_session *s);
void session_set_filter(rd_session *s, const rd_exec_filter *f);
void session_page(rd_session *s, int dir);
void session_jump(rd_session *s, const char *id);
void session_request_chain(rd_session *s, const char *id);
void session_request_detail(rd_session *s, const char *id);
void session_request_worker(rd_session *s, const char *id);
void session_peek_dlq(rd_session *s, bool more);
bool session_request_groups(rd_session *s, double window_s, long cap);
void session_dlq_page(rd_session *s, int dir);
void session_dlq_order(rd_session *s, bool oldest, const char *text);
void session_set_interest(rd_session *s, unsigned panels);

int session_exit_code(rd_session_status st);           /* RD_EXIT_OK or RD_EXIT_USAGE */
/* Diagnostics [from, n) as sanitized lines. */
void session_print_diags(const rd_session *s, size_t from, FILE *out);
