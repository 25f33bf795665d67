#pragma once
/*
 * One module per view, the same hooks for each (tig's view_ops, ncdu's x_draw/x_key).
 * Views draw the model and turn actions into "what changed" flags plus effects in the
 * context's outbox; they never read the keyboard and never call a source.
 */
#include <curses.h>
#include <stdbool.h>
#include <stddef.h>

#include "../actions/actions.h"
#include "../actions/journal.h"
#include "../core/config.h"
#include "../core/fleet.h"
#include "../core/groups.h"
#include "../core/history.h"
#include "../core/guard.h"
#include "../core/model.h"
#include "actlist.h"
#include "keymap.h"
#include "theme.h"

/* What a key changed (htop's reaction flags). */
enum {
    UI_CH_NONE = 0,
    UI_CH_REDRAW = 1u << 0,
    UI_CH_BACK = 1u << 1,      /* leave this view */
    UI_CH_QUIT = 1u << 2,
    UI_CH_UNHANDLED = 1u << 3, /* the view did not use the action */
};

/* Requests from views to the app (the app talks to sources and the actor). */
typedef enum {
    FX_VIEW,      /* arg = view id, text = open argument */
    FX_CHAIN,     /* text = execution id */
    FX_WORKER,    /* text = worker id: the drain cockpit follows it (its running executions) */
    FX_PAGE,      /* arg = +1 / -1 / 0 */
    FX_JUMP,      /* text = id */
    FX_FILTER,    /* arg = view id: its filter in ctx changed */
    FX_PEEK,      /* arg = 0 first page, 1 more */
    FX_REFRESH,
    FX_ACT,       /* arg = rd_action, targets in ctx->sel */
    FX_PROMPT,    /* arg = prompt kind (PROMPT_*) */
    FX_JOURNAL,   /* (re)read the journal */
    FX_SYSTEM,    /* text = system name: open it (`:system NAME`) */
    FX_COPY,      /* the ids in ctx->sel to the clipboard (OSC 52) or the copy overlay */
    FX_GROUPS,    /* arg = window in seconds: the error groups across the store, computed now */
    FX_DETAIL,    /* text = execution id: read it in full (model detail), once */
    FX_DLQ_PAGE,  /* arg = -1 the store's DLQ page before, +1 the one after */
    FX_DLQ_ORDER, /* arg = 1 oldest first (G), 0 newest first; the DLQ view's search */
    FX_RETRY_SET, /* text "group:FP" or "filter" (the executions view's), arg = window s (0 none):
                     a whole-set retry selected by the store (setretry.h) */
    FX_DLQ_SET,   /* arg = rd_action (retry, resolve), text "reason:R", "queue:Q" or "filter" (the
                     DLQ view's search): the store's DLQ entries as a set (setretry.h) */
    FX_BATCH,     /* arg = BATCH_OP_*, text = batch id ("" for the list): :batches (batches.h) */
} fx_kind;

/* What the :batches view asks of a batch (FX_BATCH). */
enum {
    BATCH_OP_LIST, BATCH_OP_ITEMS, BATCH_OP_RESUME, BATCH_OP_PAUSE, BATCH_OP_ABORT,
    BATCH_OP_RATE_UP, BATCH_OP_RATE_DOWN, BATCH_OP_CONC_UP, BATCH_OP_CONC_DOWN,
};

enum { PROMPT_COMMAND, PROMPT_SEARCH, PROMPT_JUMP, PROMPT_TYPED };   /* TYPED: a count (ui_prompt.lead) */

typedef struct ui_effect {
    fx_kind kind;
    int arg;
    char text[256];
} ui_effect;

typedef enum {
    VIEW_OVERVIEW, VIEW_EXECS, VIEW_CHAIN, VIEW_WORKERS, VIEW_QUEUES, VIEW_DLQ,
    VIEW_JOURNAL, VIEW_HELP, VIEW_FLEET, VIEW_GROUPS, VIEW_DRAIN, VIEW_HISTORY, VIEW_DETAIL,
    VIEW_BATCHES, VIEW__COUNT
} ui_view_id;

/* Each view keeps its own filter (ctx.filter[view]) and shows it in its title: a search
 * typed in one view never hides rows of another. Only the executions view's filter goes
 * to the sources (a server-side search); the others filter the rows they hold. */
typedef struct ui_filter {
    char status[RD_STATUS_MAX];
    char text[128];
    char fp[256];
    char worker[64];   /* executions: the worker id the store records (Enter on a worker) */
    double window_s;   /* executions of a group: its window (Enter on a store's group); 0 none */
} ui_filter;

