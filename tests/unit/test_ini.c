/* The shared line tokenizer: each row is a text, a format, the tokens it gives
 * (one per line, "N:KIND(fields)") and every message it reports. */
#include "ini.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define T(s) s, sizeof s - 1   /* text with its exact length: NULs included */

enum { CFG = INI_SECTIONS | INI_COMMENTS, PROF = INI_SECTIONS | INI_HEADER_COL0 | INI_COMMENTS,
       FLAT = 0 };

/* Tokens as text; a section named "q" turns raw mode on (as profile queries do). */
static void run(const char *text, size_t len, unsigned flags, const char *usage, char *out,
                size_t cap, rd_diags *d)
{
    ini_format fmt = { flags, usage };
    ini_reader r;
    ini_open(&r, "f.ini", text, len, &fmt, d);
    ini_line l;
    out[0] = '\0';
    while (ini_next(&r, &l)) {
        size_t o = strlen(out);
        switch (l.kind) {
        case INI_SECTION:
            if (l.name)
                snprintf(out + o, cap - o, "%d:S(%s|%s|%s) ", l.line, l.name, l.value, l.text);
            else
                snprintf(out + o, cap - o, "%d:S(bad) ", l.line);
            ini_set_raw(&r, l.name && strcmp(l.name, "q") == 0);
            break;
        case INI_PAIR: snprintf(out + o, cap - o, "%d:P(%s|%s) ", l.line, l.name, l.value); break;
        case INI_TEXT: snprintf(out + o, cap - o, "%d:T(%s) ", l.line, l.text); break;
        case INI_RAW: snprintf(out + o, cap - o, "%d:R(%s) ", l.line, l.text); break;
        case INI_BAD: snprintf(out + o, cap - o, "%d:B ", l.line); break;
        }
    }
    ini_close(&r);
    CHECK((size_t)r.errors == d->n);
}

