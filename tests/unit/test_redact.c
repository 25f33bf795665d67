/* Messages about a referenced secret value (src/core/redact.c): every part of the value
 * is named, never printed; one row per kind of value and part. */
#include <stdio.h>
#include <string.h>

#include "../../src/core/redact.h"
#include "check.h"

static void test_table(void)
{
    static const struct { const char *value, *msg, *want; } t[] = {
        /* the password with an unescaped '@' that libpq cut in the wrong place */
        {"postgresql://u:Secr3t@Tail@127.0.0.1:5432/db",
         "could not resolve host \"Tail@127.0.0.1\": not known",
         "could not resolve host \"the password part of env:DATABASE_URL@the host part of "
         "env:DATABASE_URL\": not known (encode @ in the password as %40)"},
        {"postgresql://u@Secr3tHost.invalid/db",
         "could not resolve host \"Secr3tHost.invalid\": not known",
         "could not resolve host \"the host part of env:DATABASE_URL\": not known"},
        {"postgresql://u@127.0.0.1:1/db",
         "connection to server at \"127.0.0.1\", port 1 failed: Connection refused",
         "connection to server at \"the host part of env:DATABASE_URL\", port the port part "
         "of env:DATABASE_URL failed: Connection refused"},
        {"postgresql://ro@db:5432/Secr3tDb?sslmode=require",
         "FATAL:  database \"Secr3tDb\" does not exist",
         "FATAL:  database \"the path part of env:DATABASE_URL\" does not exist"},
        {"host=Secr3tKV.invalid dbname=x user='a b'",
         "could not resolve host \"Secr3tKV.invalid\"; role \"a b\"",
         "could not resolve host \"the host part of env:DATABASE_URL\"; role \"the user part of "
         "env:DATABASE_URL\""},
        {"host=127.0.0.1 sslmode=Secr3t", "invalid sslmode value: \"Secr3t\"",
         "invalid sslmode value: \"the sslmode part of env:DATABASE_URL\""},
        {"redis://:Secr3t@127.0.0.1:6379/0?password=Secr3tQ",
         "bad database number '0?password=Secr3tQ'",
         "bad database number 'the path part of env:DATABASE_URL?the query part of "
         "env:DATABASE_URL'"},
        {"redis+unix:///tmp/x.sock?password=Secr3tU", "unsupported query 'password=Secr3tU'",
         "unsupported query 'the query part of env:DATABASE_URL'"},
        {"redis://Secr3t%40x@10.0.0.9:6379", "WRONGPASS for Secr3t@x at 10.0.0.9:6379",
         "WRONGPASS for the user part of env:DATABASE_URL at the host part of "
         "env:DATABASE_URL:the port part of env:DATABASE_URL"},
        {"redis://Secr3tA:6380, redis://:pw@Secr3tB:6379/2",
         "redis Secr3tA:6380 down; redis Secr3tB:6379: refused",
         "redis the host part of env:DATABASE_URL:the port part of env:DATABASE_URL down; "
         "redis the host part of env:DATABASE_URL:the port part of env:DATABASE_URL: refused"},
        {"opaque-Secr3t", "it said opaque-Secr3t twice: opaque-Secr3t",
         "it said the value part of env:DATABASE_URL twice: the value part of env:DATABASE_URL"},
        /* a piece is matched as a word, not inside another */
        {"postgresql://u@h:1/d", "user u1 on host1: 1 error",
         "user u1 on host1: the port part of env:DATABASE_URL error"},
        {"postgresql://u@h/d", "no part here", "no part here"},
        {NULL, "unchanged \"x\"", "unchanged \"x\""},
        {"", "unchanged", "unchanged"},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        char out[400];
        redact_ref(t[i].msg, t[i].value, "env:DATABASE_URL", out, sizeof out);
        CHECK_STR(out, t[i].want);
        CHECK_MSG(!strstr(out, "Secr3t"), t[i].msg);
    }
    char small[8];
    redact_ref("host Secr3tHost", "redis://Secr3tHost", "env:X", small, sizeof small);
    CHECK_STR(small, "host th");
}

int main(void)
{
    test_table();
    return check_done("test_redact");
}
