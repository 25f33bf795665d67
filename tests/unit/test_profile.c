#include "profile.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "check_diags.h"
#include "xalloc.h"

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

static void test_bad(void)
{
    rd_profile p;
    rd_diags d = { 0 };
    CHECK(!profile_parse("bad.profile", bad, &p, &d));
    static const diag_want want[] = {
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
    CHECK_DIAGS(&d, want);
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

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs(text, f);
    fclose(f);
}

static void remove_file(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    unlink(path);
}

/* A schema era falls back to the profile named by actions_from for every route it does
 * not define; settings and queries are never inherited. */
static void test_actions_from(void)
{
    char dir[] = "/tmp/rd_prof_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    write_file(dir, "top.profile",
               "[profile]\nname = top\nstore = postgresql\nsemantics = attune\n"
               "variant_query = detect\n[query detect]\nSELECT 'era'\n"
               "[action retry]\nmethod = POST\npath = /top/{id}/retry\n"
               "[action drain]\nmethod = POST\npath = /top/{worker}/drain\n");
    write_file(dir, "era.profile",
               "[profile]\nname = era\nstore = postgresql\nsemantics = attune\n"
               "actions_from = top\n[query counts]\nSELECT 1\n"
               "[action drain]\nmethod = PATCH\npath = /era/{worker}\n");
    write_file(dir, "bare.profile", "[profile]\nname = bare\nstore = redis\nsemantics = alakai\n");
    write_file(dir, "loop.profile",
               "[profile]\nname = loop\nstore = redis\nsemantics = alakai\nactions_from = loop\n");
    write_file(dir, "orphan.profile",
               "[profile]\nname = orphan\nstore = redis\nsemantics = alakai\n"
               "actions_from = no-such-top\n");
    rd_profile p, b;
    rd_diags d = { 0 };
    char era[300];
    snprintf(era, sizeof era, "%s/era.profile", dir);
    CHECK(profile_load(era, &p, &d));   /* by path: top is found next to it */
    CHECK(d.n == 0);
    const rd_profile_action *a = profile_action(&p, "retry");
    CHECK(a && a->path && strcmp(a->path, "/top/{id}/retry") == 0);
    a = profile_action(&p, "drain");   /* its own route wins */
    CHECK(a && a->method && strcmp(a->method, "PATCH") == 0);
    CHECK(profile_action(&p, "undrain") == NULL);
    CHECK(profile_has_actions(&p));
    CHECK(p.actions_from && strcmp(p.actions_from->name, "top") == 0);
    CHECK(profile_get(&p, "variant_query") == NULL);   /* settings are not inherited */
    CHECK(profile_query(&p, "detect") == NULL);        /* nor queries */
    CHECK(profile_query(&p, "counts") != NULL);
    profile_free(&p);
    CHECK(p.actions_from == NULL);
    CHECK(profile_load_near("era", era, &p, &d));      /* by name, next to a file */
    CHECK(profile_action(&p, "retry") != NULL);
    profile_free(&p);
    snprintf(era, sizeof era, "%s/bare.profile", dir);
    CHECK(profile_load(era, &b, &d));
    CHECK(!profile_has_actions(&b) && profile_action(&b, "retry") == NULL);
    profile_free(&b);
    CHECK(d.n == 0);
    snprintf(era, sizeof era, "%s/loop.profile", dir);
    CHECK(!profile_load(era, &p, &d));
    CHECK(d.n > 0 && strstr(d.msgs[0], "deeper than"));
    profile_free(&p);
    diags_free(&d);
    snprintf(era, sizeof era, "%s/orphan.profile", dir);
    CHECK(!profile_load(era, &p, &d));
    CHECK(d.n == 2 && strstr(d.msgs[0], "no-such-top") && strstr(d.msgs[0], "not found") &&
          strstr(d.msgs[1], "actions_from: cannot load profile 'no-such-top'"));
    profile_free(&p);
    diags_free(&d);
    const char *names[] = { "top.profile", "era.profile", "bare.profile", "loop.profile",
                            "orphan.profile" };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        remove_file(dir, names[i]);
    rmdir(dir);
}

enum { MAX_SHIPPED = 32 };

static bool same_route(const rd_profile_action *x, const rd_profile_action *y)
{
    return strcmp(x->method, y->method) == 0 && strcmp(x->path, y->path) == 0 &&
           ((!x->body && !y->body) || (x->body && y->body && strcmp(x->body, y->body) == 0));
}