static void test_table(void)
{
    static const struct {
        const char *text;
        size_t len;
        unsigned flags;
        const char *usage, *tokens, *diags;
    } cases[] = {
        { T(""), CFG, NULL, "", "" },
        { T("\n\n  \n"), CFG, NULL, "", "" },
        { T("# c\n; c\n   # indented\n"), CFG, NULL, "", "" },
        { T("a=b"), CFG, NULL, "1:P(a|b) ", "" },                       /* no final newline */
        { T("  key  =  some value  \n"), CFG, NULL, "1:P(key|some value) ", "" },
        { T("k = v # note\nk = \"a # b\" ; c\n"), CFG, NULL,
          "1:P(k|v) 2:P(k|\"a # b\") ", "" },                          /* inline comments */
        { T("k = v # note\n"), FLAT, NULL, "1:P(k|v # note) ", "" },    /* kept when off */
        { T("k = a#b\n"), CFG, NULL, "1:P(k|a#b) ", "" },               /* '#' needs a blank */
        { T("k = a = b\n= v\nk =\n"), CFG, NULL, "1:P(k|a = b) 2:P(|v) 3:P(k|) ", "" },
        { T("no equals here\n"), CFG, NULL, "1:T(no equals here) ", "" },
        { T("a = 1\r\nb = 2\r\n\r\n"), CFG, NULL, "1:P(a|1) 2:P(b|2) ", "" },   /* CRLF */
        { T("[system \"x\"]\n"), CFG, NULL, "1:S(system|\"x\"|system \"x\") ", "" },
        { T("  [ a   b c ]  \n"), CFG, NULL, "1:S(a|b c|a   b c) ", "" },
        { T("[a]b]\n"), CFG, NULL, "1:S(a]b||a]b) ", "" },             /* last ']' closes */
        { T("[]\n"), CFG, NULL, "1:S(||) ", "" },
        { T("[a\n[a] x\n"), CFG, "[a]", "1:S(bad) 2:S(bad) ",
          "f.ini:1: bad section header (expected [a])|"
          "f.ini:2: bad section header (expected [a])|" },
        { T("[a\n"), CFG, NULL, "1:S(bad) ", "f.ini:1: bad section header|" },
        { T("[a]\n"), FLAT, NULL, "1:T([a]) ", "" },                    /* no sections */
        { T(" [a]\n[b]\n"), PROF, NULL, "1:T([a]) 2:S(b||b) ", "" },   /* column 0 only */
        /* raw mode: lines as they are, comments and blanks too, until a header */
        { T("[q]\n  SELECT 1; # x\n\n; y\r\n [z]\n[p]\n# c\nk=v\n"), PROF, NULL,
          "1:S(q||q) 2:R(  SELECT 1; # x) 3:R() 4:R(; y) 5:R( [z]) 6:S(p||p) 8:P(k|v) ", "" },
        /* a NUL byte is an error on its line, wherever it is; parsing goes on */
        { T("a = 1\nb\0 = 2\nc = 3\n"), CFG, NULL, "1:P(a|1) 2:B 3:P(c|3) ",
          "f.ini:2: NUL byte|" },
        { T("\0"), CFG, NULL, "1:B ", "f.ini:1: NUL byte|" },
        { T("# comment \0 too\n\0\0\n"), CFG, NULL, "1:B 2:B ",
          "f.ini:1: NUL byte|f.ini:2: NUL byte|" },
        { T("[q]\nSEL\0ECT\nx\n"), PROF, NULL, "1:S(q||q) 2:B 3:R(x) ", "f.ini:2: NUL byte|" },
        { T("a = 1\n\0"), CFG, NULL, "1:P(a|1) 2:B ", "f.ini:2: NUL byte|" },
        { T("a = 1\r\0\n"), CFG, NULL, "1:B ", "f.ini:1: NUL byte|" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char got[512], msgs[512] = "";
        rd_diags d = { 0 };
        run(cases[i].text, cases[i].len, cases[i].flags, cases[i].usage, got, sizeof got, &d);
        for (size_t k = 0; k < d.n; k++) {
            size_t o = strlen(msgs);
            snprintf(msgs + o, sizeof msgs - o, "%s|", d.msgs[k]);
        }
        char ctx[32];
        snprintf(ctx, sizeof ctx, "case %zu", i);
        CHECK_MSG(strcmp(got, cases[i].tokens) == 0, ctx);
        CHECK_STR(got, cases[i].tokens);
        CHECK_STR(msgs, cases[i].diags);
        diags_free(&d);
    }
}

static void test_errors_after_close(void)
{
    /* parsers validate after the last line: the one error path still works */
    rd_diags d = { 0 };
    ini_reader r;
    ini_open(&r, "x.conf", NULL, 0, NULL, &d);
    ini_line l;
    CHECK(!ini_next(&r, &l));
    ini_close(&r);
    ini_error(&r, 7, "late %s", "message");
    ini_error(&r, 0, "no line");
    CHECK(r.errors == 2 && d.n == 2);
    if (d.n == 2) {
        CHECK_STR(d.msgs[0], "x.conf:7: late message");
        CHECK_STR(d.msgs[1], "x.conf: no line");
    }
    diags_free(&d);
}

static void test_long_line(void)
{
    size_t n = 100000;
    char *t = malloc(n + 8);
    CHECK(t != NULL);
    if (!t)
        return;
    memcpy(t, "[", 1);
    memset(t + 1, 'x', n - 2);
    t[n - 1] = ']';
    rd_diags d = { 0 };
    ini_format fmt = { CFG, NULL };
    ini_reader r;
    ini_open(&r, "big", t, n, &fmt, &d);
    ini_line l;
    CHECK(ini_next(&r, &l) && l.kind == INI_SECTION && l.name && strlen(l.name) == n - 2);
    CHECK(!ini_next(&r, &l));
    ini_close(&r);
    CHECK(d.n == 0);
    free(t);
}

int main(void)
{
    test_table();
    test_errors_after_close();
    test_long_line();
    return check_done("ini");
}
