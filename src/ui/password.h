#pragma once
/* The jwt-login password prompt (password.c). buf is never drawn and wiped after use. */
#include <curses.h>
#include <stdbool.h>
#include <stddef.h>

#include "keymap.h"

typedef struct ui_app ui_app;

typedef struct ui_password {
    bool active;
    char prompt[200];
    char buf[256];
    size_t len;
} ui_password;

void password_open(ui_app *app, const char *prompt);
void password_close(ui_app *app);
void password_key(ui_app *app, ui_key k);
void password_draw(ui_app *app, WINDOW *w);
