#pragma once
/* One paint (paint.c): top bar, the current view, status/prompt line, bottom bar, the
 * dialogs over them. */
typedef struct ui_app ui_app;

void paint_frame(ui_app *app);
