#pragma once
/* The console's one app context, shared by app.c, input.c, paint.c, dialog.c, term.c and
 * headless.c. Views never see it: they get a ui_ctx. */
#include <curses.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../actions/actions.h"
#include "../actions/journal.h"
#include "../core/config.h"
#include "../core/model.h"
#include "../session/session.h"
#include "../session/sessions.h"
#include "../sources/sources.h"
#include "keymap.h"
#include "theme.h"
#include "ui.h"
#include "view.h"

struct event;
struct event_base;

enum { HIST_MAX = 16, LAT_MAX = 64, CMD_HIST_MAX = 32 };

typedef struct ui_prompt {
    bool active;
    int kind;                  /* PROMPT_* */
    char buf[256];
    size_t len;
    char hint[200];            /* command mode: the matches of the last Tab (clean text) */
    int hist_at;               /* command mode: the history line shown (Up/Down), -1 none */
} ui_prompt;

/* The command lines run this session, oldest first (Up in command mode recalls them). */
typedef struct ui_cmd_hist {
    char line[CMD_HIST_MAX][256];
    int n;
} ui_cmd_hist;

/* DLG_RESEND: "re-send item cur with the same Idempotency-Key?" over the results;
 * DLG_TYPE: a bulk action above confirm_over: the operator types the count (raw keys) */
typedef enum { DLG_NONE, DLG_CONFIRM, DLG_PROGRESS, DLG_RESEND, DLG_TYPE } dlg_state;

typedef struct ui_dialog {
    dlg_state state;
    rd_action kind;
    ui_sel sel;                /* the frozen selection (owned) */
    rd_batch *batch;
    rd_batch **resent;         /* per item: the latest deliberate re-send or NULL (owned) */
    int cur;                   /* the selected result row */
    bool moved;                /* the operator moved cur (else it follows the results) */
    int scroll;
    bool aborted;
    bool override;             /* the operator overrode the guard (O): ineligible and loop retries too */
    rd_guard_counts counts;    /* the guard's breakdown of sel (guard.h), counted when it opens */
    size_t want;               /* DLG_TYPE: the count to type */
    char typed[24];            /* DLG_TYPE: what was typed so far */
    size_t typed_len;
    size_t skipped;            /* targets the guard left out of the batch */
} ui_dialog;

/* The jwt-login password prompt (password.c). buf is never drawn and wiped after use. */
typedef struct ui_password {
    bool active;
    char prompt[200];
    char buf[256];
    size_t len;
} ui_password;

typedef struct ui_app {
    const rd_opts *opts;
    rd_session *session;       /* the config and the open system (owned) */
    /* more than one system configured: every system in its own session (owned); the
     * open system is fleet[fleet_cur] and app->session opens none */
    rd_sessions *fleet;
    int fleet_cur;
    rd_fleet_row *fleet_rows;  /* for the fleet view, refreshed before each paint */
    /* borrowed from the session, refreshed by app_bind() whenever it opens or closes */
    rd_system_cfg *sys;        /* current system, NULL when none */
    rd_model *model;
    rd_sources *src;
    rd_actor *actor;
    struct event_base *base;
    ui_theme *theme;
    ui_keymap *km;
    bool colour, mouse, ascii;
    ui_view views[VIEW__COUNT];
    ui_view_id cur;
    ui_view_id hist[HIST_MAX];
    int n_hist;
    ui_ctx ctx;
    ui_prompt prompt;
    ui_cmd_hist cmd_hist;
    ui_dialog dlg;
    ui_password pw;
    ui_key pending[KM_SEQ_MAX];
    int n_pending;
    SCREEN *screen;
    FILE *term_out, *term_in;
    WINDOW *input;
    bool quit, dirty, full_redraw;
    bool quit_ask;             /* q on the top view asked "quit redrive?": the next key answers */
    int quit_signal;           /* SIGTERM, SIGHUP, SIGINT, SIGQUIT that ended the loop, 0 none */
    uint64_t painted_gen;
    double tick_due;       /* clock_mono() when the tick fires next */
    double last_paint;         /* monotonic seconds */
    struct event *ev_input, *ev_tick, *ev_repaint, *ev_poll, *ev_sig[5];
    bool repaint_pending;
    FILE *latency;
    double start_cpu[3];   /* REDRIVE_START_TRACE: CPU after set-up, after the terminal, at the frame */
    double lat_t0[LAT_MAX];
    int n_lat;
    rd_journal_entry *journal;
    size_t n_journal;
    rd_retry_record *retries;  /* borrowed strings from journal, this system's only */
    size_t n_retries;
    char journal_err[256];
    bool headless;
    bool model_only;           /* the model comes from REDRIVE_HEADLESS_MODEL: no sources */
    double fixed_now;          /* REDRIVE_NOW (tests), 0 = real clock */
    char *clip;                /* the copy overlay's text (sanitized), NULL when closed */
    /* the last-known snapshot (lastknown.c, session/snapcache.h) */
    char *cache_path;          /* of the open system; NULL: none */
    double cache_at;           /* epoch the cached data on screen was written; 0: live data */
    double cache_saved;        /* monotonic time of the last write, 0: not yet */
    uint64_t cache_gen;        /* model generation written last */
    bool cache_live;           /* live data arrived: worth writing back */
    int cache_child;           /* pid of the process writing it (snapcache_save_child), 0: none */
} ui_app;

