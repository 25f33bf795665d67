#pragma once
/*
 * The fleet's sessions: one rd_session per configured system, all on the same loop, each
 * with its own connections, model and (optionally) actor. The system on screen polls at
 * its configured rate, the others slower (SESSIONS_BACKGROUND_PACE times the interval);
 * with the fleet view on screen every system is on screen. The systems' poll ticks are
 * spread over the interval so they never poll in one wave. Each session keeps a short
 * history of its DLQ size for the fleet's trend column (core/fleet.h).
 *
 * Opening a system from the fleet reuses its session: no reconnect, the model is warm.
 */
#include <stddef.h>

#include "../core/fleet.h"
#include "session.h"

enum { SESSIONS_BACKGROUND_PACE = 5 };

typedef struct rd_sessions rd_sessions;
/* A session changed its model: i is its index (file order). */
typedef void (*rd_sessions_cb)(void *ud, size_t i);

typedef struct rd_sessions_io {
    rd_loop *base;      /* required with parts */
    unsigned parts;               /* SESSION_SOURCES | SESSION_ACTOR, or 0 (fixed models) */
    rd_sessions_cb on_change;
    void *change_ud;
    rd_password_prompt on_password;
    void *password_ud;
    /* The console: a row moves once its new level has held for two polls (fleet_place_update);
     * false (`snapshot --view fleet`, one look): rows sort by the level now. */
    bool hold_places;
} rd_sessions_io;

/* Opens every configured system (not started). Never NULL; a system whose profile did not
 * load stays in the set without parts (its row reads "none yet"). */
rd_sessions *sessions_new(const rd_opts *opts, const rd_sessions_io *io);
void sessions_free(rd_sessions *f);
size_t sessions_count(const rd_sessions *f);
rd_session *sessions_at(const rd_sessions *f, size_t i);
/* Index of the system called name (NULL = the first), -1 when none. */
int sessions_find(const rd_sessions *f, const char *name);
void sessions_start(rd_sessions *f);
/* The system i is on screen (full pace), the others slowed; -1: all on screen. */
void sessions_focus(rd_sessions *f, int i);
/* true when every source of every system has answered at least once. */
bool sessions_settled(const rd_sessions *f);
/* One row per system into rows (sessions_count of them), sorted worst first; row_index[k]
 * (optional) gets the session index of row k. */
void sessions_rows(const rd_sessions *f, double now, rd_fleet_row *rows, size_t *row_index);
/* Every diagnostic once: the configuration's (from the first session), then each
 * system's own (profile, secrets), sanitized. */
void sessions_print_diags(const rd_sessions *f, FILE *out);
/* Each system's own diagnostics (not the configuration's), appended to d as copies: the
 * console lists them with its own. */
void sessions_copy_diags(const rd_sessions *f, rd_diags *d);