/* Every route of a system (same semantics) is written in exactly one shipped file, and
 * every profile of that system reaches each of them. */
static void test_shipped_routes(void)
{
    char dir[1024];
    const char *src = getenv("REDRIVE_TEST_SRCDIR");
    snprintf(dir, sizeof dir, "%s/../../profiles", src ? src : "tests/unit");
    DIR *dp = opendir(dir);
    CHECK_MSG(dp != NULL, dir);
    if (!dp)
        return;
    static rd_profile profs[MAX_SHIPPED];
    size_t n = 0;
    rd_diags d = { 0 };
    for (struct dirent *e; (e = readdir(dp)) != NULL && n < MAX_SHIPPED;) {
        size_t l = strlen(e->d_name);
        if (l < 9 || strcmp(e->d_name + l - 8, ".profile") != 0)
            continue;
        char path[1400];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        CHECK_MSG(profile_load(path, &profs[n], &d), path);
        n++;
    }
    closedir(dp);
    CHECK(d.n == 0);
    CHECK(n >= 6);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < profs[i].n_actions; k++) {
            const rd_profile_action *a = &profs[i].actions[k];
            int defs = 0;
            for (size_t j = 0; j < n; j++)
                for (size_t m = 0; m < profs[j].n_actions; m++)
                    defs += strcmp(profs[j].semantics, profs[i].semantics) == 0 &&
                            strcmp(profs[j].actions[m].name, a->name) == 0;
            CHECK_MSG(defs == 1, profs[i].path);
            for (size_t j = 0; j < n; j++) {
                if (strcmp(profs[j].semantics, profs[i].semantics) != 0)
                    continue;
                const rd_profile_action *got = profile_action(&profs[j], a->name);
                CHECK_MSG(got && same_route(got, a), profs[j].path);
            }
        }
    /* the Attune eras write no route of their own */
    for (size_t i = 0; i < n; i++)
        if (strncmp(profs[i].name, "attune-era", 10) == 0)
            CHECK_MSG(profs[i].n_actions == 0 && profs[i].actions_from, profs[i].path);
    for (size_t i = 0; i < n; i++)
        profile_free(&profs[i]);
    diags_free(&d);
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

/* [query NAME optional|required]: one row per header form. */
static void test_query_flags(void)
{
    static const struct {
        const char *header;
        bool ok, optional;
        const char *err;      /* expected message (line 5) when !ok */
    } cases[] = {
        { "[query q]", true, false, NULL },
        { "[query q required]", true, false, NULL },
        { "[query q optional]", true, true, NULL },
        { "[query q   optional]", true, true, NULL },
        { "[query q\toptional]", true, true, NULL },
        { "[query q maybe]", false, false, "q.profile:5: [query q]: unknown flag 'maybe'" },
        { "[query q optional extra]", false, false,
          "q.profile:5: [query q]: unknown flag 'optional extra'" },
        { "[query optional]", true, false, NULL },          /* a query named "optional" */
        { "[query bad/name optional]", false, false, "q.profile:5: [query] needs a name" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *t = xasprintf("[profile]\nname = n\nstore = postgresql\nsemantics = attune\n"
                            "%s\nSELECT 1\n", cases[i].header);
        rd_profile p;
        rd_diags d = { 0 };
        bool ok = profile_parse("q.profile", t, &p, &d);
        CHECK_MSG(ok == cases[i].ok, cases[i].header);
        if (cases[i].ok) {
            const char *name = strstr(cases[i].header, "[query optional]") ? "optional" : "q";
            CHECK_MSG(profile_query(&p, name) != NULL, cases[i].header);
            CHECK_MSG(profile_query_optional(&p, name) == cases[i].optional, cases[i].header);
        } else {
            CHECK_MSG(d.n == 1 && strncmp(d.msgs[0], cases[i].err, strlen(cases[i].err)) == 0,
                      cases[i].header);
            CHECK(profile_query(&p, "q") == NULL);
        }
        CHECK(!profile_query_optional(&p, "absent"));
        profile_free(&p);
        diags_free(&d);
        free(t);
    }
}

int main(void)
{
    test_query_flags();
    test_good();
    test_bad();
    test_load();
    test_actions_from();
    test_shipped_routes();
    test_nul();
    return check_done("test_profile");
}
