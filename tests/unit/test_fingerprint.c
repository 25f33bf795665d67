#include "fingerprint.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"

static void test_cases(void)
{
    static const struct { const char *in, *want; } cases[] = {
        { NULL, "" },
        { "", "" },
        { "connection refused to host 10.0.0.7:5432", "connection refused to host <ip>:<n>" },
        { "task 3f2504e0-4f89-11d3-9a0c-0305e82c3301 failed",
          "task <uuid> failed" },
        { "task 3F2504E0-4F89-11D3-9A0C-0305E82C3301 failed", "task <uuid> failed" },
        { "cannot retry execution in status 'failed'",
          "cannot retry execution in status '<s>'" },
        { "key \"abc 123\" missing", "key \"<s>\" missing" },
        { "can't open 'x'", "can't open '<s>'" },
        { "at 2024-05-01T12:34:56.789Z worker died", "at <ts> worker died" },
        { "at 2024-05-01 12:34:56+02:00 x", "at <ts> x" },
        { "on 2024-05-01.", "on <ts>." },
        { "user alice@example.com denied", "user <email> denied" },
        { "mail to bob.smith+ops@mail.example.org.", "mail to <email>." },
        { "segfault at 0x7ffd3a2b", "segfault at <hex>" },
        { "commit deadbeef12 bad", "commit <hex> bad" },
        { "sha abc123def456 bad", "sha <hex> bad" },
        { "decade facade", "decade facade" },        /* words made of hex letters stay */
        { "retry 3 of 5 after 1.5s", "retry <n> of <n> after <n>s" },
        { "worker7 died", "worker<n> died" },
        { "  lots   of\t\nspace  ", "lots of space" },
        { "timeout after 30000ms", "timeout after <n>ms" },
        { "999.1.1.1 is no ip", "<n> is no ip" },
        { "version 1.2.3.4.5", "version <n>" },
        { "id=123456", "id=<n>" },
        { "Worker queue TTL expired", "Worker queue TTL expired" },
        { "unterminated 'quote", "unterminated 'quote" },
        { "\xC3\xA9t\xC3\xA9 42", "\xC3\xA9t\xC3\xA9 <n>" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char out[256];
        fingerprint_make(cases[i].in, out, sizeof out);
        CHECK_STR(out, cases[i].want);
        char *d = fingerprint_dup(cases[i].in);
        CHECK_STR(d, cases[i].want);
        free(d);
    }
}

static void test_stable_and_grouping(void)
{
    char a[128], b[128];
    fingerprint_make("connection refused to host 10.0.0.7:5432 after 3 tries", a, sizeof a);
    fingerprint_make("connection refused to host 192.168.1.20:6379 after 12 tries", b, sizeof b);
    CHECK_STR(a, b);
    char c[128];
    fingerprint_make(a, c, sizeof c);   /* idempotent */
    CHECK_STR(c, a);
}

static void test_caps(void)
{
    char out[8];
    fingerprint_make("abcdefghijklmnop", out, sizeof out);
    CHECK_STR(out, "abcdefg");
    fingerprint_make("x 12345", out, 5);
    CHECK(strlen(out) <= 4);
    /* never cut inside a UTF-8 sequence */
    fingerprint_make("ab\xE2\x82\xAC", out, 5);
    CHECK_STR(out, "ab");
    fingerprint_make("hello", out, 1);
    CHECK_STR(out, "");
    fingerprint_make("hello", NULL, 0);   /* no crash */
    char big[4096];
    memset(big, '9', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    char *d = fingerprint_dup(big);
    CHECK_STR(d, "<n>");
    free(d);
}

int main(void)
{
    test_cases();
    test_stable_and_grouping();
    test_caps();
    return check_done("test_fingerprint");
}
