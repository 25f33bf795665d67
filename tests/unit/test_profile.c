#include "profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static const char good[] =
    "# attune profile\n"
    "[profile]\n"
    "name = attune\n"
    "store = postgresql            # postgresql | redis\n"
    "semantics = attune\n"
    "variant_query = detect\n"
    "dlq = attune.dlx.queue\n"
    "\n"
    "[query detect]\n"
    "SELECT CASE WHEN to_regclass('attune.execution') IS NULL\n"
    "            THEN 'attune1' ELSE 'attune2' END;\n"
    "\n"
    "[query executions]\n"
    "  -- indented comment kept\n"
    "SELECT id::text AS id, status::text AS status\n"
    "FROM execution\n"
    "WHERE x = '[not a section]'\n"
    "  [also not a section]\n"
    "# a hash line inside SQL stays\n"
    "ORDER BY created DESC, id DESC LIMIT $1;\n"
    "\n\n"
    "[action retry]\n"
    "method = POST\n"
    "path = /api/v1/executions/{id}/retry      # {id} is URL-escaped\n"
    "body = {\"reason\":\"manual_retry\", \"note\":\"a # b\"}\n"
    "\n"
    "[action drain]\n"
    "method = POST\n"
    "path = /api/v1/workers/{worker}/cordon\n";

static void test_good(void)
{
    rd_profile p;
    rd_diags d = { 0 };
    bool ok = profile_parse("attune.profile", good, &p, &d);
    for (size_t i = 0; i < d.n; i++)
        fprintf(stderr, "unexpected: %s\n", d.msgs[i]);
    CHECK(ok && d.n == 0);
    CHECK_STR(p.path, "attune.profile");
    CHECK_STR(p.name, "attune");
    CHECK_STR(p.store, "postgresql");
    CHECK_STR(p.semantics, "attune");
    CHECK_STR(profile_get(&p, "variant_query"), "detect");
    CHECK_STR(profile_get(&p, "dlq"), "attune.dlx.queue");
    CHECK_STR(profile_get(&p, "name"), "attune");
    CHECK(profile_get(&p, "missing") == NULL);
    CHECK(p.n_queries == 2);
    CHECK_STR(profile_query(&p, "detect"),
              "SELECT CASE WHEN to_regclass('attune.execution') IS NULL\n"
              "            THEN 'attune1' ELSE 'attune2' END;");
    CHECK_STR(profile_query(&p, "executions"),
              "  -- indented comment kept\n"
              "SELECT id::text AS id, status::text AS status\n"
              "FROM execution\n"
              "WHERE x = '[not a section]'\n"
              "  [also not a section]\n"
              "# a hash line inside SQL stays\n"
              "ORDER BY created DESC, id DESC LIMIT $1;");
    CHECK(profile_query(&p, "nope") == NULL);
    CHECK(p.queries[1].line == 13);
    const rd_profile_action *a = profile_action(&p, "retry");
    CHECK(a != NULL);
    if (a) {
        CHECK_STR(a->method, "POST");
        CHECK_STR(a->path, "/api/v1/executions/{id}/retry");
        CHECK_STR(a->body, "{\"reason\":\"manual_retry\", \"note\":\"a # b\"}");
        CHECK(a->line == 23);
    }
    a = profile_action(&p, "drain");
    CHECK(a && a->body == NULL);
    CHECK(profile_action(&p, "undrain") == NULL);
    profile_free(&p);
    diags_free(&d);
}

static const char bad[] =
    "stray = 1\n"                              /* 1 outside a section */
    "[profile]\n"                              /* 2 missing semantics */
    "name = x\n"                               /* 3 */
    "store = mysql\n"                          /* 4 → unknown store (reported at 2) */
    "name = y\n"                               /* 5 duplicate key */
    "oops\n"                                   /* 6 missing = */
    "[query q1]\n"                             /* 7 */
    "SELECT 1;\n"                              /* 8 */
    "[query q1]\n"                             /* 9 duplicate query */
    "SELECT 2;\n"                              /* 10 (skipped) */
    "[query]\n"                                /* 11 needs a name */
    "[action retry]\n"                         /* 12 no method / path */
    "verb = POST\n"                            /* 13 unknown key */
    "[action drain]\n"                         /* 14 bad method, relative path */
    "method = FETCH\n"                         /* 15 */
    "path = workers/{worker}\n"                /* 16 */
    "[widgets]\n"                              /* 17 unknown section */
    "x = 1\n"                                  /* 18 ignored */
    "[query empty]\n"                          /* 19 empty query */
    "\n";