/* A frozen selection for an action: copies, owned by the ctx. */
typedef struct ui_sel {
    char **ids, **parents, **labels, **fps;
    int *attempts;      /* per item: the execution's attempt, 0 unknown (journaled) */
    int *loops;         /* per item: loop_count (groups.h), 0 = not a loop retry */
    int *elig;          /* per item: rd_elig, its retry eligibility (guard.h); UNKNOWN */
    char **whys;        /* per item: the verdict's reason or NULL */
    size_t n, cap;
    char *notes;        /* extra lines for the dialog (in-flight work, warnings), raw */
    bool group;         /* an error group's members (always journaled as a batch) */
} ui_sel;

/* A now-dependent string as painted (ctx_age and friends): the 1 s tick recomputes each
 * with the new time and repaints only when one would read differently. In absolute mode
 * (the toggle-time key) ages and ETAs read as clock times, UTC or local. */
typedef enum { AGE_AGO, AGE_ETA, AGE_FRESH } ui_age_kind;
typedef struct ui_age {
    ui_age_kind kind;
    double t;
    double fresh_s;         /* AGE_FRESH: the window it was drawn with */
    int src;                /* AGE_FRESH of ctx.model's source [src] (judged by its newest answer), -1 */
    char text[24];
} ui_age;
enum { UI_AGES_MAX = 512 };

/* The :batches view's rows (batches.c builds them before a paint): every batch record of
 * every system, as last read from disk, with this console's running batches' counts live. */
typedef struct ui_batch_row {
    char id[17];
    const char *system, *action, *state;   /* state: running|paused|open|done|abandoned */
    size_t total, sent, ok, failed, unknown, held;   /* sent = ok + failed + unknown */
    double rate;               /* requests per second it runs (or last ran) at; 0 unknown */
    bool rate_own;             /* its own (set by --rate or +/-), else the system's rate_limit */
    int concurrency;           /* 0 unknown */
    double created;            /* epoch seconds, 0 unknown */
    double eta;                /* live: seconds left, < 0 unknown */
    bool live;                 /* sending from this console now: counts as of this moment */
    /* The outcome of its retries (issue 35: succeeded / failed again / new error / running),
     * read by the batch engine; NULL until it gives one (shown "-"). */
    const char *outcome;
} ui_batch_row;

/* One item of the batch opened in :batches: its number, target and state (rd_bitem). */
typedef struct ui_batch_item {
    size_t item;
    char *target;              /* "parent/id" or "id", raw (sanitized when drawn) */
    unsigned char state;       /* rd_bitem: BITEM_NONE (not sent), OK, FAILED, UNKNOWN */
} ui_batch_item;

typedef struct ui_batches {
    const ui_batch_row *rows;
    size_t n;
    bool read;                 /* the records were read at least once */
    double read_at;            /* clock_wall() of the read the rows come from */
    const char *error;         /* the read's problem (NULL none); damaged records named */
    size_t damaged;            /* records left out: damaged (redrive batch list names them) */
    /* the batch opened (Enter): its items grouped by state, failed first */
    char items_of[17];         /* "" none */
    const ui_batch_item *items;
    size_t n_items, items_total;   /* n_items < items_total: capped (the first ones read) */
    bool items_read;
} ui_batches;

typedef struct ui_ctx {
    const rd_model *model;
    const ui_theme *theme;
    const ui_keymap *km;
    const rd_system_cfg *cfg;      /* NULL without a configured system */
    unsigned san;                  /* SAN_ASCII or 0 */
    bool read_only;
    double now;
    ui_filter filter[VIEW__COUNT]; /* per view, by ui_view_id */
    ui_sel sel;
    const rd_journal_entry *journal;
    size_t n_journal;
    bool journal_capped;           /* n_journal reached the tail's bound: older lines not read */
    const rd_retry_record *retries;  /* this system's accepted manual retries (the journal) */
    size_t n_retries;
    const char *journal_error;     /* NULL when read fine */
    /* the store's DLQ entries this console resolved ("system\tid", app_dlq_resolved) */
    const char *const *dlq_resolved;
    size_t n_dlq_resolved;
    const rd_diags *diags;         /* config/theme/keymap problems, for the overview */
    const rd_fleet_row *fleet;     /* every system, worst first; NULL: one system only */
    const rd_history *const *fleet_hist;   /* each fleet row's last hour (entries may be NULL) */
    size_t n_fleet;
    const rd_history *hist;        /* the system's last hour (core/history.h); NULL: none */
    const ui_batches *batches;     /* the :batches view's rows (batches.c) */
    ui_effect fx[4];
    int n_fx;
    char msg[256];                 /* status line message (clean text) */
    bool msg_error;
    double fresh_s;                /* a source answered within this long: shown as fresh */
    double poll_s;                 /* the system's poll interval */
    ui_age ages[UI_AGES_MAX];      /* what the last paint showed (reset by each paint) */
    int n_ages;
    bool ages_overflow;            /* too many to track: the tick repaints every second */
    double exec_timeout_s;         /* execution timeout the profile/config knows, 0 unknown */
    bool abs_time;                 /* times as clock times instead of ages ("12s") */
    bool local_time;               /* clock times in the local zone instead of UTC */
    bool wide;                     /* wide mode: list columns whole, scrolled sideways (W) */
} ui_ctx;

