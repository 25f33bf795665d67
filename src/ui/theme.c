#include "theme.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../core/datafile.h"
#include "../core/ini.h"
#include "../core/textutil.h"
#include "../core/xalloc.h"
#include "keymap.h"

enum { COL_UNSET = -3, COL_DEFAULT = -1 };
enum { INCLUDE_DEPTH = 8 };

typedef struct slot_spec {
    int fg, bg;          /* 0..255, COL_DEFAULT; rgb as 0x1000000|rrggbb */
    int attrs;           /* curses attrs */
    bool attrs_set;
} slot_spec;

struct ui_theme {
    char *name;
    slot_spec spec[TS__COUNT];
    int attr[TS__COUNT];
};

static const struct { const char *name, *def, *mono; } slot_table[TS__COUNT] = {
#define UI_X(id, name, def, mono) {name, def, mono},
    UI_SLOT_LIST(UI_X)
#undef UI_X
};

static const char *const colour_names[8] = {"black", "red", "green", "yellow",
                                            "blue", "magenta", "cyan", "white"};

static const struct { const char *name; int attr; } attr_names[] = {
    {"bold", A_BOLD}, {"dim", A_DIM}, {"underline", A_UNDERLINE}, {"reverse", A_REVERSE},
    {"standout", A_STANDOUT}, {"blink", A_BLINK}, {"italic", A_ITALIC}, {"none", 0},
};

const char *slot_name(ui_slot s)
{
    return slot_table[s].name;
}

static bool colour_parse(const char *s, int *out)
{
    if (strcasecmp(s, "default") == 0 || strcmp(s, "-") == 0) {
        *out = COL_DEFAULT;
        return true;
    }
    bool bright = strncasecmp(s, "bright-", 7) == 0;
    const char *base = bright ? s + 7 : s;
    for (int i = 0; i < 8; i++)
        if (strcasecmp(base, colour_names[i]) == 0) {
            *out = i + (bright ? 8 : 0);
            return true;
        }
    if (s[0] == '#' && strlen(s) == 7) {
        char *end;
        long v = strtol(s + 1, &end, 16);
        if (*end)
            return false;
        *out = 0x1000000 | (int)v;
        return true;
    }
    char *end;
    long v = strtol(s, &end, 10);
    if (*s && !*end && v >= 0 && v <= 255) {
        *out = (int)v;
        return true;
    }
    return false;
}

static bool attr_parse(const char *s, int *out)
{
    for (size_t i = 0; i < sizeof attr_names / sizeof *attr_names; i++)
        if (strcasecmp(s, attr_names[i].name) == 0) {
            *out |= attr_names[i].attr;
            return true;
        }
    return false;
}

/* "fg bg attrs..." → spec; message in err on failure. */
static bool spec_parse(const char *text, slot_spec *sp, char *err, size_t cap)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    slot_spec s = {COL_DEFAULT, COL_DEFAULT, 0, false};
    int i = 0;
    for (char *save = NULL, *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save), i++) {
        if (i < 2) {
            if (!colour_parse(t, i == 0 ? &s.fg : &s.bg)) {
                snprintf(err, cap, "bad colour '%s' (names, bright-NAME, 0-255, #rrggbb, default)", t);
                return false;
            }
        } else {
            if (!attr_parse(t, &s.attrs)) {
                snprintf(err, cap, "bad attribute '%s'", t);
                return false;
            }
            s.attrs_set = true;
        }
    }
    if (i == 0) {
        snprintf(err, cap, "expected 'fg bg [attrs]'");
        return false;
    }
    *sp = s;
    return true;
}

static void theme_defaults(ui_theme *t)
{
    char err[128];
    for (int i = 0; i < TS__COUNT; i++) {
        slot_spec s;
        bool ok = spec_parse(slot_table[i].def, &s, err, sizeof err);
        (void)ok;
        t->spec[i] = s;
    }
}

ui_theme *theme_new(void)
{
    ui_theme *t = xcalloc(1, sizeof *t);
    t->name = xstrdup("built-in");
    theme_defaults(t);
    return t;
}

void theme_free(ui_theme *t)
{
    if (!t)
        return;
    free(t->name);
    free(t);
}

const char *theme_name(const ui_theme *t)
{
    return t->name;
}

static bool theme_load_depth(ui_theme *t, const char *name, rd_diags *d, int depth);

/* "slot = fg bg [attrs]" or "include = NAME"; false on any error. */
static bool theme_pair(ui_theme *t, ini_reader *r, const ini_line *l, int depth)
{
    const char *key = l->name, *val = l->value;
    if (strcmp(key, "include") == 0) {
        if (depth >= INCLUDE_DEPTH) {
            ini_error(r, l->line, "includes nested too deeply");
            return false;
        }
        return theme_load_depth(t, val, r->d, depth + 1);
    }
    for (int i = 0; i < TS__COUNT; i++) {
        if (strcmp(key, slot_table[i].name) != 0)
            continue;
        char err[128];
        if (!spec_parse(val, &t->spec[i], err, sizeof err)) {
            ini_error(r, l->line, "%s: %s", key, err);
            return false;
        }
        return true;
    }
    ini_error(r, l->line, "unknown colour slot '%s'", key);
    return false;
}

