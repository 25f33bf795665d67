/* One execution in full (core/detail.h): a row as JSON, the pane's text, the payload. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "detail.h"

/* Each column's value by its name: times and counts as numbers, JSON objects and arrays
 * embedded, anything else a string, SQL null as null; a repeated name keeps the first. */
static void test_row(void)
{
    static const struct { const char *name, *val, *want; } cases[] = {
        { "created_at", "1700000000.5", "\"created_at\":1700000000.5" },
        { "finished_at", NULL, "\"finished_at\":null" },
        { "updated_at", "soon", "\"updated_at\":\"soon\"" },        /* not a number: kept */
        { "attempt", "3", "\"attempt\":3" },
        { "id", "42", "\"id\":\"42\"" },                             /* ids stay strings */
        { "params", " {\"a\": [1, 2]}", "\"params\":{\"a\":[1,2]}" },
        { "result", "[true]", "\"result\":[true]" },
        { "error", "{not json", "\"error\":\"{not json\"" },
        { "worker", "w\x1b[31m", "\"worker\":\"w\\u001b[31m\"" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *n[2] = { cases[i].name, cases[i].name }, *v[2] = { cases[i].val, "second" };
        char *j = detail_from_row(n, v, 2);
        char want[200];
        snprintf(want, sizeof want, "{%s}", cases[i].want);
        CHECK_STR(j, want);
        free(j);
    }
}

static const char RECORD[] =
    "{\"id\":\"7\",\"name\":\"core.http\",\"status\":\"failed\",\"worker\":\"w1\",\"attempt\":2,"
    "\"max_attempts\":4,\"chain_root\":\"5\",\"chain_length\":3,"
    "\"error\":\"boom\\u001b]52;c;AAAA\\u0007 \\u202egnp.exe\",\"backtrace\":\"at a()\\nat b()\","
    "\"params\":{\"url\":\"http://x\",\"n\":[1,2]},\"result\":null,"
    "\"created_at\":1700000000,\"finished_at\":null,\"retry_policy\":\"linear\"}";

static void test_text(void)
{
    char *t = detail_text(RECORD, 0);
    static const char want[] =
        "execution 7  core.http  status failed\n"
        "chain position: attempt 2 of 4 allowed  chain root 5, 3 attempts in all\n"
        "worker w1\n"
        "\ntimes (UTC):\n"
        "  created_at           2023-11-14 22:13:20.000Z\n"
        "  finished_at          -\n"
        "\nerror:\n"
        "boom\xe2\x90\x9b]52;c;AAAA\xe2\x90\x87 <U+202E>gnp.exe\n"
        "\nbacktrace:\n"
        "at a()\nat b()\n"
        "\nparameters:\n"
        "{\n  \"url\": \"http://x\",\n  \"n\": [1, 2]\n}\n"
        "\nresult:\n  (none)\n"
        "\nretry_policy:\nlinear\n";
    CHECK_STR(t, want);
    for (const char *p = t; *p; p++)        /* no control byte but the line breaks */
        CHECK((unsigned char)*p >= 0x20 || *p == '\n');
    free(t);
    char *a = detail_text(RECORD, 1u /* SAN_ASCII */);
    for (const char *p = a; *p; p++)
        CHECK((unsigned char)*p < 0x80);
    free(a);
    char *none = detail_text("not json", 0);
    CHECK_STR(none, "(no record)");
    free(none);
    none = detail_text(NULL, 0);
    CHECK_STR(none, "(no record)");
    free(none);
}

static void test_payload(void)
{
    char *p = detail_payload(RECORD);
    CHECK_STR(p, "{\"url\":\"http://x\",\"n\":[1,2]}");
    free(p);
    p = detail_payload("{\"id\":\"1\",\"params\":null}");     /* no parameters: the record */
    CHECK_STR(p, "{\"id\":\"1\",\"params\":null}");
    free(p);
    CHECK(detail_payload("[1]") == NULL && detail_payload(NULL) == NULL);
    char *pr = detail_pretty_json("{\"a\":{\"b\":1}}");
    CHECK_STR(pr, "{\n  \"a\": {\n    \"b\": 1\n  }\n}");
    free(pr);
    CHECK(detail_pretty_json("{") == NULL);
}

int main(void)
{
    test_row();
    test_text();
    test_payload();
    return check_done("detail");
}