typedef struct ui_rect { int y, x, h, w; } ui_rect;

/* A list's cursor. `follow` is the id under the cursor as last shown: after the rows
 * change (a refresh, a sort, newer rows above) the cursor goes back to that id, as htop
 * follows a PID (list_follow). Empty: nothing followed yet. */
typedef struct ui_list {
    int cur, top, n;
    char follow[160];
} ui_list;

/* The system's lists a view shows: binding.c tells the open system's sources
 * (RD_PANEL_*), so their polls leave out a list nobody looks at. */
typedef enum {
    PANELS_ALL,        /* every list (the default: the fleet, the drain cockpit) */
    PANELS_EXECS,      /* the executions page (executions, chain, error groups) */
    PANELS_WORKERS,    /* the workers (overview, workers, history) */
    PANELS_NONE,       /* neither (queues, DLQ, one execution) */
    PANELS_KEEP,       /* none of the system's lists (help, journal): as they were */
} ui_panels;

/* The one table of the console's views: view_ops(id) for each ui_view_id (viewtable.c,
 * tied to the enum by a _Static_assert). A view's ops say everything the console asks of
 * it: the command that opens it, the lists it shows, its snapshot view (what `:export`
 * writes). */
typedef struct ui_view ui_view;
typedef struct ui_view_ops {
    const char *name;              /* its command (cmd.h), e.g. "executions"; a command whose
                                    * usage names an argument hands it to open */
    const char *title;
    ui_panels panels;
    /* Its view in core/views.h (`snapshot --view`, `:export` when exportable; the name
     * otherwise); NULL when there is none (help, journal, cockpit). */
    const char *snapshot;
    const ui_action *bar;          /* main actions for the bottom bar, UA_NONE-ended */
    void (*open)(ui_view *v, ui_ctx *c, const char *arg);
    void (*draw)(ui_view *v, ui_ctx *c, WINDOW *w, ui_rect r);
    unsigned (*key)(ui_view *v, ui_ctx *c, ui_action a);
    bool search;                   /* `/` filters its rows by text (ctx.filter[its id]) */
    /* A mouse click on a content row: with `clickable`, view_select moves the cursor there
     * (and, with row_id, follows that row's id); `select` replaces that when set. */
    bool clickable;
    const char *(*row_id)(const ui_ctx *c, const void *st, int row);
    void (*select)(ui_view *v, ui_ctx *c, int row);
    /* A key before the keymap sees it (its pick list typing to match); true when taken.
     * nav: the keymap binds the key alone to a movement (j, k, g...). NULL: the keymap has
     * every key. */
    bool (*raw_key)(ui_view *v, ui_ctx *c, int key, bool nav);
    void (*free)(ui_view *v);
} ui_view_ops;

/* A list view's table across the width (table.h): in wide mode every column whole and
 * the table scrolled sideways. */
typedef struct ui_hscroll {
    int x;                         /* columns of the table scrolled off to the left */
    int steps;                     /* scroll keys since the last draw: > 0 right, < 0 left */
    bool table;                    /* the last draw drew a table (the scroll keys apply) */
    bool cut;                      /* ... with a column cut or hidden: W shows it */
    bool left, right;              /* wide: more of the table to the left, to the right */
} ui_hscroll;

struct ui_view {
    const ui_view_ops *ops;
    ui_list list;
    ui_hscroll h;
    int rows;                      /* content rows at the last draw (paging) */
    int list_y;                    /* screen row of the first list row at the last draw */
    void *st;                      /* view-private state */
};

extern const ui_view_ops view_overview_ops, view_execs_ops, view_chain_ops,
    view_workers_ops, view_queues_ops, view_dlq_ops, view_journal_ops, view_help_ops,
    view_fleet_ops, view_groups_ops, view_drain_ops, view_history_ops, view_detail_ops,
    view_batches_ops;
/* The view of each ui_view_id (viewtable.c); VIEW__COUNT when no view has that name. */
const ui_view_ops *view_ops(ui_view_id id);
ui_view_id view_named(const char *name);

