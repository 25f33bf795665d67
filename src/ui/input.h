#pragma once
/* Keys → actions (input.c): the keymap with two-key sequences, the prompt line (command
 * mode with its history, search, jump), the mouse. */
#include <stdbool.h>
#include <stddef.h>

#include "keymap.h"

typedef struct ui_app ui_app;

enum { CMD_HIST_MAX = 32 };

typedef struct ui_prompt {
    bool active;
    int kind;                  /* PROMPT_* */
    char buf[256];
    size_t len;
    bool full;                 /* a key did not fit: the line is not run (never cut) */
    char hint[200];            /* command mode: the matches of the last Tab (clean text) */
    int hist_at;               /* command mode: the history line shown (Up/Down), -1 none */
    /* PROMPT_TYPED: the question, the count to type and the batch it resumes (batches.c) */
    char lead[120];
    size_t want;
    char batch[17];
} ui_prompt;

/* The command lines run this session, oldest first (Up in command mode recalls them). */
typedef struct ui_cmd_hist {
    char line[CMD_HIST_MAX][256];
    int n;
} ui_cmd_hist;

/* One decoded key; returns true when the screen must be repainted. */
bool input_key(ui_app *app, ui_key k);
void input_mouse(ui_app *app);
