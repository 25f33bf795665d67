#pragma once
/*
 * Keymaps: built-in defaults from the action list (actlist.h), overridden by files
 * `keymaps/NAME.keymap`:
 *
 *   # comment (a line starting with '#')
 *   retry = r                      # one key
 *   down  = down j ctrl-n          # alternatives, space-separated
 *   drain = ctrl-x+d "ctrl-x D"    # a two-key sequence: joined by '+' or quoted
 *   sort  = none                   # unbind
 *
 * Key names: a character ("r", "?", "#", "plus" for '+'), ctrl-X, alt-X, enter, escape,
 * tab, btab, space, backspace, up, down, left, right, pgup, pgdn, home, end, insert,
 * delete, f1..f12. Unknown actions, bad keys and conflicts are reported file:line.
 */
#include <stdbool.h>
#include <stddef.h>

#include "../core/diag.h"
#include "actlist.h"

typedef int ui_key;   /* unicode char; UK_FN|curses KEY_*; UK_ALT|key */
enum { UK_FN = 0x1000000, UK_ALT = 0x2000000 };
enum { KM_SEQ_MAX = 2 };

typedef enum { KM_NONE = 0, KM_PREFIX, KM_ACTION } km_match;

typedef struct ui_keymap ui_keymap;

ui_keymap *keymap_new(void);                   /* built-in defaults */
void keymap_free(ui_keymap *km);
/* Apply a keymap file (name looked up like profiles, or a path). False on any error;
 * valid lines are still applied. */
bool keymap_load(ui_keymap *km, const char *name_or_path, rd_diags *d);
bool keymap_parse(ui_keymap *km, const char *path, const char *text, rd_diags *d);
/* The same on text[0..len): a NUL byte inside is an error ("file:line: NUL byte"). */
bool keymap_parse_len(ui_keymap *km, const char *path, const char *text, size_t len,
                      rd_diags *d);
const char *keymap_name(const ui_keymap *km);

/* The binding of seq among the actions of one key scope: 0 (the views'), UA_DIALOG or
 * UA_HSCROLL (actlist.h). */
km_match keymap_match(const ui_keymap *km, const ui_key *seq, int n, unsigned scope,
                      ui_action *out);
/* First binding of a as display text ("r", "^x r"); false when unbound. */
bool keymap_first(const ui_keymap *km, ui_action a, char *out, size_t cap);
/* Every binding of a, comma-separated ("" when unbound). */
void keymap_all(const ui_keymap *km, ui_action a, char *out, size_t cap);

bool key_parse(const char *name, ui_key *out);
void key_text(ui_key k, bool compact, char *out, size_t cap);
/* Normalize what wget_wch returned (rc = OK or KEY_CODE_YES). */
ui_key key_from_curses(int rc, unsigned ch);
