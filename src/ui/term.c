/* The terminal: curses set-up with fallbacks, restore on exit, signals and crashes. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "app.h"

#include <term.h>

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

static bool term_start(ui_app *app, FILE *out, FILE *in, const char *type)
{
    const char *fallbacks[] = {type, "xterm", "vt100"};
    for (size_t i = 0; i < sizeof fallbacks / sizeof *fallbacks && !app->screen; i++) {
        if (i > 0 && type == NULL && !getenv("TERM"))
            continue;
        app->screen = term_try(fallbacks[i], out, in);
        if (app->screen && i > 0) {
            char msg[160];
            snprintf(msg, sizeof msg, "terminal type '%s' is unknown here: using %s (monochrome)",
                     type ? type : getenv("TERM") ? getenv("TERM") : "(unset)", fallbacks[i]);
            ctx_msg(&app->ctx, true, "%s", msg);
            app->colour = false;
        }
    }
    if (!app->screen) {
        fprintf(stderr, "redrive: cannot use terminal type '%s' (no terminfo entry); "
                        "set TERM to a known type such as xterm-256color or vt100\n",
                getenv("TERM") ? getenv("TERM") : "(unset)");
        return false;
    }
    set_term(app->screen);
    return true;
}

static void term_modes(ui_app *app)
{
    cbreak();
    noecho();
    nonl();
    intrflush(stdscr, FALSE);
    keypad(stdscr, TRUE);
    if (!getenv("ESCDELAY"))
        set_escdelay(25);
    app->input = newwin(1, 1, 0, 0);
    keypad(app->input, TRUE);
    nodelay(app->input, TRUE);
    /* no poll() of the keyboard inside every doupdate: the loop reads keys before it paints */
    typeahead(-1);
    wnoutrefresh(app->input);
    curs_set(0);
    const char *nc = getenv("NO_COLOR");
    if (nc && *nc)
        app->colour = false;
    if (app->colour && has_colors()) {
        start_color();
        use_default_colors();
        app->colour = COLORS >= 8;
    } else
        app->colour = false;
    theme_apply(app->theme, app->colour);
    if (app->mouse) {
        mmask_t mask = BUTTON1_CLICKED | BUTTON1_DOUBLE_CLICKED | BUTTON4_PRESSED;
#ifdef BUTTON5_PRESSED
        mask |= BUTTON5_PRESSED;
#endif
        mousemask(mask, NULL);
    }
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

bool term_open(ui_app *app, const char *headless_size)
{
    app->colour = true;
    if (headless_size) {
        int w = 80, h = 24;
        if (sscanf(headless_size, "%dx%d", &w, &h) != 2 || w < 20 || h < 5 || w > 1000 || h > 1000) {
            fprintf(stderr, "redrive: REDRIVE_HEADLESS wants WxH (e.g. 80x24), got '%s'\n", headless_size);
            return false;
        }
        app->term_out = fopen("/dev/null", "w");
        app->term_in = fopen("/dev/null", "r");
        if (!app->term_out || !app->term_in || !term_start(app, app->term_out, app->term_in, "xterm-256color"))
            return false;
        resize_term(h, w);
        app->mouse = false;
        term_modes(app);
        return true;
    }
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fprintf(stderr, "redrive: the console needs a terminal (use 'redrive snapshot' in scripts)\n");
        return false;
    }
    term_crash_guard();
    if (!term_start(app, stdout, stdin, NULL))
        return false;
    term_batch_output();   /* before colours and the mouse: nothing of theirs to reset */
    term_modes(app);
    return true;
}

void term_close(ui_app *app)
{
    if (!app->screen)
        return;
    if (app->input)
        delwin(app->input);
    app->input = NULL;
    if (app->mouse)
        mousemask(0, NULL);
    curs_set(1);
    endwin();
    delscreen(app->screen);
    app->screen = NULL;
    if (app->term_out)
        fclose(app->term_out);
    if (app->term_in)
        fclose(app->term_in);
    app->term_out = app->term_in = NULL;
}

void term_resize(ui_app *app)
{
    if (!app->headless) {
        struct winsize ws;
        if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
            resize_term(ws.ws_row, ws.ws_col);
    }
    app->dirty = true;
    app->full_redraw = true;
}