/* No sections, whole-line comments only: '#' starts a colour ("#rrggbb"). */
static const ini_format theme_format = { 0, NULL };

static bool theme_parse_depth(ui_theme *t, const char *path, const char *text, size_t len,
                              rd_diags *d, int depth)
{
    ini_reader r;
    ini_open(&r, path, text, len, &theme_format, d);
    bool ok = true;
    ini_line l;
    while (ini_next(&r, &l)) {
        if (l.kind == INI_TEXT)
            ini_error(&r, l.line, "expected 'slot = fg bg [attrs]'");
        else if (l.kind == INI_PAIR && !theme_pair(t, &r, &l, depth))
            ok = false;
    }
    ini_close(&r);
    return ok && r.errors == 0;
}

bool theme_parse_len(ui_theme *t, const char *path, const char *text, size_t len, rd_diags *d)
{
    return theme_parse_depth(t, path, text, len, d, 0);
}

bool theme_parse(ui_theme *t, const char *path, const char *text, rd_diags *d)
{
    return theme_parse_depth(t, path, text, text ? strlen(text) : 0, d, 0);
}

static bool theme_load_depth(ui_theme *t, const char *name, rd_diags *d, int depth)
{
    char *path = datafile_locate(DATA_THEMES, name, d);
    if (!path)
        return false;
    char why[128];
    size_t len;
    char *text = text_read_file_len(path, DATAFILE_MAX_BYTES, &len, why, sizeof why);
    bool ok = text && theme_parse_depth(t, path, text, len, d, depth);
    if (!text)
        diags_add(d, path, 0, "%s", why);
    free(text);
    free(path);
    return ok;
}

bool theme_load(ui_theme *t, const char *name, rd_diags *d)
{
    theme_defaults(t);
    bool ok = theme_load_depth(t, name, d, 0);
    free(t->name);
    t->name = xstrdup(name);
    return ok;
}

/* xterm 256-colour palette as rgb. */
static int palette_rgb(int i)
{
    static const int base[16] = {0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd,
                                 0x00cdcd, 0xe5e5e5, 0x7f7f7f, 0xff0000, 0x00ff00, 0xffff00,
                                 0x5c5cff, 0xff00ff, 0x00ffff, 0xffffff};
    if (i < 16)
        return base[i];
    if (i < 232) {
        static const int lv[6] = {0, 95, 135, 175, 215, 255};
        int c = i - 16;
        return lv[c / 36] << 16 | lv[(c / 6) % 6] << 8 | lv[c % 6];
    }
    int g = 8 + (i - 232) * 10;
    return g << 16 | g << 8 | g;
}

static int nearest(int rgb, int ncolours)
{
    int best = 0;
    long bestd = -1;
    for (int i = 0; i < ncolours && i < 256; i++) {
        int p = palette_rgb(i);
        long dr = ((p >> 16) & 255) - ((rgb >> 16) & 255), dg = ((p >> 8) & 255) - ((rgb >> 8) & 255),
             db = (p & 255) - (rgb & 255);
        long dist = dr * dr * 3 + dg * dg * 4 + db * db * 2;
        if (bestd < 0 || dist < bestd) {
            bestd = dist;
            best = i;
        }
    }
    return best;
}

static int colour_resolve(int c, int ncolours)
{
    if (c == COL_DEFAULT)
        return -1;
    if (c & 0x1000000)
        return nearest(c & 0xffffff, ncolours);
    if (c < ncolours)
        return c;
    if (c < 16)
        return c - 8;   /* bright on an 8-colour terminal */
    return nearest(palette_rgb(c), ncolours);
}

static int mono_attrs(int slot)
{
    int a = 0;
    char buf[64];
    snprintf(buf, sizeof buf, "%s", slot_table[slot].mono);
    for (char *save = NULL, *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save))
        attr_parse(t, &a);
    return a;
}

void theme_apply(ui_theme *t, bool colour)
{
    int ncol = colour ? COLORS : 0;
    if (colour && ncol > 256)
        ncol = 256;
    for (int i = 0; i < TS__COUNT; i++) {
        const slot_spec *s = &t->spec[i];
        if (!colour || ncol < 8 || i + 1 >= COLOR_PAIRS) {
            t->attr[i] = s->attrs_set && s->attrs ? s->attrs : mono_attrs(i);
            continue;
        }
        int fg = colour_resolve(s->fg, ncol), bg = colour_resolve(s->bg, ncol);
        init_pair((short)(i + 1), (short)fg, (short)bg);
        t->attr[i] = (int)COLOR_PAIR(i + 1) | s->attrs;
    }
}

int theme_attr(const ui_theme *t, ui_slot s)
{
    return t->attr[s];
}
