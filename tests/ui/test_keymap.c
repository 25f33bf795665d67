/* Keymap files: one row per case, with every message it must give, exactly. */
#include "keymap.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "uitest.h"


static void test_table(void)
{
    static const struct {
        const char *text;
        size_t len;
        const char *diags;        /* every message, each followed by '|' */
        ui_action act;            /* then its bindings must be... */
        const char *keys;
    } cases[] = {
        { T(""), "", UA_RETRY, "r" },
        { T("# comment\n; comment\n\n   \n\t# indented\n"), "", UA_RETRY, "r" },
        { T("retry = R\n"), "", UA_RETRY, "R" },
        { T("  retry=R  \r\n"), "", UA_RETRY, "R" },
        { T("retry = R x\tX\n"), "", UA_RETRY, "R, x, X" }   /* file order, after clashes */,
        { T("retry = none\n"), "", UA_RETRY, "" },
        { T("drain = ctrl-x+d \"ctrl-x D\"\n"), "", UA_DRAIN, "^x d, ^x D" },
        { T("jump = # ;\n"), "", UA_JUMP, "#, ;" },        /* no inline comments here */
        { T("sort = plus space\n"), "", UA_SORT, "+, spc" },
        { T("search = alt-x M-/ f12 pgdn\n"), "", UA_SEARCH, "M-x, M-/, f12, pgdn" },
        { T("frobnicate = z\n"), "k.keymap:1: unknown action 'frobnicate'|", UA_RETRY, "r" },
        { T("= z\n"), "k.keymap:1: unknown action ''|", UA_RETRY, "r" },
        { T("retry r\n"), "k.keymap:1: expected 'action = key ...'|", UA_RETRY, "r" },
        { T("[retry]\n"), "k.keymap:1: expected 'action = key ...'|", UA_RETRY, "r" },
        /* a bad key is reported; the good ones on the line still apply */
        { T("retry = ctrl-? R\n"), "k.keymap:1: bad key 'ctrl-?' for 'retry'|", UA_RETRY, "R" },
        { T("retry = a+b+c\n"), "k.keymap:1: bad key 'a+b+c' for 'retry'|", UA_RETRY, "" },
        { T("retry = f13 ctrl-1 alt-alt-x\n"),
          "k.keymap:1: bad key 'f13' for 'retry'|k.keymap:1: bad key 'ctrl-1' for 'retry'|"
          "k.keymap:1: bad key 'alt-alt-x' for 'retry'|", UA_RETRY, "" },
        /* conflicts: a file line beats a default silently, an earlier line a later one */
        { T("drain = r\n"), "", UA_DRAIN, "r" },
        { T("retry = r\ndrain = r\n"),
          "k.keymap:2: key 'r' for 'drain' conflicts with 'retry'|", UA_DRAIN, "" },
        { T("retry = ctrl-x\ndrain = ctrl-x+d\n"),
          "k.keymap:2: key 'ctrl-x d' for 'drain' conflicts with 'retry'|", UA_RETRY, "^x" },
        { T("retry = x x\n"), "k.keymap:1: key 'x' for 'retry' conflicts with 'retry'|",
          UA_RETRY, "x" },
        /* a binding that lost does not take others down with it */
        { T("retry = ctrl-x+d\ndrain = ctrl-x\nsort = ctrl-x+e\n"),
          "k.keymap:2: key 'ctrl-x' for 'drain' conflicts with 'retry'|", UA_SORT, "^x e" },
        { T("confirm = r\n"), "", UA_RETRY, "r" },         /* dialog keys: own scope */
        { T("scroll-left = h\nback = h\n"), "", UA_BACK, "h" },   /* wide mode's too */
        { T("scroll-left = x\nwide = ctrl-w\n"), "", UA_SCROLL_LEFT, "x" },
        /* a NUL byte is an error on its line; the lines after it still count */
        { T("retry = R\nquit = \0q\ndrain = Z\n"), "k.keymap:2: NUL byte|", UA_DRAIN, "Z" },
        { T("\0\nretry = R"), "k.keymap:1: NUL byte|", UA_RETRY, "R" },
        /* never stop at the first error */
        { T("frob = 1\nretry r\nretry = ctrl-?\nsort = S\nx = 1\n"),
          "k.keymap:1: unknown action 'frob'|k.keymap:2: expected 'action = key ...'|"
          "k.keymap:3: bad key 'ctrl-?' for 'retry'|k.keymap:5: unknown action 'x'|",
          UA_SORT, "S" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ui_keymap *km = keymap_new();
        rd_diags d = { 0 };
        bool ok = keymap_parse_len(km, "k.keymap", cases[i].text, cases[i].len, &d);
        char msgs[1024], keys[256], ctx[32];
        diags_join(&d, msgs, sizeof msgs);
        snprintf(ctx, sizeof ctx, "case %zu", i);
        CHECK_MSG(ok == (cases[i].diags[0] == '\0'), ctx);
        CHECK_STR(msgs, cases[i].diags);
        keymap_all(km, cases[i].act, keys, sizeof keys);
        CHECK_STR(keys, cases[i].keys);
        diags_free(&d);
        keymap_free(km);
    }
}

/* The C-string entry point and the file loader agree with the table. */
static void test_load(void)
{
    char path[] = "/tmp/rd_km_XXXXXX.keymap";
    int fd = mkstemps(path, 7);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    static const char text[] = "retry = R\nquit = \0q\nfrob = x\n";
    CHECK(write(fd, text, sizeof text - 1) == (ssize_t)(sizeof text - 1));
    close(fd);
    ui_keymap *km = keymap_new();
    rd_diags d = { 0 };
    CHECK(!keymap_load(km, path, &d));
    char msgs[512], want[512];
    diags_join(&d, msgs, sizeof msgs);
    snprintf(want, sizeof want, "%s:2: NUL byte|%s:3: unknown action 'frob'|", path, path);
    CHECK_STR(msgs, want);
    CHECK_STR(keymap_name(km), path);
    diags_free(&d);
    unlink(path);

    CHECK(!keymap_load(km, path, &d));   /* gone now */
    diags_join(&d, msgs, sizeof msgs);
    snprintf(want, sizeof want, "%s: cannot read: No such file or directory|", path);
    CHECK_STR(msgs, want);   /* a path is read as is: its own error, no search */
    diags_free(&d);

    CHECK(keymap_parse(km, "c", "retry = W\n", &d) && d.n == 0);
    keymap_all(km, UA_RETRY, msgs, sizeof msgs);
    CHECK_STR(msgs, "W");
    keymap_free(km);
}

/* The shipped keymaps parse cleanly. */
static void test_shipped(void)
{
    static const char *const names[] = { "default", "emacs", "safe" };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        ui_keymap *km = keymap_new();
        rd_diags d = { 0 };
        CHECK_MSG(keymap_load(km, names[i], &d), names[i]);
        for (size_t k = 0; k < d.n; k++)
            fprintf(stderr, "  %s\n", d.msgs[k]);
        diags_free(&d);
        keymap_free(km);
    }
}

