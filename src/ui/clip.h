#pragma once
/* Copy ids (OSC 52 or the overlay) and :export (clip.c). */
#include <curses.h>
#include <stdbool.h>

typedef struct ui_app ui_app;

void clip_copy(ui_app *app);                 /* the ids in ctx.sel */
void clip_close(ui_app *app);
void clip_draw(ui_app *app, WINDOW *w);
void clip_export(ui_app *app, const char *arg, bool force);
