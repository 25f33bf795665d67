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

int main(void)
{
    test_words();
    test_urls();
    test_long();
    return check_done("textutil");
}
