/* Copy ids (OSC 52 or a selectable overlay) and `:export` of the current view to a file. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../core/export.h"
#include "../core/fsperm.h"
#include "../core/sanitize.h"
#include "../core/textutil.h"
#include "../core/views.h"
#include "../core/xalloc.h"
#include "app_priv.h"
#include "clip.h"
#include "ui_term.h"
#include "draw.h"

enum { CLIP_MAX = 64 * 1024 };   /* terminals cap OSC 52; ids beyond this are left out */

/* The ids as one text, one a line, each sanitized (no control or bidi character can
 * reach the clipboard or the screen). */
static char *clip_text(const ui_sel *sel, size_t *n_out)
{
    char *out = xstrdup("");
    size_t len = 0, n = 0;
    for (size_t i = 0; i < sel->n; i++) {
        char *id = sanitize_str(sel->ids[i], 0);
        size_t k = strlen(id);
        if (len + k + 1 > CLIP_MAX) {
            free(id);
            break;
        }
        out = xrealloc(out, len + k + 2);
        memcpy(out + len, id, k);
        len += k;
        out[len++] = '\n';
        out[len] = 0;
        n++;
        free(id);
    }
    if (len)
        out[--len] = 0;   /* no newline after the last */
    *n_out = n;
    return out;
}

static bool clip_osc52(ui_app *app, const char *text)
{
    if (app->headless)
        return true;   /* no terminal: the tests check the message */
    char *b64 = text_base64(text, strlen(text));
    char *seq = xasprintf("\033]52;c;%s\a", b64);
    size_t len = strlen(seq), off = 0;
    fflush(stdout);
    while (off < len) {
        ssize_t w = write(STDOUT_FILENO, seq + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    free(seq);
    free(b64);
    return off == len;
}

void clip_copy(ui_app *app)
{
    ui_ctx *c = &app->ctx;
    if (!c->sel.n) {
        ctx_msg(c, true, "nothing to copy here");
        return;
    }
    size_t n = 0;
    char *text = clip_text(&c->sel, &n);
    const rd_system_cfg *sys = app_sys(app);
    bool osc = sys && sys->ui.clipboard && strcmp(sys->ui.clipboard, "osc52") == 0;
    /* one labelled item (the detail pane's payload) is named by its label */
    const char *what = c->sel.n == 1 && c->sel.labels && c->sel.labels[0] ? c->sel.labels[0] : NULL;
    if (n == 0 && what) {
        ctx_msg(c, true, "the %s is larger than a terminal's clipboard takes (64 KiB)", what);
        free(text);
        return;
    }
    if (osc && clip_osc52(app, text)) {
        if (what)
            ctx_msg(c, false, "copied the %s to the clipboard (OSC 52)", what);
        else
            ctx_msg(c, false, "copied %zu id%s to the clipboard (OSC 52)%s", n, n == 1 ? "" : "s",
                    n < c->sel.n ? ": the rest did not fit" : "");
        free(text);
        return;
    }
    free(app->clip);
    app->clip = text;   /* the overlay: plain text the terminal can select */
    term_mouse(app->term, false);   /* the terminal's own selection works again while it is up */
    if (what)
        ctx_msg(c, false, "the %s shown to select%s", what, osc ? "" : " (clipboard = osc52 in the config copies directly)");
    else
        ctx_msg(c, false, "%zu id%s shown to select%s", n, n == 1 ? "" : "s",
                osc ? "" : " (clipboard = osc52 in the config copies directly)");
}

void clip_close(ui_app *app)
{
    free(app->clip);
    app->clip = NULL;
    term_mouse(app->term, true);
}

void clip_draw(ui_app *app, WINDOW *w)
{
    int rows = getmaxy(w), cols = getmaxx(w);
    size_t n = 1;
    for (const char *p = app->clip; *p; p++)
        n += *p == '\n';
    /* whole rows: nothing of the rows underneath is left beside the text to be selected */
    int bh = (int)n + 4 > rows - 2 ? rows - 2 : (int)n + 4, bw = cols - 4;
    int y0 = (rows - bh) / 2, x0 = 2, attr = theme_attr(app->theme, TS_DIALOG);
    for (int y = 0; y < bh; y++)
        draw_fill(w, y0 + y, 0, cols, attr);
    draw_clean(w, y0, x0 + 1, bw - 2, "copy: select the text with the mouse (any key closes)", attr | A_BOLD);
    const char *p = app->clip;
    for (int y = 0; y < bh - 3 && *p; y++) {
        size_t k = strcspn(p, "\n");
        char *line = xstrndup(p, k);
        draw_clean(w, y0 + 2 + y, x0 + 1, bw - 2, line, attr);   /* already sanitized */
        free(line);
        p += k + (p[k] ? 1 : 0);
    }
}

/* ---- :export ---- */

/* The view's snapshot view when `:export` has a table for it, else its name (the error
 * names it). */
static const char *view_export_name(const ui_app *app)
{
    const ui_view_ops *ops = app->views[app->cur].ops;
    const rd_view *v = ops->snapshot ? view_find(ops->snapshot) : NULL;
    return v && v->exportable ? v->name : ops->name;
}

/* The file opened for the export: never blocking (a FIFO without a reader is ENXIO at
 * once, one with a reader is refused), and only a regular file of ours is overwritten:
 * the check is made on the opened file before it is emptied (no O_TRUNC), so root's
 * :export! never empties another user's file. */
static int export_open(const char *path, bool secret, bool force, char *why, size_t cap)
{
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
                (force ? 0 : O_EXCL);
    int fd = open(path, flags, secret ? 0600 : 0644);
    struct stat st;
    if (fd < 0) {
        int e = errno;
        if (e == ENXIO && lstat(path, &st) == 0)
            snprintf(why, cap, "not a regular file (%s): nothing written", fsperm_kind(st.st_mode));
        else
            snprintf(why, cap, "%s", e == EEXIST ? "exists (:export! overwrites)" : strerror(e));
        return -1;
    }
    bool ok = false;
    if (fstat(fd, &st) != 0)
        snprintf(why, cap, "%s", strerror(errno));
    else if (!S_ISREG(st.st_mode))
        snprintf(why, cap, "not a regular file (%s): nothing written", fsperm_kind(st.st_mode));
    else if (st.st_uid != geteuid())
        snprintf(why, cap, "owned by uid %u, not by you (uid %u): not overwritten",
                 (unsigned)st.st_uid, (unsigned)geteuid());
    else if (ftruncate(fd, 0) != 0)
        snprintf(why, cap, "truncate: %s", strerror(errno));
    else
        ok = true;
    if (!ok) {
        close(fd);
        return -1;
    }
    return fd;
}

static bool export_write(const char *path, const char *data, bool secret, bool force, char *why, size_t cap)
{
    int fd = export_open(path, secret, force, why, cap);
    if (fd < 0)
        return false;
    if (secret && fchmod(fd, 0600) != 0) {   /* an overwritten file keeps no wider mode */
        snprintf(why, cap, "chmod: %s", strerror(errno));
        close(fd);
        return false;
    }
    size_t len = strlen(data), off = 0;
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            snprintf(why, cap, "write: %s", strerror(errno));
            close(fd);
            return false;
        }
        off += (size_t)w;
    }
    if (close(fd) != 0) {
        snprintf(why, cap, "close: %s", strerror(errno));
        return false;
    }
    return true;
}