/* ctx helpers (view.c) */
void ctx_fx(ui_ctx *c, fx_kind k, int arg, const char *text);
void ctx_msg(ui_ctx *c, bool error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void sel_clear(ui_sel *s);
void sel_add(ui_sel *s, const char *id, const char *parent, const char *label, const char *fp);
void sel_note(ui_sel *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* sel_add of an execution, with its attempt, its retry eligibility and whether retrying
 * it is a loop retry. */
void sel_add_exec(ui_sel *s, const ui_ctx *c, const rd_execution *e);
/* The same with another target id: a Tasker step read through its chain (whose rows are
 * its transitions). */
void sel_add_exec_as(ui_sel *s, const ui_ctx *c, const rd_execution *e, const char *id);
/* Sets item i's retry eligibility (why copied, may be NULL). */
void sel_set_elig(ui_sel *s, size_t i, rd_elig elig, const char *why);
/* Appends item i of src (every field) to dst; removes item i. */
void sel_add_from(ui_sel *dst, const ui_sel *src, size_t i);
void sel_remove(ui_sel *s, size_t i);
/* The guard's view of item i (guard.h): borrowed strings. */
rd_guard_item sel_guard_item(const ui_sel *s, size_t i);
/* loop_count of e against the journal's manual retries (0 = not a loop retry). */
int ctx_loop(const ui_ctx *c, const rd_execution *e);

/* Now-dependent text, recorded for the tick. ctx_age: "12s" / "5m" (draw.h fmt_age);
 * ctx_eta: "in 4s" / "due" / "-"; ctx_fresh: "" when t is within c->fresh_s of now
 * (returns true), else the age; ctx_source_fresh: the same for a source's last answer,
 * within its own cadence (model.h source_fresh_s). */
void ctx_age(ui_ctx *c, double t, char *out, size_t cap);
void ctx_eta(ui_ctx *c, double t, char *out, size_t cap);
bool ctx_fresh(ui_ctx *c, double t, char *out, size_t cap);
bool ctx_source_fresh(ui_ctx *c, const rd_source_status *s, char *out, size_t cap);
/* "2026-05-01 12:00:03" in UTC, or in the local zone after the toggle; "-" when 0. */
void ctx_time(const ui_ctx *c, double t, char *out, size_t cap);
/* true when any string recorded by the last paint would read differently at now */
bool ctx_ages_changed(const ui_ctx *c, double now);
/* Seconds until one of the ages painted reads differently: min_s when one does by then,
 * max_s when none does by then (min_s > 0). */
double ctx_ages_next_change(const ui_ctx *c, double now, double min_s, double max_s);

/* The id of row `row` of a view's current rows (st: the view's state); NULL = none. */
typedef const char *(*ui_row_id)(const ui_ctx *c, const void *st, int row);
/* After the rows were rebuilt (l->n set): puts the cursor back on the followed id. When
 * that id is no longer among the rows, the status line says "<what> <id> left the view",
 * the cursor stays where it was (clamped) and false is returned: a key that acts must not
 * act on whatever slid under it. Then follows the row under the cursor. */
bool list_follow(ui_list *l, ui_ctx *c, const char *what, ui_row_id id_of, const void *st);
/* Follows the row under the cursor (after the operator moved it). */
void list_pin(ui_list *l, const ui_ctx *c, ui_row_id id_of, const void *st);
/* Forgets the followed id (a new page, filter or jump: the cursor moved on purpose). */
void list_unpin(ui_list *l);
/* Copies text into a buffer of cap bytes, cut on a UTF-8 character boundary. */
void ui_copy_text(char *dst, size_t cap, const char *src);

/* The cursor on content row `row` (a mouse click), pinned to its id when the view has
 * a row_id (v->st is handed to it). */
void view_select(ui_view *v, ui_ctx *c, int row);

/* true when f filters nothing */
bool filter_empty(const ui_filter *f);
/* The filter after a view's title: "  filter: text=... status=..." from column `used` of
 * r's first row (nothing when empty). Returns the column after it. */
int filter_title(ui_ctx *c, WINDOW *w, ui_rect r, int used, const ui_filter *f);

/* list navigation shared by list views: returns UI_CH_REDRAW or UI_CH_UNHANDLED */
unsigned list_nav(ui_list *l, ui_action a, int page);
/* The same, and refresh (FX_REFRESH): the keys a read-only list view takes. */
unsigned list_key(ui_list *l, ui_ctx *c, ui_action a, int page);
void list_fit(ui_list *l, int rows);   /* clamp cur, scroll top so cur is visible */
bool ui_match(const char *hay, const char *needle);   /* case-insensitive substring */
