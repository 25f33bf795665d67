/* core/intern: one copy per distinct text, references counted, ids reused, size flat. */
#include "../../src/core/intern.h"

#include <stdio.h>
#include <string.h>

#include "check.h"

static void test_basics(void)
{
    intern *in = intern_new();
    uint32_t a = intern_add(in, "boom", 4), b = intern_add(in, "bang", 4);
    CHECK(a != 0 && b != 0 && a != b);
    CHECK(intern_add(in, "boom", 4) == a);             /* the same text: the same id */
    CHECK(intern_refs(in, a) == 2 && intern_count(in) == 2);
    CHECK_STR(intern_str(in, a), "boom");
    CHECK(intern_len(in, b) == 4);
    CHECK(intern_find(in, "bang", 4) == b && intern_find(in, "bong", 4) == 0);
    CHECK(intern_refs(in, b) == 1);                    /* find takes no reference */
    /* bytes, NULs included, tell texts apart */
    uint32_t z1 = intern_add(in, "x\0y", 3), z2 = intern_add(in, "x\0z", 3);
    CHECK(z1 != z2 && intern_len(in, z1) == 3 && intern_str(in, z1)[2] == 'y');
    CHECK(intern_add(in, "", 0) != 0 && intern_find(in, "", 0) != 0);
    intern_drop(in, a);
    CHECK(intern_find(in, "boom", 4) == a);            /* one holder left */
    intern_drop(in, a);
    CHECK(intern_find(in, "boom", 4) == 0 && intern_refs(in, a) == 0);
    CHECK(intern_add(in, "new", 3) == a);              /* the freed id is reused */
    intern_drop(in, 0);                                /* ignored */
    CHECK(intern_count(in) == 5);
    intern_free(in);
}

/* Many texts through the table: each found again, deletion keeps every other findable,
 * and churn at a fixed count keeps the bytes where they were. */
static void test_churn(void)
{
    enum { N = 20000 };
    intern *in = intern_new();
    static uint32_t ids[N];
    char s[32];
    for (int i = 0; i < N; i++) {
        int n = snprintf(s, sizeof s, "error number %d", i);
        ids[i] = intern_add(in, s, (size_t)n);
    }
    for (int i = 0; i < N; i += 3)
        intern_drop(in, ids[i]);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        int n = snprintf(s, sizeof s, "error number %d", i);
        bad += intern_find(in, s, (size_t)n) != (i % 3 ? ids[i] : 0);
    }
    CHECK(bad == 0);
    size_t before = intern_bytes(in);
    for (int round = 0; round < 10; round++)
        for (int i = 0; i < N; i += 3) {
            int n = snprintf(s, sizeof s, "error number %d", i);
            if (round % 2 == 0)
                ids[i] = intern_add(in, s, (size_t)n);
            else
                intern_drop(in, ids[i]);
        }
    /* the texts' arena reclaims what was dropped before it grows: at most the garbage it
       tolerates (a quarter) and its room (an eighth) more than before */
    char msg[80];
    snprintf(msg, sizeof msg, "%zu bytes after the churn, %zu before", intern_bytes(in), before);
    CHECK_MSG(intern_bytes(in) * 4 <= before * 5, msg);
    fprintf(stderr, "intern: %s\n", msg);
    for (int round = 0; round < 40; round++)       /* and it stays there */
        for (int i = 0; i < N; i += 3) {
            int n = snprintf(s, sizeof s, "error number %d", i);
            if (round % 2 == 0)
                ids[i] = intern_add(in, s, (size_t)n);
            else
                intern_drop(in, ids[i]);
        }
    snprintf(msg, sizeof msg, "%zu bytes after more churn, %zu before", intern_bytes(in), before);
    CHECK_MSG(intern_bytes(in) * 4 <= before * 5, msg);
    for (int i = 1; i < N; i += 3) {               /* every held text intact */
        int n = snprintf(s, sizeof s, "error number %d", i);
        bad += intern_find(in, s, (size_t)n) != ids[i] || strcmp(intern_str(in, ids[i]), s) != 0;
    }
    CHECK(bad == 0);
    CHECK(intern_count(in) == N - (N + 2) / 3);
    intern_free(in);
}

int main(void)
{
    test_basics();
    test_churn();
    return check_done("intern");
}
