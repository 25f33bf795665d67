/* Headless mode for screen tests: keys from a script, the virtual screen dumped as text.
 *
 * Script lines:  key NAME...   (keymap key names: j, enter, ctrl-x, down, ...)
 *                type TEXT     (each character as a key, e.g. "type :workers")
 *                resize WxH
 *                dump          (the screen as text on stdout, then a "--" line)
 *                password-prompt TEXT  (what the action layer's prompt callback does)
 *                model FILE    (the sources' next update: model JSON loaded over the model)
 *                now EPOCH     (the clock from here on, as REDRIVE_NOW)
 *                # comment
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "../core/model_json.h"
#include "../io/clock.h"
#include "../core/textutil.h"
#include "../core/xalloc.h"
#include "../session/session.h"   /* RD_EXIT_* */
#include "app.h"
#include "headless.h"
#include "input.h"
#include "paint.h"
#include "password.h"

static void headless_dump(FILE *out)
{
    int rows = getmaxy(stdscr), cols = getmaxx(stdscr);
    for (int y = 0; y < rows; y++) {
        char line[8192];
        size_t n = 0, keep = 0;
        for (int x = 0; x < cols && n + 8 < sizeof line; x++) {
            cchar_t cc;
            wchar_t wch[CCHARW_MAX + 1] = {0};
            attr_t attrs = 0;
            short pair = 0;
            if (mvwin_wch(stdscr, y, x, &cc) == ERR || getcchar(&cc, wch, &attrs, &pair, NULL) == ERR) {
                wch[0] = L' ';   /* an unreadable cell is a blank, never line drawing */
                attrs = 0;
            }
            if (wch[0] == 0)
                wch[0] = L' ';
            if (attrs & A_ALTCHARSET) {   /* line drawing as plain text */
                const char *from = "lkmjqxtuvwn", *to = "++++-|+++++";
                const char *at = wch[0] < 128 ? strchr(from, (int)wch[0]) : NULL;
                wch[0] = at && *at ? (wchar_t)to[at - from] : L'#';
            }
            mbstate_t st;
            memset(&st, 0, sizeof st);
            size_t k = wcrtomb(line + n, wch[0], &st);
            if (k == (size_t)-1) {
                line[n] = '?';
                k = 1;
            }
            n += k;
            if (wch[0] != L' ')
                keep = n;
            if (wcwidth(wch[0]) == 2)
                x++;
        }
        fwrite(line, 1, keep, out);
        fputc('\n', out);
    }
    fputs("--\n", out);
    fflush(out);
}

static void headless_type(ui_app *app, const char *text)
{
    mbstate_t st;
    memset(&st, 0, sizeof st);
    size_t len = strlen(text);
    while (len) {
        wchar_t wc;
        size_t k = mbrtowc(&wc, text, len, &st);
        if (k == (size_t)-1 || k == (size_t)-2 || k == 0)
            break;
        input_key(app, key_from_curses(OK, (unsigned)wc));
        text += k;
        len -= k;
    }
}

static bool headless_line(ui_app *app, char *line, int lineno)
{
    char *arg = line + strcspn(line, " \t");
    if (*arg)
        *arg++ = 0;
    if (strcmp(line, "dump") == 0) {
        paint_frame(app);
        headless_dump(stdout);
    } else if (strcmp(line, "resize") == 0) {
        int w, h;
        if (sscanf(arg, "%dx%d", &w, &h) != 2)
            goto bad;
        resize_term(h, w);
    } else if (strcmp(line, "model") == 0) {
        char why[160], err[256];
        char *json = text_read_file(arg, 64u << 20, why, sizeof why);
        bool read = json != NULL, ok = read && model_from_json(app_model(app), json, clock_wall(), err, sizeof err);
        free(json);
        if (!ok) {
            fprintf(stderr, "redrive: headless script line %d: %s: %s\n", lineno, arg, read ? err : why);
            return true;
        }
        model_changed(app_model(app));
        return !app_quitting(app);   /* painted later (or by a key first), as a source's update is */
    } else if (strcmp(line, "now") == 0) {
        double t = atof(arg);
        if (t <= 0)
            goto bad;
        app_set_now(app, t);
    } else if (strcmp(line, "password-prompt") == 0) {
        password_open(app, arg);
    } else if (strcmp(line, "type") == 0) {
        headless_type(app, arg);
    } else if (strcmp(line, "key") == 0) {
        for (char *save = NULL, *t = strtok_r(arg, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
            ui_key k;
            if (!key_parse(t, &k))
                goto bad;
            input_key(app, k);
        }
    } else
        goto bad;
    paint_frame(app);
    return !app_quitting(app);
bad:
    fprintf(stderr, "redrive: headless script line %d: cannot understand '%s %s'\n", lineno, line, arg);
    return true;
}

int headless_run(ui_app *app, const char *script)
{
    char why[128] = "";
    FILE *f = script ? fopen(script, "r") : NULL;
    if (script && !f) {
        snprintf(why, sizeof why, "cannot open key script %s", script);
        fprintf(stderr, "redrive: %s\n", why);
        return RD_EXIT_USAGE;
    }
    paint_frame(app);
    if (!f) {
        headless_dump(stdout);
        return RD_EXIT_OK;
    }
    char buf[1024];
    int lineno = 0;
    while (fgets(buf, sizeof buf, f)) {
        lineno++;
        buf[strcspn(buf, "\r\n")] = 0;
        char *p = buf;
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p || *p == '#')
            continue;
        if (!headless_line(app, p, lineno))
            break;
    }
    fclose(f);
    return RD_EXIT_OK;
}
