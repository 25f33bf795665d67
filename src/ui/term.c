/* The terminal: curses set-up with fallbacks, restore on exit, signals and crashes; the
 * loop's events. */
#include "ui_term.h"

#include <curses.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <term.h>

#include "../core/xalloc.h"
#include "../io/clock.h"
#include "../io/loop.h"

struct ui_term {
    SCREEN *screen;
    FILE *out, *in;            /* a virtual screen's streams (/dev/null), NULL on a real one */
    WINDOW *input;             /* the key window: keypad, no delay */
    bool colour, mouse, headless;
    rd_event *ev_input, *ev_tick, *ev_repaint, *ev_poll, *ev_sig[5];
};

/* The one piece of state a crash handler can reach: termios saved before curses
 * touched the terminal. Written once at start, read only by the handler. */
static struct {
    bool saved;
    struct termios tio;
} crash_state;

static const char reset_seq[] = "\033[0m\033[?1000l\033[?1002l\033[?1006l\033[?25h\033[?1049l\r\n";

static void crash_handler(int sig)
{
    if (crash_state.saved)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &crash_state.tio);
    ssize_t w = write(STDOUT_FILENO, reset_seq, sizeof reset_seq - 1);
    (void)w;
    signal(sig, SIG_DFL);
    raise(sig);
}

void term_crash_guard(void)
{
    if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &crash_state.tio) == 0)
        crash_state.saved = true;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = crash_handler;
    sa.sa_flags = (int)SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    int sigs[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
        sigaction(sigs[i], &sa, NULL);
}

/* A type without a terminfo entry is refused by setupterm() first: newterm() leaks the
 * screen it began when it fails (ncurses 6.4). */
static SCREEN *term_try(const char *type, FILE *out, FILE *in)
{
    int err = 0;
    if (setupterm(type, fileno(out), &err) != OK)
        return NULL;
    del_curterm(cur_term);
    return newterm(type, out, in);
}

static bool term_start(ui_term *t, FILE *out, FILE *in, const char *type, ui_ctx *ctx)
{
    const char *fallbacks[] = {type, "xterm", "vt100"};
    for (size_t i = 0; i < sizeof fallbacks / sizeof *fallbacks && !t->screen; i++) {
        if (i > 0 && type == NULL && !getenv("TERM"))
            continue;
        t->screen = term_try(fallbacks[i], out, in);
        if (t->screen && i > 0) {
            char msg[160];
            snprintf(msg, sizeof msg, "terminal type '%s' is unknown here: using %s (monochrome)",
                     type ? type : getenv("TERM") ? getenv("TERM") : "(unset)", fallbacks[i]);
            ctx_msg(ctx, true, "%s", msg);
            t->colour = false;
        }
    }
    if (!t->screen) {
        fprintf(stderr, "redrive: cannot use terminal type '%s' (no terminfo entry); "
                        "set TERM to a known type such as xterm-256color or vt100\n",
                getenv("TERM") ? getenv("TERM") : "(unset)");
        return false;
    }
    set_term(t->screen);
    return true;
}

static void term_modes(ui_term *t, ui_theme *theme)
{
    cbreak();
    noecho();
    nonl();
    intrflush(stdscr, FALSE);
    keypad(stdscr, TRUE);
    if (!getenv("ESCDELAY"))
        set_escdelay(25);
    t->input = newwin(1, 1, 0, 0);
    keypad(t->input, TRUE);
    nodelay(t->input, TRUE);
    /* no poll() of the keyboard inside every doupdate: the loop reads keys before it paints */
    typeahead(-1);
    wnoutrefresh(t->input);
    curs_set(0);
    const char *nc = getenv("NO_COLOR");
    if (nc && *nc)
        t->colour = false;
    if (t->colour && has_colors()) {
        start_color();
        use_default_colors();
        t->colour = COLORS >= 8;
    } else
        t->colour = false;
    theme_apply(theme, t->colour);
    term_mouse(t, true);
}

/*
 * One write() per paint. Until a screen has been suspended (endwin) and resumed once,
 * ncurses treats it as still being set up and flushes its output buffer after every
 * cursor movement: a full repaint went out in ~25 writes of ~120 bytes, each a trip
 * through the tty layer (about a third of a repaint's CPU, and as many small packets
 * over SSH). Suspending and resuming once, before anything is drawn, puts it in its
 * running state, where doupdate() fills the buffer and writes it once (twice when a
 * paint exceeds the buffer: (lines + 2) x (columns + 6) bytes). The terminal sees the
 * alternate screen left and re-entered and a clear, before the first frame; done before
 * colours start, so the resume has no palette to reset (no OSC 104).
 */
static void term_batch_output(void)
{
    endwin();
    doupdate();
}

ui_term *term_new(bool mouse)
{
    ui_term *t = xcalloc(1, sizeof *t);
    t->mouse = mouse;
    return t;
}

