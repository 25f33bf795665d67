#include "sanitize.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"

typedef struct { const char *in; size_t len; unsigned flags; const char *want; } scase;

#define S(lit) lit, sizeof(lit) - 1

static void test_sanitize_cases(void)
{
    static const scase cases[] = {
        { S("plain text"), 0, "plain text" },
        { S("\x1b[2J"), 0, "\xE2\x90\x9B[2J" },                   /* ESC → ␛ */
        { S("\x1b]52;c;aGVsbG8=\x07"), 0, "\xE2\x90\x9B]52;c;aGVsbG8=\xE2\x90\x87" },
        { S("a\rb"), 0, "a\xE2\x90\x8D" "b" },                   /* CR → ␍ */
        { S("a\bb"), 0, "a\xE2\x90\x88" "b" },                   /* BS → ␈ */
        { S("a\tb"), 0, "a\xE2\x90\x89" "b" },                   /* TAB → ␉ */
        { S("a\nb"), 0, "a\xE2\x90\x8A" "b" },
        { S("a\nb"), SAN_KEEP_NL, "a\nb" },
        { S("a\0b"), 0, "a\xE2\x90\x80" "b" },                   /* NUL inside len */
        { S("a\x7f"), 0, "a\xE2\x90\xA1" },                      /* DEL → ␡ */
        { S("\xC2\x85\xC2\x9B"), 0, "<U+0085><U+009B>" },        /* C1 */
        { S("x\xE2\x80\xAEy"), 0, "x<U+202E>y" },                /* RLO */
        { S("\xE2\x81\xA6\xE2\x80\x8F\xD8\x9C"), 0, "<U+2066><U+200F><U+061C>" },
        { S("caf\xC3\xA9"), 0, "caf\xC3\xA9" },
        { S("\xE6\xBC\xA2\xE5\xAD\x97"), 0, "\xE6\xBC\xA2\xE5\xAD\x97" },
        { S("\xF0\x9F\x98\x80"), 0, "\xF0\x9F\x98\x80" },
        { S("a\xFF" "b"), 0, "a\xEF\xBF\xBD" "b" },              /* invalid byte */
        { S("\xC0\xAF"), 0, "\xEF\xBF\xBD\xEF\xBF\xBD" },        /* overlong '/' */
        { S("\xE0\x80\xAF"), 0, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD" },
        { S("\xED\xA0\x80"), 0, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD" }, /* surrogate */
        { S("\xF4\x90\x80\x80"), 0,
          "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD" },   /* > U+10FFFF */
        { S("ab\xE2\x82"), 0, "ab\xEF\xBF\xBD" },                /* truncated at end */
        { S("ab\xF0\x9F\x98"), 0, "ab\xEF\xBF\xBD" },
        { S("\x1b[31mred"), SAN_ASCII, "^[[31mred" },
        { S("a\0\x7f"), SAN_ASCII, "a^@^?" },
        { S("caf\xC3\xA9"), SAN_ASCII, "caf?" },
        { S("\xC2\x9B" "x"), SAN_ASCII, "<U+009B>x" },
        { S("\xE2\x80\xAE"), SAN_ASCII, "<U+202E>" },
        { S("\xFF"), SAN_ASCII, "?" },
        { S(""), 0, "" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const scase *c = &cases[i];
        char *got = sanitize_bytes(c->in, c->len, c->flags);
        CHECK_STR(got, c->want);
        if (strlen(c->in) == c->len)   /* measured without making it: the same width */
            CHECK(sanitize_raw_width(c->in, c->flags) == sanitize_width(got));
        free(got);
    }
    char *n = sanitize_str(NULL, 0);
    CHECK_STR(n, "");
    free(n);
}

/* The invariant of sanitize.h over every byte pair and a few triples. */
static void test_invariant(void)
{
    unsigned char in[4];
    int bad = 0;
    for (int a = 0; a < 256; a++)
        for (int b = 0; b < 256; b++) {
            in[0] = (unsigned char)a;
            in[1] = (unsigned char)b;
            in[2] = 0x80;
            char *s = sanitize_bytes((const char *)in, 3, 0);
            in[3] = 0;
            if (a && b) {               /* the width without the copy agrees, both modes */
                char *t = sanitize_bytes((const char *)in, 3, SAN_ASCII);
                bad += sanitize_raw_width((const char *)in, 0) != sanitize_width(s);
                bad += sanitize_raw_width((const char *)in, SAN_ASCII) != sanitize_width(t);
                free(t);
            }
            for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                if (*p < 0x20 || *p == 0x7f)
                    bad++;
                if (*p == 0xC2 && p[1] >= 0x80 && p[1] < 0xA0)
                    bad++;
                if (*p == 0xE2 && p[1] == 0x80 && p[2] >= 0xAA && p[2] <= 0xAE)
                    bad++;
            }
            free(s);
        }
    CHECK(bad == 0);
}

static void test_width_fit(void)
{
    CHECK(sanitize_width("abc") == 3);
    CHECK(sanitize_width("\xE6\xBC\xA2\xE5\xAD\x97") == 4);       /* 2 wide */
    CHECK(sanitize_width("e\xCC\x81") == 1);                      /* combining */
    CHECK(sanitize_width("\xF0\x9F\x98\x80") == 2);               /* emoji */
    CHECK(sanitize_width("\xE2\x90\x9B") == 1);                   /* control picture */
    CHECK(sanitize_width("") == 0);
    CHECK(sanitize_width(NULL) == 0);

    char out[64];
    CHECK(sanitize_fit("hello", 10, out, sizeof out, 0) == 5);
    CHECK_STR(out, "hello");
    CHECK(sanitize_fit("hello", 5, out, sizeof out, 0) == 5);
    CHECK_STR(out, "hello");
    CHECK(sanitize_fit("hello world", 5, out, sizeof out, 0) == 5);
    CHECK_STR(out, "hell\xE2\x80\xA6");
    CHECK(sanitize_fit("hello world", 5, out, sizeof out, SAN_ASCII) == 5);
    CHECK_STR(out, "hell~");
    /* a cut never ends inside a parenthesis when enough is left before it */
    CHECK(sanitize_fit_clause("connection refused (127.0.0.1:15672)", 24, out, sizeof out, 0) == 19);
    CHECK_STR(out, "connection refused\xE2\x80\xA6");
    CHECK(sanitize_fit_clause("connection refused (127.0.0.1:15672)", 24, out, sizeof out, SAN_ASCII) == 19);
    CHECK_STR(out, "connection refused~");
    CHECK(sanitize_fit_clause("ok (a) then (b c d e f)", 16, out, sizeof out, 0) == 12);
    CHECK_STR(out, "ok (a) then\xE2\x80\xA6");              /* a closed one stays */
    CHECK(sanitize_fit_clause("x (nested (deep) still open)", 20, out, sizeof out, 0) == 20);
    CHECK_STR(out, "x (nested (deep) st\xE2\x80\xA6");     /* too little before it: cut as is */
    CHECK(sanitize_fit_clause("fits (whole)", 12, out, sizeof out, 0) == 12);
    CHECK_STR(out, "fits (whole)");
    CHECK(sanitize_fit_clause("plain words cut here", 10, out, sizeof out, 0) == 10);
    CHECK_STR(out, "plain wor\xE2\x80\xA6");
    /* wide chars: never half a character */
    const char *kanji = "\xE6\xBC\xA2\xE5\xAD\x97\xE6\xBC\xA2";  /* 6 columns */
    CHECK(sanitize_fit(kanji, 6, out, sizeof out, 0) == 6);
    CHECK_STR(out, kanji);
    CHECK(sanitize_fit(kanji, 5, out, sizeof out, 0) == 5);
    CHECK_STR(out, "\xE6\xBC\xA2\xE5\xAD\x97\xE2\x80\xA6");
    CHECK(sanitize_fit(kanji, 4, out, sizeof out, 0) == 3);
    CHECK_STR(out, "\xE6\xBC\xA2\xE2\x80\xA6");
    CHECK(sanitize_fit(kanji, 1, out, sizeof out, 0) == 1);
    CHECK_STR(out, "\xE2\x80\xA6");
    /* the middle ellipsis keeps the tail, where ids and names differ */
    static const struct { const char *in; int cols, used; const char *want; unsigned fl; } mid[] = {
        {"a94db719-e3a1-4c3b-9a3d-0123456789ab", 12, 12, "a94db\xE2\x80\xA6\x36\x37\x38\x39\x61\x62", 0},
        {"worker-unhealthy", 10, 10, "work\xE2\x80\xA6\x61lthy", 0},
        {"worker-unknown", 10, 10, "work\xE2\x80\xA6known", 0},
        {"worker-unknown", 10, 10, "work~known", SAN_ASCII},
        {"worker-unknown", 14, 14, "worker-unknown", 0},       /* fits: whole */
        {"worker-unknown", 3, 3, "wo\xE2\x80\xA6", 0},          /* too narrow: the end cut */
        {"\xE6\xBC\xA2\xE5\xAD\x97\xE6\xBC\xA2", 5, 5, "\xE6\xBC\xA2\xE2\x80\xA6\xE6\xBC\xA2", 0},
    };
    for (size_t i = 0; i < sizeof mid / sizeof *mid; i++) {
        CHECK(sanitize_fit_mid(mid[i].in, mid[i].cols, out, sizeof out, mid[i].fl) == mid[i].used);
        CHECK_STR(out, mid[i].want);
    }
    CHECK(sanitize_fit("abc", 0, out, sizeof out, 0) == 0);
    CHECK_STR(out, "");
    CHECK(sanitize_fit(NULL, 5, out, sizeof out, 0) == 0);
    /* byte cap smaller than the text: cut on a character boundary */
    char small[6];
    sanitize_fit("\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9", 10, small, sizeof small, 0);
    CHECK(strlen(small) < sizeof small);
    CHECK(sanitize_width(small) <= 10);
    CHECK_STR(small, "\xC3\xA9\xE2\x80\xA6");
}

static void test_utf8(void)
{
    char *s = sanitize_utf8(S("ok\x1b\xFF\xC3\xA9"));
    CHECK_STR(s, "ok\x1b\xEF\xBF\xBD\xC3\xA9");
    free(s);
}

int main(void)
{
    test_sanitize_cases();
    test_invariant();
    test_width_fit();
    test_utf8();
    return check_done("test_sanitize");
}
