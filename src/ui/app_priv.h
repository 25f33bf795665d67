#pragma once
/* The console's app context (app_ctx.c): what is on screen and how it got there. Seen by
 * the files that own a part of it (app.c, app_ctx.c, app_cmd.c, app_loop.c, binding.c,
 * binding_open.c, input.c, paint.c) and those that draw over it (dialog.c, dlgrun.c,
 * password.c, clip.c); the rest of ui has app.h. Its parts with their own owner are
 * opaque here: the binding to the systems (binding.c), the terminal (term.c).
 *
 * The files read downward (tests/house/layering.py): app.c (set-up, the run) over
 * headless.c and app_loop.c, over input.c (keys), over app_cmd.c (commands, effects),
 * over binding_open.c (opening systems), over paint.c, over dialog.c, setretry.c and
 * dlgrun.c, over password.c and clip.c, over app_ctx.c, over binding.c and viewtable.c. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../actions/journal.h"
#include "../session/session.h"
#include "app.h"
#include "dialog.h"
#include "input.h"
#include "keymap.h"
#include "password.h"
#include "theme.h"
#include "view.h"

enum { HIST_MAX = 16 };

typedef struct ui_binding ui_binding;   /* binding.h */
typedef struct ui_term ui_term;         /* ui_term.h */
typedef struct ui_batches_st ui_batches_st;   /* batches.h */

enum { LAT_MAX = 64 };

/* The loop's state (set up by app_loop.c): repaint pacing (app_ctx.c asks for a repaint,
 * paint.c marks a paint that showed new data), the next tick, the key-to-paint trace. */
typedef struct ui_loop {
    double tick_due;           /* clock_mono() when the tick fires next */
    double last_data_paint;    /* monotonic seconds: the last paint that showed new data */
    bool repaint_pending;
    FILE *latency;             /* REDRIVE_LATENCY_TRACE */
    double lat_t0[LAT_MAX];
    int n_lat;
} ui_loop;

struct ui_app {
    const rd_opts *opts;
    ui_binding *bind;          /* the systems open and the one on screen (binding.c) */
    ui_term *term;             /* the screen, its streams, the loop's events (term.c) */
    ui_loop *loop;             /* repaint pacing, the latency trace (NULL: no loop yet) */
    rd_loop *base;
    ui_theme *theme;
    ui_keymap *km;
    ui_view views[VIEW__COUNT];
    ui_view_id cur;
    ui_view_id hist[HIST_MAX];
    int n_hist;
    ui_ctx ctx;
    ui_prompt prompt;          /* input.c */
    ui_cmd_hist cmd_hist;      /* input.c */
    ui_dialog dlg;             /* dialog.c */
    ui_batches_st *bst;        /* the batches it runs and the records read (batches.c) */
    ui_password pw;            /* password.c */
    ui_key pending[KM_SEQ_MAX];
    int n_pending;
    bool quit, dirty, full_redraw;
    bool quit_ask;             /* q on the top view asked "quit redrive?": the next key answers */
    bool quit_batches;         /* it asked because batches run: y quits, they stay open */
    int quit_signal;           /* SIGTERM, SIGHUP, SIGINT, SIGQUIT that ended the loop, 0 none */
    uint64_t painted_gen;
    double start_cpu[3];   /* REDRIVE_START_TRACE: CPU after set-up, after the terminal, at the frame */
    rd_journal_entry *journal;
    size_t n_journal;
    rd_retry_record *retries;  /* borrowed strings from journal, this system's only */
    size_t n_retries;
    char journal_err[256];
    /* the store's DLQ entries resolved through the core by this console ("system\tid"):
     * a second resolve of one is refused here, never sent (ctx.dlq_resolved) */
    char **dlq_resolved;
    size_t n_dlq_resolved, cap_dlq_resolved;
    bool headless;
    bool model_only;           /* the model comes from REDRIVE_HEADLESS_MODEL: no sources */
    double fixed_now;          /* REDRIVE_NOW (tests), 0 = real clock */
    char *clip;                /* the copy overlay's text (sanitized), NULL when closed */
};

/* app_ctx.c */
void app_retries(ui_app *app);   /* this system's manual retries, from the journal read */
void app_diag_msg(ui_app *app, rd_diags *d, size_t from);   /* diagnostics from `from` on */
void app_fleet_rows(ui_app *app);   /* before painting: the fleet view's rows */
void app_use_theme(ui_app *app, ui_theme *t);   /* t on screen (owned from now on) */
void app_schedule_repaint(ui_app *app);      /* the loop's repaint, paced (~10 Hz) */
void app_resized(ui_app *app);               /* the terminal's size changed */

/* app_loop.c */
bool app_loop_events(ui_app *app);           /* input, repaint, tick, signals */
void app_loop_free_events(ui_app *app);
void app_start_trace(const ui_app *app);     /* REDRIVE_START_TRACE=FILE, at the first frame */
