/* text_split_list (core/textutil.h): the one list rule, one row per boundary. */
#include "textutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* The items joined with '|' ("" for none), as text to compare whole. */
static void joined(const char *list, text_list_rule rule, char *out, size_t cap)
{
    text_span sp[8];
    size_t n = text_split_list(list, rule, sp, 8), used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && i < 8; i++)
        used += (size_t)snprintf(out + used, cap - used, "%s%.*s", i ? "|" : "", (int)sp[i].len,
                                 sp[i].s);
    if (n > 8)
        snprintf(out + used, cap - used, "|+%zu", n - 8);
}

static void test_words(void)
{
    static const struct { const char *in, *want; } cases[] = {
        { NULL, "" },
        { "", "" },
        { " , ,\t,", "" },                           /* only separators */
        { "a", "a" },
        { "a,b", "a|b" },                            /* rabbit globs, sqs URLs */
        { " worker.*.executions , orders ", "worker.*.executions|orders" },
        { "orders.*, jobs ,,[a-c]?", "orders.*|jobs|[a-c]?" },   /* empty items dropped */
        { "http://w1:1 http://w2:2", "http://w1:1|http://w2:2" },   /* workers: blanks */
        { "http://w1:1,\thttp://w2:2,  http://w3:3", "http://w1:1|http://w2:2|http://w3:3" },
        { "a,b,c,d,e,f,g,h,i,j", "a|b|c|d|e|f|g|h|+2" },    /* count beyond max */
        { "\xff\xfe,\xc3", "\xff\xfe|\xc3" },        /* bytes pass through unchanged */
    };
    char got[256];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        joined(cases[i].in, TEXT_LIST_WORDS, got, sizeof got);
        CHECK_STR(got, cases[i].want);
    }
}

static void test_urls(void)
{
    static const struct { const char *in, *want; } cases[] = {
        { NULL, "" },
        { "", "" },
        { "   ", "" },                               /* one empty item */
        { "redis://h:6379", "redis://h:6379" },
        { "redis://r:6380, redis://p:6379", "redis://r:6380|redis://p:6379" },
        { " redis://a ,\trediss://b ", "redis://a|rediss://b" },
        { "redis://:pa,ss@h", "redis://:pa,ss@h" },  /* a comma in a password stays */
        { "redis://:p w@h", "redis://:p w@h" },      /* so does a blank */
        { "redis://a,b,unix:///s.sock", "redis://a,b|unix:///s.sock" },
        { "redis+unix:///x,redis://y", "redis+unix:///x|redis://y" },
        { ", redis://x", "|redis://x" },             /* the empty item is kept */
        { "redis://a,", "redis://a," },              /* no scheme after it: part of the URL */
        { "redis://a,://b", "redis://a,://b" },      /* "://" alone is no scheme */
    };
    char got[256];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        joined(cases[i].in, TEXT_LIST_URLS, got, sizeof got);
        CHECK_STR(got, cases[i].want);
    }
    size_t n;
    text_span *all = text_split_all("a b c", TEXT_LIST_WORDS, &n);
    CHECK(n == 3 && all[2].len == 1 && all[2].s[0] == 'c');
    free(all);
    all = text_split_all(NULL, TEXT_LIST_WORDS, &n);
    CHECK(n == 0 && all != NULL);
    free(all);
}

/* A long hostile list: every item found, none past the end, spans inside the text. */
static void test_long(void)
{
    size_t len = 100000;
    char *s = malloc(len + 1);
    for (size_t i = 0; i < len; i++)
        s[i] = i % 3 == 2 ? ',' : i % 7 == 0 ? ' ' : 'x';
    s[len] = '\0';
    size_t n;
    text_span *sp = text_split_all(s, TEXT_LIST_WORDS, &n);
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++) {
        CHECK(sp[i].s >= s && sp[i].s + sp[i].len <= s + len && sp[i].len > 0);
        bytes += sp[i].len;
    }
    size_t xs = 0;
    for (size_t i = 0; i < len; i++)
        xs += s[i] == 'x';
    CHECK(bytes == xs);
    free(sp);
    sp = text_split_all(s, TEXT_LIST_URLS, &n);
    CHECK(n == 1 && sp[0].len <= len);
    free(sp);
    free(s);
}

/* Numbers in short form, one row per boundary: four digits and up, three figures at
 * level 1, none after the point at level 2, the unit moving up at 1000 of the one before. */
static void test_short_numbers(void)
{
    static const struct { const char *in; int level; const char *want; bool any; } cases[] = {
        {"999", 1, "999", false},
        {"1234", 1, "1.2k", true},
        {"1234", 2, "1k", true},
        {"14810", 1, "14.8k", true},
        {"14810", 2, "15k", true},
        {"99949", 1, "99.9k", true},
        {"99950", 1, "100k", true},
        {"148100", 1, "148k", true},
        {"999499", 1, "999k", true},
        {"999500", 1, "1.0M", true},
        {"999500", 2, "1M", true},
        {"1234567", 1, "1.2M", true},
        {"2600000000", 2, "3G", true},
        {"~20000", 1, "~20.0k", true},
        {"10000+", 2, "10k+", true},
        {"rising 14810/20330", 1, "rising 14.8k/20.3k", true},
        {"rising 14810/20330", 2, "rising 15k/20k", true},
        {"12345.6", 1, "12.3k", true},
        {"3/3", 1, "3/3", false},
        {"worker1234", 1, "worker1234", false},    /* a name's digits are not a number */
        {"1234abc", 1, "1234abc", false},
        {"", 1, "", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char out[64];
        bool any = text_short_numbers(cases[i].in, cases[i].level, out, sizeof out);
        CHECK_STR(out, cases[i].want);
        CHECK(any == cases[i].any);
    }
    char tiny[4];
    text_short_numbers("123456789", 1, tiny, sizeof tiny);   /* never past the buffer */
    CHECK(strlen(tiny) < sizeof tiny);
}

int main(void)
{
    test_short_numbers();
    test_words();
    test_urls();
    test_long();
    return check_done("textutil");
}
