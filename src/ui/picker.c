#include "picker.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "draw.h"
#include "keymap.h"

void picker_reset(ui_picker *p)
{
    memset(p, 0, sizeof *p);
}

void picker_add(ui_picker *p, const char *label, const char *count)
{
    if (p->n >= PICKER_MAX)
        return;
    snprintf(p->label[p->n], sizeof p->label[0], "%s", label);
    snprintf(p->count[p->n], sizeof p->count[0], "%s", count ? count : "");
    p->n++;
}

void picker_draw(const ui_picker *p, ui_ctx *c, WINDOW *w, ui_rect r, const char *title)
{
    int lw = (int)strlen(title), cw = 0;
    for (int i = 0; i < p->n; i++) {
        int a = text_cols(p->label[i], c->san), b = (int)strlen(p->count[i]);
        lw = a > lw ? a : lw;
        cw = b > cw ? b : cw;
    }
    int bw = lw + cw + 6, bh = p->n + 3 + (p->typed[0] ? 1 : 0);
    if (bw > r.w)
        bw = r.w;
    if (bh > r.h)
        bh = r.h;
    int y0 = r.y + (r.h - bh) / 2, x0 = r.x + (r.w - bw) / 2;
    int attr = theme_attr(c->theme, TS_DIALOG);
    draw_panel(w, (ui_rect){y0, x0, bh, bw}, attr);
    draw_clean(w, y0, x0 + 1, bw - 2, title, attr | A_BOLD);
    if (p->typed[0]) {                 /* what was typed, on a row of its own at the end */
        char t[48];
        snprintf(t, sizeof t, "typed: %s", p->typed);
        draw_clean(w, y0 + bh - 2, x0 + 2, bw - 4, t, attr);
    }
    int rows = bh - 3 - (p->typed[0] ? 1 : 0), top = p->cur >= rows ? p->cur - rows + 1 : 0;
    for (int i = 0; i < rows && top + i < p->n; i++) {
        int k = top + i, a = k == p->cur ? theme_attr(c->theme, TS_CURSOR) : attr;
        ui_col lab = {.title = "", .min = 1, .want = 1, .x = 2, .w = bw - cw - 5};
        ui_col cnt = {.title = "", .min = 1, .want = 1, .right = true, .x = bw - cw - 2, .w = cw};
        draw_fill(w, y0 + 2 + i, x0 + 1, bw - 2, a);
        cols_cell(w, y0 + 2 + i, x0, &lab, p->label[k], a, c->san);
        cols_cell(w, y0 + 2 + i, x0, &cnt, p->count[k], a, c->san);
    }
}

static bool matches(const char *label, const char *typed, bool anywhere)
{
    size_t n = strlen(typed);
    for (const char *s = label; *s; s++) {
        if (strncasecmp(s, typed, n) == 0)
            return true;
        if (!anywhere)
            return false;
    }
    return n == 0;
}

bool picker_type(ui_picker *p, int key)
{
    size_t n = strlen(p->typed);
    if (key == (UK_FN | KEY_BACKSPACE) || key == 127 || key == 8) {
        if (!n)
            return false;
        p->typed[n - 1] = '\0';
    } else if (key > 0 && key < 128 && (isalnum(key) || key == '_' || key == '-')) {
        if (n + 1 >= sizeof p->typed)
            return true;
        p->typed[n] = (char)key;
        p->typed[n + 1] = '\0';
    } else {
        return false;
    }
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < p->n; i++)
            if (matches(p->label[i], p->typed, pass == 1)) {
                p->cur = i;
                return true;
            }
    return true;                       /* nothing matches: the text shows it */
}

int picker_key(ui_picker *p, ui_action a, bool *closed)
{
    *closed = false;
    switch (a) {
    case UA_UP: p->cur = p->cur > 0 ? p->cur - 1 : 0; return -1;
    case UA_DOWN: p->cur = p->cur + 1 < p->n ? p->cur + 1 : p->cur; return -1;
    case UA_TOP: p->cur = 0; return -1;
    case UA_BOTTOM: p->cur = p->n ? p->n - 1 : 0; return -1;
    case UA_OPEN:
        p->open = false;
        return p->n ? p->cur : -1;
    default:
        p->open = false;
        *closed = true;
        return -1;
    }
}