/* app.c */
double app_now(const ui_app *app);
void app_journal_reload(ui_app *app);   /* the journal tail and this system's manual retries */
rd_session *app_live(const ui_app *app);   /* the session on screen (in the fleet: its current system) */
/* The drain cockpit's execution timeout: the config's, else the profile's; 0 unknown. */
double app_exec_timeout(const ui_app *app);
void app_open_view(ui_app *app, ui_view_id id, const char *arg, bool push);
void app_back(ui_app *app);
void app_effects(ui_app *app);
void app_request_paint(ui_app *app);   /* from callbacks: repaint soon (no-op headless) */
/* app_loop.c: the event loop */
void app_paint(ui_app *app);                 /* paint now */
void app_source_changed(void *ud);           /* a source's on_change: last-known + repaint soon */
struct event_base *app_loop_base(void);      /* keys before work (priorities, dispatch slices) */
bool app_loop_events(ui_app *app);           /* input, repaint, tick, signals */
void app_loop_free_events(ui_app *app);
void app_start_trace(const ui_app *app);     /* REDRIVE_START_TRACE=FILE, at the first frame */
void app_command(ui_app *app, const char *line);
bool app_switch_system(ui_app *app, const char *name);
void app_load_theme(ui_app *app, const char *name);
void app_load_keymap(ui_app *app, const char *name);
void app_fleet_rows(ui_app *app);      /* before painting: the fleet view's rows */

/* input.c: one decoded key; returns true when the screen must be repainted */
bool input_key(ui_app *app, ui_key k);
void input_mouse(ui_app *app);

/* paint.c */
void paint_frame(ui_app *app);

/* dialog.c */
void dialog_start(ui_app *app, rd_action kind);
/* The same without the confirmation: sent at once (undrain from the drain cockpit). */
void dialog_start_now(ui_app *app, rd_action kind);
unsigned dialog_key(ui_app *app, ui_action a);
void dialog_draw(ui_app *app, WINDOW *w);
void dialog_close(ui_app *app);
bool dialog_busy(const ui_app *app);   /* requests still running: keep repainting */
bool dialog_nav(ui_action a);          /* movement keys a dialog also takes */
bool dialog_offers_resend(const ui_app *app);   /* a maybe_applied result is shown */
void dialog_type_key(ui_app *app, ui_key k);   /* DLG_TYPE: digits, backspace, enter, escape */
size_t dialog_held(const ui_app *app);          /* targets the confirmation sends only overridden */

/* clip.c: copy ids (OSC 52 or the overlay) and :export */
void clip_copy(ui_app *app);                 /* the ids in ctx.sel */
void clip_close(ui_app *app);
void clip_draw(ui_app *app, WINDOW *w);
void clip_export(ui_app *app, const char *arg, bool force);

/* password.c */
void password_open(ui_app *app, const char *prompt);
void password_close(ui_app *app);
void password_key(ui_app *app, ui_key k);
void password_draw(ui_app *app, WINDOW *w);

/* term.c */
bool term_open(ui_app *app, const char *headless_size);

/* lastknown.c */
bool lastknown_open(ui_app *app, const char *name);
void lastknown_update(ui_app *app);
void lastknown_close(ui_app *app);
void lastknown_label(const ui_app *app, char *out, size_t cap);
void term_close(ui_app *app);
void term_crash_guard(void);
void term_resize(ui_app *app);

/* headless.c */
int headless_run(ui_app *app, const char *script);
void headless_dump(ui_app *app, FILE *out);
