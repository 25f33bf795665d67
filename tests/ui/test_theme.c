/* Theme files: one row per case, with every message it must give, exactly. */
#include "theme.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "uitest.h"
#include "rd_build.h"

#define COLOURS "(names, bright-NAME, 0-255, #rrggbb, default)"

static void test_table(void)
{
    static const struct {
        const char *text;
        size_t len;
        const char *diags;   /* every message, each followed by '|' */
        int danger;          /* then the attributes of "danger" without colours */
    } def = { NULL, 0, NULL, A_BOLD }, cases[] = {
        { T(""), "", -1 },
        { T("# comment\n; comment\n\n  \t\n  # indented\n\r\n"), "", -1 },
        { T("danger = white red underline\n"), "", A_UNDERLINE },
        { T("  danger\t=  #ff0000   default   bold  dim \r\n"), "", A_BOLD | A_DIM },
        { T("danger = white red none\n"), "", A_REVERSE | A_BOLD | A_BLINK },   /* fallback */
        /* no attributes given: the monochrome fallback */
        { T("danger = bright-white 196\ncursor = - 0\ntopbar = 255 #FFFFFF\n"), "",
          A_REVERSE | A_BOLD | A_BLINK },
        { T("danger = red"), "", A_REVERSE | A_BOLD | A_BLINK },   /* background optional */
        { T("cursor = black nosuchcolour\n"),
          "t.theme:1: cursor: bad colour 'nosuchcolour' " COLOURS "|", -1 },
        { T("cursor = 256 red\n"), "t.theme:1: cursor: bad colour '256' " COLOURS "|", -1 },
        { T("cursor = -1 red\n"), "t.theme:1: cursor: bad colour '-1' " COLOURS "|", -1 },
        { T("cursor = #12345g red\n"), "t.theme:1: cursor: bad colour '#12345g' " COLOURS "|",
          -1 },
        { T("cursor = #1234 red\n"), "t.theme:1: cursor: bad colour '#1234' " COLOURS "|", -1 },
        { T("cursor = bright-default red\n"),
          "t.theme:1: cursor: bad colour 'bright-default' " COLOURS "|", -1 },
        { T("danger = red blue loud\n"), "t.theme:1: danger: bad attribute 'loud'|", -1 },
        { T("danger = red blue # a comment\n"), "t.theme:1: danger: bad attribute '#'|", -1 },
        { T("danger =\n"), "t.theme:1: danger: expected 'fg bg [attrs]'|", -1 },
        { T("nosuchslot = red blue\n"), "t.theme:1: unknown colour slot 'nosuchslot'|", -1 },
        { T("= red blue\n"), "t.theme:1: unknown colour slot ''|", -1 },
        { T("danger red blue\n"), "t.theme:1: expected 'slot = fg bg [attrs]'|", -1 },
        { T("[colours]\n"), "t.theme:1: expected 'slot = fg bg [attrs]'|", -1 },
        /* a NUL byte is an error on its line; the lines after it still count */
        { T("cursor = red\0 blue\ndanger = red blue underline\n"), "t.theme:1: NUL byte|",
          A_UNDERLINE },
        /* never stop at the first error */
        { T("a = red\ndanger = red blue bold\nb\ncursor = x\n\0"),
          "t.theme:1: unknown colour slot 'a'|t.theme:3: expected 'slot = fg bg [attrs]'|"
          "t.theme:4: cursor: bad colour 'x' " COLOURS "|t.theme:5: NUL byte|", A_BOLD },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ui_theme *t = theme_new();
        rd_diags d = { 0 };
        bool ok = theme_parse_len(t, "t.theme", cases[i].text, cases[i].len, &d);
        char msgs[1024], ctx[32];
        diags_join(&d, msgs, sizeof msgs);
        snprintf(ctx, sizeof ctx, "case %zu", i);
        CHECK_MSG(ok == (cases[i].diags[0] == '\0'), ctx);
        CHECK_STR(msgs, cases[i].diags);
        theme_apply(t, false);
        int want = cases[i].danger >= 0 ? cases[i].danger : def.danger;
        CHECK_MSG(theme_attr(t, TS_DANGER) == want, ctx);
        diags_free(&d);
        theme_free(t);
    }
}

static char *write_tmp(const char *text, size_t len, char *path)
{
    int fd = mkstemps(path, 6);
    CHECK(fd >= 0);
    if (fd < 0)
        return NULL;
    CHECK(write(fd, text, len) == (ssize_t)len);
    close(fd);
    return path;
}

static void test_files(void)
{
    char msgs[1024], want[1024];
    rd_diags d = { 0 };
    ui_theme *t = theme_new();

    /* the loader sees a NUL byte too */
    char p1[] = "/tmp/rd_th_XXXXXX.theme";
    static const char nul[] = "danger = red blue bold\nx\0\n";
    if (write_tmp(nul, sizeof nul - 1, p1)) {
        CHECK(!theme_load(t, p1, &d));
        diags_join(&d, msgs, sizeof msgs);
        snprintf(want, sizeof want, "%s:2: NUL byte|", p1);
        CHECK_STR(msgs, want);
        CHECK_STR(theme_name(t), p1);
        diags_free(&d);
    }

    /* a theme including itself stops at the depth limit, with one message */
    char p2[] = "/tmp/rd_th_XXXXXX.theme";
    if (write_tmp("", 0, p2)) {
        FILE *f = fopen(p2, "w");
        CHECK(f != NULL);
        if (f) {
            fprintf(f, "# loops\ninclude = %s\n", p2);
            fclose(f);
        }
        CHECK(!theme_load(t, p2, &d));
        diags_join(&d, msgs, sizeof msgs);
        snprintf(want, sizeof want, "%s:2: includes nested too deeply|", p2);
        CHECK_STR(msgs, want);
        diags_free(&d);
    }

    /* an include that is not there */
    char p3[] = "/tmp/rd_th_XXXXXX.theme";
    static const char missing[] = "include = /nonexistent/x.theme\ncursor = red\n";
    if (write_tmp(missing, sizeof missing - 1, p3)) {
        CHECK(!theme_load(t, p3, &d));
        diags_join(&d, msgs, sizeof msgs);
        CHECK_STR(msgs, "/nonexistent/x.theme: cannot read: No such file or directory|");
        diags_free(&d);
    }
    unlink(p1);
    unlink(p2);
    unlink(p3);

    CHECK(theme_parse(t, "c", "danger = red blue underline\n", &d) && d.n == 0);
    theme_apply(t, false);
    CHECK(theme_attr(t, TS_DANGER) == A_UNDERLINE);
    theme_free(t);
}

/* The shipped themes parse cleanly. */
static void test_shipped(void)
{
    static const char *const names[] = { "default", "high-contrast", "light", "mono", "prod" };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        ui_theme *t = theme_new();
        rd_diags d = { 0 };
        CHECK_MSG(theme_load(t, names[i], &d), names[i]);
        for (size_t k = 0; k < d.n; k++)
            fprintf(stderr, "  %s\n", d.msgs[k]);
        diags_free(&d);
        theme_free(t);
    }
}

int main(void)
{
    test_table();
    test_files();
    test_shipped();
    return check_done("theme");
}
