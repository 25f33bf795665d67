#pragma once
/*
 * Themes: named colour slots (the ONE list below), files `themes/NAME.theme`:
 *
 *   # comment
 *   include = default              # start from another theme
 *   danger  = white red bold       # slot = fg bg [attrs...]
 *   cursor  = default 236 none     # 8-colour names, bright-NAME, 0-255, #rrggbb, default
 *
 * Attributes: bold dim underline reverse standout blink italic none. Colours the
 * terminal lacks fall back to the nearest available; without colours (NO_COLOR,
 * monochrome terminals) only attributes are used, and each slot has a monochrome
 * fallback so the cursor and the banner stay visible.
 */
#include <stdbool.h>
#include <stddef.h>

#include "../core/diag.h"

/* X(ID, "name", "built-in default: fg bg attrs", "monochrome attrs") */
#define UI_SLOT_LIST(X) \
    X(NORMAL, "normal", "default default", "") \
    X(TOPBAR, "topbar", "white blue", "reverse") \
    X(DANGER, "danger", "bright-white red bold", "reverse bold blink") \
    X(TITLE, "title", "bright-white default bold", "bold") \
    X(HEADER, "header", "cyan default bold", "underline") \
    X(CURSOR, "cursor", "black cyan", "reverse") \
    X(MARKED, "marked", "yellow default bold", "bold") \
    X(OK, "ok", "green default", "") \
    X(FAILED, "failed", "red default bold", "bold") \
    X(RUNNING, "running", "cyan default", "") \
    X(WARNING, "warning", "yellow default", "underline") \
    X(DIM, "dim", "bright-black default", "dim") \
    X(ALERT, "alert", "bright-white red", "reverse") \
    X(STALE, "stale", "yellow default bold", "bold") \
    X(DOWN, "down", "bright-white red bold", "reverse") \
    X(KEY, "key", "black cyan", "reverse") \
    X(BOTTOMBAR, "bottombar", "default default", "") \
    X(MESSAGE, "message", "green default", "") \
    X(ERROR, "error", "bright-white red bold", "reverse bold") \
    X(DIALOG, "dialog", "white blue", "") \
    X(DIALOG_DANGER, "dialog-danger", "bright-yellow blue bold", "bold underline")

typedef enum {
#define UI_X(id, name, def, mono) TS_##id,
    UI_SLOT_LIST(UI_X)
#undef UI_X
    TS__COUNT
} ui_slot;

typedef struct ui_theme ui_theme;

ui_theme *theme_new(void);                       /* built-in default */
void theme_free(ui_theme *t);
/* Load a theme by name or path over the built-in default; every error file:line. */
bool theme_load(ui_theme *t, const char *name_or_path, rd_diags *d);
bool theme_parse(ui_theme *t, const char *path, const char *text, rd_diags *d);
/* The same on text[0..len): a NUL byte inside is an error ("file:line: NUL byte"). */
bool theme_parse_len(ui_theme *t, const char *path, const char *text, size_t len, rd_diags *d);
const char *theme_name(const ui_theme *t);
/* After start_color (or with colours off): compute the curses attributes per slot. */
void theme_apply(ui_theme *t, bool colour);
int theme_attr(const ui_theme *t, ui_slot s);    /* attr_t as int, with colour pair */
const char *slot_name(ui_slot s);
