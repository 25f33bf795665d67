#pragma once
/* A small pick-one list drawn over a view (the status picker of `f`): label and count per
 * row, the cursor moved with the movement keys, Enter picks, back/quit close. The view owns
 * it and hands it its keys while it is open. */
#include "view.h"

enum { PICKER_MAX = 40, PICKER_LABEL = 64 };

typedef struct ui_picker {
    bool open;
    int cur, n;
    char typed[24];            /* typed to match: the cursor is on the first row it names */
    char label[PICKER_MAX][PICKER_LABEL];
    char count[PICKER_MAX][24];
} ui_picker;

void picker_reset(ui_picker *p);
/* Adds a row (ignored past PICKER_MAX); count "" = none shown. */
void picker_add(ui_picker *p, const char *label, const char *count);
/* A box centred in r under title. */
void picker_draw(const ui_picker *p, ui_ctx *c, WINDOW *w, ui_rect r, const char *title);
/* One key while open: returns the row picked by Enter (the picker closes), -1 otherwise
 * (moved, or closed by back/quit/the key that opened it: *closed). */
int picker_key(ui_picker *p, ui_action a, bool *closed);
/* A typed key while open (a movement key such as j moves until something is typed: the
 * view decides): a letter, digit, '_' or '-' adds to the text typed, Backspace
 * takes one off; the cursor goes to the first row starting with it (else containing it,
 * either case). false for any other key (the keymap's: movement, Enter, Escape). */
bool picker_type(ui_picker *p, int key);
