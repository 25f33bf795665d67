#pragma once
/* The terminal (term.c): the curses screen and its streams, the key window, colours and
 * mouse, and the loop's events (keys, repaint, tick, signals, the tests' model poll).
 * Opaque: the rest of the console reads keys and arms timers through these functions. */
#include <stdbool.h>
#include <wchar.h>

#include "theme.h"
#include "view.h"
#include "../io/loop.h"

typedef struct ui_term ui_term;

/* The loop's callbacks (loop_cb: fd or signal number, what, user data). */
typedef loop_cb term_event_fn;
typedef struct ui_term_events {
    term_event_fn on_input, on_repaint, on_tick, on_signal;
} ui_term_events;

typedef enum { TERM_REPAINT, TERM_TICK } term_timer;

ui_term *term_new(bool mouse);
void term_free(ui_term *t);   /* its events too; the screen must be closed first */
/* The screen: a real terminal (headless_size NULL) or a virtual WxH one writing to
 * /dev/null. A fallback terminal type leaves a note on ctx's status line. False: the
 * error is on stderr. */
bool term_open(ui_term *t, const char *headless_size, ui_theme *theme, ui_ctx *ctx);
void term_close(ui_term *t);
bool term_is_open(const ui_term *t);
void term_crash_guard(void);
void term_resize(const ui_term *t);   /* a real terminal: its size now */
void term_apply_theme(const ui_term *t, ui_theme *theme);   /* no-op while closed */
void term_mouse(const ui_term *t, bool on);   /* the copy overlay lends the mouse back */
int term_read_key(ui_term *t, wint_t *ch);    /* wget_wch without waiting: ERR when none */
/* The terminal hung up (an SSH session closed, the terminal window gone): its input reads
 * as readable for ever with nothing in it. No SIGHUP need come (the shell above may hold
 * it), so the loop asks this on a wake that gave no key. */
bool term_hung_up(const ui_term *t);

/* Events on base: keys and signals before work (LOOP_PRIO_KEYS). */
bool term_events_add(ui_term *t, rd_loop *base, const ui_term_events *cb, void *ud);
bool term_events_on(const ui_term *t);
void term_arm(ui_term *t, term_timer which, double wait);
void term_poll_every(ui_term *t, rd_loop *base, double every, term_event_fn cb, void *ud);
void term_events_free(ui_term *t);