static bool has(const rd_diags *d, const char *prefix, const char *needle)
{
    for (size_t i = 0; i < d->n; i++)
        if (strncmp(d->msgs[i], prefix, strlen(prefix)) == 0 && strstr(d->msgs[i], needle))
            return true;
    return false;
}

static void test_bad(void)
{
    rd_profile p;
    rd_diags d = { 0 };
    CHECK(!profile_parse("bad.profile", bad, &p, &d));
    static const struct { const char *at, *needle; } want[] = {
        { "bad.profile:1: ", "outside a section" },
        { "bad.profile:5: ", "duplicate key 'name'" },
        { "bad.profile:6: ", "missing '='" },
        { "bad.profile:9: ", "duplicate query 'q1'" },
        { "bad.profile:11: ", "needs a name" },
        { "bad.profile:13: ", "unknown key 'verb'" },
        { "bad.profile:17: ", "unknown section [widgets]" },
        { "bad.profile:19: ", "query 'empty' is empty" },
        { "bad.profile:2: ", "unknown store 'mysql'" },
        { "bad.profile:2: ", "missing 'semantics'" },
        { "bad.profile:12: ", "[action retry] is missing 'method'" },
        { "bad.profile:12: ", "[action retry] is missing 'path'" },
        { "bad.profile:14: ", "unknown method 'FETCH'" },
        { "bad.profile:14: ", "path must start with '/'" },
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        CHECK_MSG(has(&d, want[i].at, want[i].needle), want[i].needle);
    if (d.n != sizeof want / sizeof *want)
        for (size_t i = 0; i < d.n; i++)
            fprintf(stderr, "  diag: %s\n", d.msgs[i]);
    CHECK(d.n == sizeof want / sizeof *want);
    CHECK_STR(profile_query(&p, "q1"), "SELECT 1;");
    profile_free(&p);
    diags_free(&d);

    CHECK(!profile_parse("e", "", &p, &d));
    CHECK(has(&d, "e:1: ", "missing [profile]"));
    CHECK(has(&d, "e:1: ", "missing 'name'"));
    profile_free(&p);
    diags_free(&d);
}

static void test_load(void)
{
    char dir[] = "/tmp/rd_prof_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/mine.profile", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("[profile]\nname = mine\nstore = redis\nsemantics = alakai\n", f);
    fclose(f);
    setenv("REDRIVE_PROFILES", dir, 1);
    rd_profile p;
    rd_diags d = { 0 };
    CHECK(profile_load("mine", &p, &d));
    CHECK_STR(p.name, "mine");
    CHECK_STR(p.path, path);
    profile_free(&p);
    CHECK(profile_load(path, &p, &d));   /* by path */
    CHECK_STR(p.semantics, "alakai");
    profile_free(&p);
    CHECK(d.n == 0);
    CHECK(!profile_load("no-such-profile-xyz", &p, &d));
    CHECK(d.n == 1 && strstr(d.msgs[0], "not found"));
    profile_free(&p);
    CHECK(!profile_load("/nonexistent/x.profile", &p, &d));
    CHECK(!profile_load("", &p, &d));
    CHECK(!profile_load("../evil", &p, &d));   /* a path: read as is, not found */
    profile_free(&p);
    diags_free(&d);
    unlink(path);
    rmdir(dir);
    unsetenv("REDRIVE_PROFILES");
}

/* A NUL byte is an error on its line, in settings and in SQL bodies alike. */
static void test_nul(void)
{
    static const char t[] = "[profile]\n"                  /* 1 */
                            "name = n\0\n"                 /* 2 */
                            "store = redis\n"              /* 3 */
                            "semantics = alakai\n"         /* 4 */
                            "[query q]\n"                  /* 5 */
                            "SELECT 1\n"                   /* 6 */
                            "  FROM t\0\n"                 /* 7 */
                            "WHERE x;\n";                  /* 8 */
    rd_profile p;
    rd_diags d = { 0 };
    CHECK(!profile_parse_len("nul.profile", t, sizeof t - 1, &p, &d));
    static const char *const want[] = {
        "nul.profile:2: NUL byte",
        "nul.profile:7: NUL byte",
        "nul.profile:1: [profile] is missing 'name'",
    };
    CHECK(d.n == sizeof want / sizeof *want);
    for (size_t i = 0; i < d.n && i < sizeof want / sizeof *want; i++)
        CHECK_STR(d.msgs[i], want[i]);
    CHECK_STR(p.store, "redis");
    CHECK_STR(profile_query(&p, "q"), "SELECT 1\nWHERE x;");
    profile_free(&p);
    diags_free(&d);
}

int main(void)
{
    test_good();
    test_bad();
    test_load();
    test_nul();
    return check_done("test_profile");
}
