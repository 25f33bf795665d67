/* The jwt-login password prompt: a modal box over everything, asked for by the action
 * layer (actor_set_password_prompt). Keys go here raw, never through the keymap, so no
 * binding (and no "x is not bound" message) ever sees a password character. Nothing
 * typed is drawn, not even as '*' (the length stays private too); the buffer is wiped
 * as soon as the actor has copied it, on cancel and on close. */
#include <stdio.h>
#include <string.h>

#include "../io/secret.h"
#include "app_priv.h"
#include "password.h"
#include "draw.h"

static void password_wipe(ui_password *p)
{
    secret_wipe(p->buf, sizeof p->buf);
    p->len = 0;
}

void password_open(ui_app *app, const char *prompt)
{
    ui_password *p = &app->pw;
    password_wipe(p);
    p->active = true;
    snprintf(p->prompt, sizeof p->prompt, "%s", prompt && *prompt ? prompt : "password: ");
    app->n_pending = 0;   /* a half-typed key sequence must not swallow the first character */
    app->dirty = true;
}

void password_close(ui_app *app)
{
    password_wipe(&app->pw);
    app->pw.active = false;
}

/* The operator answered: hand the password over (NULL = cancelled), then wipe. Closed
 * first, so a prompt the actor opens again from inside the call is kept. */
static void password_answer(ui_app *app, bool ok)
{
    ui_password *p = &app->pw;
    char buf[sizeof p->buf];
    memcpy(buf, p->buf, sizeof buf);
    password_close(app);
    if (app_actor(app))
        actor_supply_password(app_actor(app), ok ? buf : NULL);
    secret_wipe(buf, sizeof buf);
    if (!ok)
        ctx_msg(&app->ctx, true, "password prompt cancelled: the action was not sent");
    else if (!app_actor(app))
        ctx_msg(&app->ctx, true, "no core API here: the password was discarded");
    else
        ctx_msg(&app->ctx, false, "logging in ...");
}

static void password_append(ui_password *p, ui_key k)
{
    unsigned c = (unsigned)k;
    char b[4];
    size_t n;
    if (c < 0x80) {
        b[0] = (char)c;
        n = 1;
    } else if (c < 0x800) {
        b[0] = (char)(0xc0 | (c >> 6));
        b[1] = (char)(0x80 | (c & 0x3f));
        n = 2;
    } else if (c < 0x10000) {
        b[0] = (char)(0xe0 | (c >> 12));
        b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
        b[2] = (char)(0x80 | (c & 0x3f));
        n = 3;
    } else {
        b[0] = (char)(0xf0 | (c >> 18));
        b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
        b[2] = (char)(0x80 | ((c >> 6) & 0x3f));
        b[3] = (char)(0x80 | (c & 0x3f));
        n = 4;
    }
    if (p->len + n < sizeof p->buf) {   /* keep a NUL at the end */
        memcpy(p->buf + p->len, b, n);
        p->len += n;
    }
    secret_wipe(b, sizeof b);
}

void password_key(ui_app *app, ui_key k)
{
    ui_password *p = &app->pw;
    app->dirty = true;
    if (k == (UK_FN | KEY_ENTER))
        password_answer(app, true);
    else if (k == 27 || k == 7)                  /* escape, ctrl-g */
        password_answer(app, false);
    else if (k == (UK_FN | KEY_BACKSPACE)) {
        while (p->len && ((unsigned char)p->buf[p->len - 1] & 0xc0) == 0x80)
            p->buf[--p->len] = 0;
        if (p->len)
            p->buf[--p->len] = 0;
    } else if (k == 21)                          /* ctrl-u */
        password_wipe(p);
    else if (k >= 0x20 && k != 0x7f && !(k & (UK_FN | UK_ALT)) && k < 0x110000)
        password_append(p, k);
}

void password_draw(ui_app *app, WINDOW *w)
{
    int rows = getmaxy(w), cols = getmaxx(w);
    int bw = cols - 4 < 70 ? cols - 4 : 70, bh = 6;
    int y0 = (rows - bh) / 2, x0 = (cols - bw) / 2;
    int attr = theme_attr(app->theme, TS_DIALOG);
    draw_box(w, (ui_rect){y0, x0, bh, bw}, attr);
    /* the prompt names the login and system from the config: outside text, sanitized */
    draw_raw(w, y0 + 1, x0 + 2, bw - 4, app->pw.prompt, theme_attr(app->theme, TS_DIALOG_DANGER), app->ctx.san);
    draw_clean(w, y0 + 2, x0 + 2, bw - 4, "(typing is not shown)", attr);
    draw_clean(w, y0 + 4, x0 + 2, bw - 4, "enter: log in   escape: cancel the action", attr | A_BOLD);
}