/* h and the arrows: back and open among the views' keys, the wide mode's scroll in its own
 * scope (the console asks that one first while a table is wide); W toggles it. */
static void test_wide_scope(void)
{
    ui_keymap *km = keymap_new();
    ui_key h = 'h', right = UK_FN | KEY_RIGHT, w = 'W';
    ui_action a = UA_NONE;
    CHECK(keymap_match(km, &h, 1, 0, &a) == KM_ACTION && a == UA_BACK);
    CHECK(keymap_match(km, &h, 1, UA_HSCROLL, &a) == KM_ACTION && a == UA_SCROLL_LEFT);
    CHECK(keymap_match(km, &right, 1, 0, &a) == KM_ACTION && a == UA_OPEN);
    CHECK(keymap_match(km, &right, 1, UA_HSCROLL, &a) == KM_ACTION && a == UA_SCROLL_RIGHT);
    CHECK(keymap_match(km, &w, 1, 0, &a) == KM_ACTION && a == UA_WIDE);
    CHECK(keymap_match(km, &w, 1, UA_HSCROLL, &a) == KM_NONE);
    CHECK(keymap_match(km, &h, 1, UA_DIALOG, &a) == KM_NONE);
    keymap_free(km);
}

int main(void)
{
    test_table();
    test_wide_scope();
    test_load();
    test_shipped();
    return check_done("keymap");
}