void term_free(ui_term *t)
{
    if (!t)
        return;
    term_events_free(t);
    free(t);
}

bool term_open(ui_term *t, const char *headless_size, ui_theme *theme, ui_ctx *ctx)
{
    t->colour = true;
    if (headless_size) {
        int w = 80, h = 24;
        if (sscanf(headless_size, "%dx%d", &w, &h) != 2 || w < 20 || h < 5 || w > 1000 || h > 1000) {
            fprintf(stderr, "redrive: REDRIVE_HEADLESS wants WxH (e.g. 80x24), got '%s'\n", headless_size);
            return false;
        }
        t->headless = true;
        t->out = fopen("/dev/null", "w");
        t->in = fopen("/dev/null", "r");
        if (!t->out || !t->in || !term_start(t, t->out, t->in, "xterm-256color", ctx))
            return false;
        resize_term(h, w);
        t->mouse = false;
        term_modes(t, theme);
        return true;
    }
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fprintf(stderr, "redrive: the console needs a terminal (use 'redrive snapshot' in scripts)\n");
        return false;
    }
    term_crash_guard();
    if (!term_start(t, stdout, stdin, NULL, ctx))
        return false;
    term_batch_output();   /* before colours and the mouse: nothing of theirs to reset */
    term_modes(t, theme);
    return true;
}

void term_close(ui_term *t)
{
    if (!t || !t->screen)
        return;
    if (t->input)
        delwin(t->input);
    t->input = NULL;
    if (t->mouse)
        mousemask(0, NULL);
    curs_set(1);
    endwin();
    delscreen(t->screen);
    t->screen = NULL;
    if (t->out)
        fclose(t->out);
    if (t->in)
        fclose(t->in);
    t->out = t->in = NULL;
}

bool term_is_open(const ui_term *t)
{
    return t && t->screen;
}

void term_resize(const ui_term *t)
{
    if (t && !t->headless) {
        struct winsize ws;
        if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
            resize_term(ws.ws_row, ws.ws_col);
    }
}

void term_apply_theme(const ui_term *t, ui_theme *theme)
{
    if (term_is_open(t))
        theme_apply(theme, t->colour);
}

void term_mouse(const ui_term *t, bool on)
{
    if (!term_is_open(t) || !t->mouse)
        return;
    mmask_t mask = 0;
    if (on) {
        mask = BUTTON1_CLICKED | BUTTON1_DOUBLE_CLICKED | BUTTON4_PRESSED;
#ifdef BUTTON5_PRESSED
        mask |= BUTTON5_PRESSED;
#endif
    }
    mousemask(mask, NULL);
}

int term_read_key(ui_term *t, wint_t *ch)
{
    return t->input ? wget_wch(t->input, ch) : ERR;
}

bool term_hung_up(const ui_term *t)
{
    (void)t;
    struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
    return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR | POLLNVAL));
}

/* ---- the loop's events ---- */

bool term_events_add(ui_term *t, rd_loop *base, const ui_term_events *cb, void *ud)
{
    t->ev_repaint = loop_timer_new(base, cb->on_repaint, ud);
    t->ev_tick = loop_timer_new(base, cb->on_tick, ud);
    int sigs[5] = {SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGQUIT};
    for (int i = 0; i < 5; i++) {
        t->ev_sig[i] = loop_signal_new(base, sigs[i], cb->on_signal, ud);
        loop_event_keys(t->ev_sig[i]);
    }
    t->ev_input = loop_fd_new(base, STDIN_FILENO, LOOP_READ | LOOP_PERSIST, cb->on_input, ud);
    if (t->ev_input)
        loop_event_keys(t->ev_input);
    return t->ev_input != NULL;
}

bool term_events_on(const ui_term *t)
{
    return t && t->ev_repaint;
}

void term_arm(ui_term *t, term_timer which, double wait)
{
    rd_event *ev = which == TERM_TICK ? t->ev_tick : t->ev_repaint;
    if (ev)
        loop_timer_in(ev, wait);
}

void term_poll_every(ui_term *t, rd_loop *base, double every, term_event_fn cb, void *ud)
{
    t->ev_poll = loop_every_new(base, cb, ud);
    loop_timer_in(t->ev_poll, every);
}

void term_events_free(ui_term *t)
{
    rd_event **evs[] = {&t->ev_input, &t->ev_repaint, &t->ev_tick, &t->ev_poll, &t->ev_sig[0],
                            &t->ev_sig[1], &t->ev_sig[2], &t->ev_sig[3], &t->ev_sig[4]};
    for (size_t i = 0; i < sizeof evs / sizeof *evs; i++)
        if (*evs[i]) {
            loop_event_free(*evs[i]);
            *evs[i] = NULL;
        }
}
