/* core/groupid: the hash (FNV-1a 64's published vectors), the id, the shape of an id, and
 * resolving a fingerprint or an id prefix among a list of groups, one row per boundary. */
#include "groupid.h"

#include <string.h>

#include "check.h"

static void test_hash(void)
{
    CHECK(groupid_hash("") == 0xcbf29ce484222325ull);      /* the offset basis */
    CHECK(groupid_hash(NULL) == 0xcbf29ce484222325ull);
    CHECK(groupid_hash("a") == 0xaf63dc4c8601ec8cull);     /* FNV's own test vector */
    CHECK(groupid_hash("foobar") == 0x85944171f73967e8ull);
    char id[GROUPID_LEN + 1];
    groupid_make("connection refused to host <ip>:<n> (job <n>)", id);
    CHECK_STR(id, "30dcba");
    groupid_make("boom <n>", id);
    CHECK_STR(id, "eed421");
    groupid_make("", id);
    CHECK_STR(id, "cbf29c");
}

static void test_shape(void)
{
    static const struct { const char *t; bool ok; } rows[] = {
        {"ab", false}, {"abc", true}, {"ABC", true}, {"30dcba", true}, {"30dcba1e204575d1", true},
        {"30dcba1e204575d1f", false}, {"30dcbg", false}, {"", false}, {"boom <n>", false},
        {"30dc ba", false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        CHECK_MSG(groupid_shaped(rows[i].t) == rows[i].ok, rows[i].t);
    CHECK(!groupid_shaped(NULL));
}

static void test_resolve(void)
{
    /* eed421..., 30dcba..., and two whose ids share the prefix "5" (found below) */
    rd_group g[3] = {{.fp = "boom <n>"}, {.fp = "connection refused to host <ip>:<n> (job <n>)"},
                     {.fp = "bad"}};
    char why[300], id2[GROUPID_LEN + 1];
    size_t at = 99;
    groupid_make("bad", id2);
    CHECK(groupid_resolve(g, 3, "boom <n>", &at, why, sizeof why) == GROUPID_FOUND && at == 0);
    CHECK(groupid_resolve(g, 3, "bad", &at, why, sizeof why) == GROUPID_FOUND && at == 2);   /* a fingerprint first */
    CHECK(groupid_resolve(g, 3, "30dcba", &at, why, sizeof why) == GROUPID_FOUND && at == 1);
    CHECK(groupid_resolve(g, 3, "30DCB", &at, why, sizeof why) == GROUPID_FOUND && at == 1);
    CHECK(groupid_resolve(g, 3, "30dcba1e204575d1", &at, why, sizeof why) == GROUPID_FOUND && at == 1);
    CHECK(groupid_resolve(g, 3, id2, &at, why, sizeof why) == GROUPID_FOUND && at == 2);
    CHECK(groupid_resolve(g, 3, "not in the list <n>", &at, why, sizeof why) == GROUPID_FP);
    CHECK_STR(why, "");
    CHECK(groupid_resolve(g, 3, "30dcbb", &at, why, sizeof why) == GROUPID_NONE);
    CHECK_STR(why, "no error group has the id '30dcbb' (of 3 groups) (did you mean 30dcba?)");
    CHECK(groupid_resolve(g, 1, "fffffff", &at, why, sizeof why) == GROUPID_NONE);
    CHECK_STR(why, "no error group has the id 'fffffff' (of 1 group)");
    CHECK(groupid_resolve(NULL, 0, "abc", &at, why, sizeof why) == GROUPID_NONE);
    /* two ids with one prefix: ambiguous, named */
    rd_group two[2] = {{.fp = "boom <n>"}, {.fp = "boom <n> again"}};
    char a[GROUPID_LEN + 1], b[GROUPID_LEN + 1];
    groupid_make(two[0].fp, a);
    groupid_make(two[1].fp, b);
    size_t common = 0;
    while (common < GROUPID_LEN && a[common] == b[common])
        common++;
    if (common < GROUPID_MIN) {   /* make them share a prefix: find a second text that does */
        static char buf[64];
        for (int k = 0; k < 100000; k++) {
            snprintf(buf, sizeof buf, "boom %d", k);
            groupid_make(buf, b);
            if (strncmp(a, b, GROUPID_MIN) == 0 && strcmp(buf, two[0].fp) != 0)
                break;
        }
        two[1].fp = buf;
    }
    char pre[GROUPID_MIN + 1];
    memcpy(pre, a, GROUPID_MIN);
    pre[GROUPID_MIN] = 0;
    CHECK(groupid_resolve(two, 2, pre, &at, why, sizeof why) == GROUPID_MANY);
    char want[200];
    snprintf(want, sizeof want, "the id '%s' names 2 groups (%s, %s): give more of its digits", pre, a, b);
    CHECK_STR(why, want);
    CHECK(groupid_resolve(two, 2, a, &at, why, sizeof why) == GROUPID_FOUND && at == 0);
}

int main(void)
{
    test_hash();
    test_shape();
    test_resolve();
    return check_done("groupid");
}
