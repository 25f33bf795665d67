#include "picker.h"

#include <stdio.h>
#include <string.h>

#include "draw.h"

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
    int bw = lw + cw + 6, bh = p->n + 3;
    if (bw > r.w)
        bw = r.w;
    if (bh > r.h)
        bh = r.h;
    int y0 = r.y + (r.h - bh) / 2, x0 = r.x + (r.w - bw) / 2;
    int attr = theme_attr(c->theme, TS_DIALOG);
    draw_panel(w, (ui_rect){y0, x0, bh, bw}, attr);
    draw_clean(w, y0, x0 + 1, bw - 2, title, attr | A_BOLD);
    int rows = bh - 3, top = p->cur >= rows ? p->cur - rows + 1 : 0;
    for (int i = 0; i < rows && top + i < p->n; i++) {
        int k = top + i, a = k == p->cur ? theme_attr(c->theme, TS_CURSOR) : attr;
        ui_col lab = {.title = "", .min = 1, .want = 1, .x = 2, .w = bw - cw - 5};
        ui_col cnt = {.title = "", .min = 1, .want = 1, .right = true, .x = bw - cw - 2, .w = cw};
        draw_fill(w, y0 + 2 + i, x0 + 1, bw - 2, a);
        cols_cell(w, y0 + 2 + i, x0, &lab, p->label[k], a, c->san);
        cols_cell(w, y0 + 2 + i, x0, &cnt, p->count[k], a, c->san);
    }
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
