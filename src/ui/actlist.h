#pragma once
/*
 * The ONE list of user actions. The enum, the keymap file's action names, the built-in
 * default bindings, the help screen and the bottom bar all derive from this table.
 *
 *   X(ID, "keymap-name", "bar label", "help text", "default keys", flags)
 *
 * Default keys use the keymap syntax (keymap.h): keys separated by spaces, a
 * two-key sequence joined with '+' ("ctrl-x+r") in this table only.
 */
#include <stdbool.h>

enum {
    UA_NAV = 1u << 0,     /* movement: not shown in the bottom bar */
    UA_DANGER = 1u << 1,  /* changes state through the core API: hidden in read-only */
    UA_DIALOG = 1u << 2,  /* answered inside a dialog (own key scope) */
    UA_HSCROLL = 1u << 3, /* answered in wide mode before the view's keys (own key scope) */
};

#define UI_ACTION_LIST(X) \
    X(QUIT, "quit", "quit", "back to the previous view; quit from the top view", "q", 0) \
    X(QUIT_NOW, "quit-now", "quit", "quit at once", "Q", 0) \
    X(BACK, "back", "back", "back to the previous view", "escape backspace left h", UA_NAV) \
    X(HELP, "help", "help", "this help, generated from the loaded keymap", "? f1", 0) \
    X(COMMAND, "command", "cmd", "command mode (:workers, :chain ID, :system NAME, :q)", ":", 0) \
    X(SEARCH, "search", "search", "search: filter this view's rows by text", "/", 0) \
    X(UP, "up", "up", "move up", "up k", UA_NAV) \
    X(DOWN, "down", "down", "move down", "down j", UA_NAV) \
    X(PAGE_UP, "page-up", "pgup", "scroll a screen up", "pgup ctrl-b", UA_NAV) \
    X(PAGE_DOWN, "page-down", "pgdn", "scroll a screen down", "pgdn ctrl-f", UA_NAV) \
    X(TOP, "top", "top", "first row", "home g", UA_NAV) \
    X(BOTTOM, "bottom", "bottom", "last row", "end G", UA_NAV) \
    X(OPEN, "open", "open", "open the selected row (chain, payload, worker)", "enter right l", UA_NAV) \
    X(VIEW_OVERVIEW, "view-overview", "overview", "overview view", "1 o", 0) \
    X(VIEW_EXECS, "view-executions", "execs", "executions view", "2 e", 0) \
    X(VIEW_WORKERS, "view-workers", "workers", "workers view", "3 w", 0) \
    X(VIEW_QUEUES, "view-queues", "queues", "queues view", "4 u", 0) \
    X(VIEW_DLQ, "view-dlq", "dlq", "DLQ view (peeks: RabbitMQ requeues peeked messages)", "5", 0) \
    X(VIEW_JOURNAL, "view-journal", "journal", "journal of your actions", "6 J", 0) \
    X(VIEW_FLEET, "view-fleet", "fleet", "fleet view: every configured system, worst first", "0", 0) \
    X(VIEW_GROUPS, "view-groups", "groups", "error groups: failed executions by error fingerprint", "7 E", 0) \
    X(VIEW_HISTORY, "view-history", "history", "history: the last hour as charts", "H", 0) \
    X(DETAIL, "detail", "detail", "one execution in full: whole error, backtrace, parameters, result (c copies the payload)", "d", 0) \
    X(REFRESH, "refresh", "refresh", "refresh now (in the DLQ view: peek again)", "ctrl-r f5", 0) \
    X(REDRAW, "redraw", "redraw", "redraw the whole screen", "ctrl-l", UA_NAV) \
    X(NEXT_PAGE, "next-page", "older", "next (older) page of executions", "] n", 0) \
    X(PREV_PAGE, "prev-page", "newer", "previous (newer) page of executions", "[ p", 0) \
    X(JUMP, "jump", "jump", "jump to an execution id", "#", 0) \
    X(FILTER_STATUS, "filter-status", "status", "pick the status filter (with counts)", "f", 0) \
    X(FILTER_FP, "filter-fingerprint", "same-error", "filter by the selected row's error fingerprint", "F", 0) \
    X(FILTER_CLEAR, "filter-clear", "clear", "clear this view's filter", "C", 0) \
    X(SORT, "sort", "sort", "cycle the sort order", "s", 0) \
    X(MARK, "mark", "mark", "mark / unmark the selected row", "space", 0) \
    X(MARK_RANGE, "mark-range", "range", "mark every row from the last mark to here", "v", 0) \
    X(MARK_CLEAR, "unmark-all", "unmark", "clear all marks", "M", 0) \
    X(GROUP_BY, "group-by", "group", "DLQ: group the entries by reason, by queue, or not (enter: a group's entries)", "b", 0) \
    X(PEEK_MORE, "peek-more", "more", "DLQ: peek the next page", "m", 0) \
    X(STANDS_OUT, "stands-out", "stands-out", "error groups: pick one of what stands out about the group (enter: its members on it)", "tab", 0) \
    X(RETRY, "retry", "retry", "retry the selected or marked executions (error groups: the whole group in the window)", "r", UA_DANGER) \
    X(RETRY_ALL, "retry-all", "retry-all", "retry everything the executions filter matches, every page of the store (:retry-all DUR: in a window); error groups: the whole group; DLQ: every entry its search matches", "R", UA_DANGER) \
    X(DRAIN, "drain", "drain", "drain (cordon) the selected worker", "D", UA_DANGER) \
    X(UNDRAIN, "undrain", "undrain", "undrain (uncordon) the selected worker", "U", UA_DANGER) \
    X(DEACTIVATE, "deactivate", "deactivate", "mark the selected worker inactive", "X", UA_DANGER) \
    X(ACTIVATE, "activate", "activate", "mark the selected worker active", "A", UA_DANGER) \
    X(RESOLVE, "resolve", "resolve", "DLQ: resolve the selected entry through the core (Tasker's DLQ update)", "V", UA_DANGER) \
    X(COPY, "copy", "copy", "copy the selected or marked ids (OSC 52 with clipboard = osc52, else shown to select)", "c", 0) \
    X(TOGGLE_TIME, "toggle-time", "abs-time", "times as ages (12s) or as clock times", "T", 0) \
    X(TOGGLE_TZ, "toggle-timezone", "utc/local", "clock times in UTC or in the local zone", "Z", 0) \
    X(WIDE, "wide", "wide", "wide mode: every list column whole, scrolled sideways (again: fitted to the screen)", "W", 0) \
    X(SCROLL_LEFT, "scroll-left", "left", "wide mode: scroll the table left (the mark at the header's left end: more there)", "h left", UA_NAV | UA_HSCROLL) \
    X(SCROLL_RIGHT, "scroll-right", "right", "wide mode: scroll the table right (the mark at the header's right end: more there)", "l right", UA_NAV | UA_HSCROLL) \
    X(CONFIRM, "confirm", "yes", "dialog: confirm", "y", UA_DIALOG) \
    X(CANCEL, "cancel", "no", "dialog: cancel / close", "n escape q", UA_DIALOG) \
    X(ABORT, "abort", "abort", "dialog: stop a running bulk action", "x ctrl-g", UA_DIALOG) \
    X(OVERRIDE, "override-loop", "override", "dialog: send what the guard holds back too (ineligible: type the count; loop retries); journaled", "O", UA_DIALOG) \
    X(RATE_UP, "rate-up", "rate+", "a running batch: a higher rate, at once (journaled: a resume keeps it)", "plus =", UA_DIALOG) \
    X(RATE_DOWN, "rate-down", "rate-", "a running batch: a lower rate, at once (journaled)", "-", UA_DIALOG) \
    X(CONC_UP, "concurrency-up", "window+", "a running batch: more requests in flight (from its next part of 256; journaled)", ">", UA_DIALOG) \
    X(CONC_DOWN, "concurrency-down", "window-", "a running batch: fewer requests in flight (from its next part; journaled)", "<", UA_DIALOG) \
    X(BATCH_RESUME, "batch-resume", "resume", ":batches: resume the selected batch (asks first)", "S", UA_DANGER) \
    X(BATCH_PAUSE, "batch-pause", "pause", ":batches: pause the selected batch (recorded: a run anywhere stops at its next part)", "P", UA_DANGER) \
    X(BATCH_ABORT, "batch-abort", "abort", ":batches: stop sending the selected batch now (it stays open, resumable)", "x", UA_DANGER) \
    X(BATCH_RATE_UP, "batch-rate-up", "rate+", ":batches: a higher rate for the selected batch (journaled)", "plus =", 0) \
    X(BATCH_RATE_DOWN, "batch-rate-down", "rate-", ":batches: a lower rate for the selected batch (journaled)", "-", 0) \
    X(BATCH_CONC_UP, "batch-concurrency-up", "window+", ":batches: more requests in flight for the selected batch", ">", 0) \
    X(BATCH_CONC_DOWN, "batch-concurrency-down", "window-", ":batches: fewer requests in flight for the selected batch", "<", 0) \
    X(RESEND, "resend", "re-send", "dialog: re-send the selected maybe-applied item with the same Idempotency-Key", "R", UA_DIALOG)

typedef enum {
#define UI_X(id, name, label, help, keys, flags) UA_##id,
    UI_ACTION_LIST(UI_X)
#undef UI_X
    UA__COUNT,
    UA_NONE = -1,
} ui_action;

typedef struct ui_action_info {
    const char *name;     /* keymap name */
    const char *label;    /* short bottom-bar label */
    const char *help;
    const char *keys;     /* default keys */
    unsigned flags;
} ui_action_info;

const ui_action_info *actlist_info(ui_action a);
ui_action actlist_find(const char *name);      /* UA_NONE when unknown */
