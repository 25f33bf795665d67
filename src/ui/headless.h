#pragma once
/* Headless mode for screen tests (headless.c): keys from a script, the screen as text. */
#include <stdio.h>

typedef struct ui_app ui_app;

int headless_run(ui_app *app, const char *script);