/* Without a path: $XDG_DATA_HOME/redrive/exports/redrive-VIEW-STAMP.FMT (else under
 * ~/.local/share), its directories made; NULL with why when there is none. */
static char *export_default_path(const char *view, const char *fmt, double now, char *why, size_t cap)
{
    char *dir = text_data_dir();
    if (!dir) {
        snprintf(why, cap, "no data directory (set XDG_DATA_HOME or HOME)");
        return NULL;
    }
    time_t t = (time_t)now;
    struct tm tm;
    gmtime_r(&t, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    char *path = xasprintf("%s/exports/redrive-%s-%s.%s", dir, view, stamp, fmt);
    free(dir);
    if (!text_make_parent_dirs(path, why, cap)) {
        free(path);
        return NULL;
    }
    return path;
}

/* "[csv|json] [PATH]": the format (csv when none) and the path, whole (never cut: one
 * too long for the system is refused by name); false when the format is not one. */
static bool export_args(const char *arg, char *fmt, size_t fmtcap, const char **path)
{
    arg += strspn(arg, " ");
    size_t n = strcspn(arg, " \n");
    if (n >= fmtcap)
        return false;
    if (n)
        snprintf(fmt, fmtcap, "%.*s", (int)n, arg);
    else
        snprintf(fmt, fmtcap, "csv");                       /* `:export` alone: CSV */
    arg += n;
    arg += strspn(arg, " ");
    *path = arg;
    return strcmp(fmt, "csv") == 0 || strcmp(fmt, "json") == 0;
}

void clip_export(ui_app *app, const char *arg, bool force)
{
    ui_ctx *c = &app->ctx;
    char fmt[16], err[512];
    const char *path = "";
    if (!export_args(arg, fmt, sizeof fmt, &path)) {
        ctx_msg(c, true, "usage: :export[!] [csv|json] [PATH]");
        return;
    }
    size_t plen = strcspn(path, "\n");
    if (plen >= PATH_MAX) {
        ctx_msg(c, true, "export: the path is %zu bytes long, the system takes %d at most: "
                "nothing written", plen, PATH_MAX - 1);
        return;
    }
    const char *view = view_export_name(app);
    double now = app_now(app);
    char *data = export_render(app_model(app), view, fmt[0] == 'c' ? EXPORT_CSV : EXPORT_JSON, now, err, sizeof err);
    if (!data) {
        ctx_msg(c, true, "%s", err);
        return;
    }
    char *file = plen ? xstrndup(path, plen) : export_default_path(view, fmt, now, err, sizeof err);
    bool secret = export_has_payloads(view);
    if (file && export_write(file, data, secret, force, err, sizeof err)) {
        char *abs = realpath(file, NULL);   /* where it is, whatever the console's directory */
        ctx_msg(c, false, "exported the %s view to %s (%s%s)", view, abs ? abs : file, fmt,
                secret ? ", mode 0600: payloads" : "");
        free(abs);
    } else {
        ctx_msg(c, true, "export to %s: %s", file ? file : "the data directory", err);
    }
    free(file);
    free(data);
}
