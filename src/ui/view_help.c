/* Help: generated from the action list and the keymap actually loaded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/xalloc.h"
#include "cmd.h"
#include "draw.h"
#include "view.h"

static const ui_action help_bar[] = {UA_BACK, UA_QUIT, UA_NONE};

/* Line i of the help text: actions first, then commands. Returns false past the end. */
static bool help_line(const ui_ctx *c, int i, char *out, size_t cap, int *slot)
{
    *slot = TS_NORMAL;
    if (i == 0) {
        snprintf(out, cap, "Keys (keymap: %s)", keymap_name(c->km));
        *slot = TS_HEADER;
        return true;
    }
    i--;
    if (i < UA__COUNT) {
        const ui_action_info *a = actlist_info((ui_action)i);
        char keys[128];
        keymap_all(c->km, (ui_action)i, keys, sizeof keys);
        bool hidden = (a->flags & UA_DANGER) && c->read_only;
        snprintf(out, cap, "  %-24s %-18s %s%s", keys[0] ? keys : "(unbound)", a->name, a->help,
                 hidden ? " [read-only: disabled]" : "");
        *slot = hidden ? TS_DIM : (a->flags & UA_DANGER) ? TS_WARNING : TS_NORMAL;
        return true;
    }
    i -= UA__COUNT;
    if (i == 0) {
        out[0] = 0;
        return true;
    }
    if (i == 1) {
        snprintf(out, cap, "Commands (after ':')");
        *slot = TS_HEADER;
        return true;
    }
    i -= 2;
    const ui_command *cmd = cmd_info(i);
    if (!cmd)
        return false;
    snprintf(out, cap, "  :%-24s %s", cmd->usage, cmd->help);
    return true;
}

static void help_draw(ui_view *v, ui_ctx *c, WINDOW *w, ui_rect r)
{
    draw_clean(w, r.y, r.x, r.w, "Help  (generated from the loaded keymap)", theme_attr(c->theme, TS_TITLE));
    v->rows = r.h - 1 < 1 ? 1 : r.h - 1;
    int total = 0;
    char line[512];
    int slot;
    while (help_line(c, total, line, sizeof line, &slot))
        total++;
    v->list.n = total;
    if (v->list.top > total - v->rows)
        v->list.top = total - v->rows;
    if (v->list.top < 0)
        v->list.top = 0;
    for (int i = 0; i < v->rows && v->list.top + i < total; i++) {
        help_line(c, v->list.top + i, line, sizeof line, &slot);
        draw_clean(w, r.y + 1 + i, r.x, r.w, line, theme_attr(c->theme, (ui_slot)slot));
    }
}

static unsigned help_key(ui_view *v, ui_ctx *c, ui_action a)
{
    (void)c;
    int max = v->list.n - v->rows;
    switch (a) {
    case UA_UP: v->list.top--; break;
    case UA_DOWN: v->list.top++; break;
    case UA_PAGE_UP: v->list.top -= v->rows; break;
    case UA_PAGE_DOWN: v->list.top += v->rows; break;
    case UA_TOP: v->list.top = 0; break;
    case UA_BOTTOM: v->list.top = max; break;
    default: return UI_CH_UNHANDLED;
    }
    if (v->list.top > max)
        v->list.top = max;
    if (v->list.top < 0)
        v->list.top = 0;
    return UI_CH_REDRAW;
}

const ui_view_ops view_help_ops = {
    .name = "help", .title = "Help", .bar = help_bar, .draw = help_draw, .key = help_key,
    .panels = PANELS_KEEP,
};
