/* The one data-file lookup (datafile.h): its order, and the source tree for a binary in
 * the build tree only. */
#include "datafile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "rd_build.h"

static void test_in_tree(void)
{
    static const struct {
        const char *exe, *tree;
        bool want;
    } cases[] = {
        {"/src/redrive/build/src/cli/redrive", "/src/redrive/build", true},
        {"/src/redrive/build/src/cli/redrive", "/src/redrive/build/", true},
        {"/src/redrive/build-clang/src/cli/redrive", "/src/redrive/build", false},
        {"/src/redrive/build", "/src/redrive/build", false},
        {"/usr/bin/redrive", "/src/redrive/build", false},
        {"/usr/local/bin/redrive", "/usr/local", true},
        {"/usr/bin/redrive", "", false},
        {NULL, "/src/redrive/build", false},
        {"/usr/bin/redrive", NULL, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        CHECK_MSG(datafile_in_tree(cases[i].exe, cases[i].tree) == cases[i].want,
                  cases[i].exe ? cases[i].exe : "(null)");
    CHECK(datafile_dev_build());   /* this test runs from the build tree */
}

static void put(const char *dir, const char *name)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    CHECK_MSG(f != NULL, p);
    if (f) {
        fputs("# probe\n", f);
        fclose(f);
    }
}

static void del(const char *dir, const char *name)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    CHECK_MSG(unlink(p) == 0, p);
}

static void test_order(void)
{
    char root[] = "/tmp/rd_data_XXXXXX";
    CHECK(mkdtemp(root) != NULL);
    char env[64], xdg[64], user[128], redrive[96], want[700], got[700];
    snprintf(env, sizeof env, "%s/env", root);
    snprintf(xdg, sizeof xdg, "%s/xdg", root);
    snprintf(redrive, sizeof redrive, "%s/redrive", xdg);
    snprintf(user, sizeof user, "%s/themes", redrive);
    CHECK(mkdir(env, 0700) == 0 && mkdir(xdg, 0700) == 0 && mkdir(redrive, 0700) == 0 &&
          mkdir(user, 0700) == 0);
    setenv("REDRIVE_THEMES", env, 1);
    setenv("XDG_CONFIG_HOME", xdg, 1);

    /* the directories, in order */
    char *dirs[DATAFILE_MAX_DIRS + 1];
    CHECK(datafile_dirs(DATA_THEMES, dirs) == 4);
    CHECK_STR(dirs[0], env);
    CHECK_STR(dirs[1], user);
    CHECK_STR(dirs[2], RD_SRCDIR "/themes");
    CHECK_STR(dirs[3], RD_DATADIR "/themes");
    CHECK(dirs[4] == NULL);
    datafile_dirs_free(dirs);

    /* 1. the override dir, 2. the user's dir, 3. the source tree */
    put(env, "default.theme");
    put(user, "default.theme");
    snprintf(want, sizeof want, "%s/default.theme", env);
    CHECK(datafile_find(DATA_THEMES, "default", got, sizeof got));
    CHECK_STR(got, want);
    del(env, "default.theme");
    snprintf(want, sizeof want, "%s/default.theme", user);
    CHECK(datafile_find(DATA_THEMES, "default", got, sizeof got));
    CHECK_STR(got, want);
    unsetenv("REDRIVE_THEMES");
    CHECK(datafile_find(DATA_THEMES, "default", got, sizeof got));
    CHECK_STR(got, want);
    del(user, "default.theme");
    CHECK(datafile_find(DATA_THEMES, "default", got, sizeof got));
    CHECK_STR(got, RD_SRCDIR "/themes/default.theme");

    /* kinds do not mix: a theme is no keymap */
    put(user, "only-theme.theme");
    CHECK(datafile_find(DATA_THEMES, "only-theme", got, sizeof got));
    CHECK(!datafile_find(DATA_KEYMAPS, "only-theme", got, sizeof got) && got[0] == '\0');
    del(user, "only-theme.theme");

    /* not found: a diagnostic that names every place */
    rd_diags d = {0};
    CHECK(datafile_locate(DATA_THEMES, "no-such-theme-xyz", &d) == NULL);
    CHECK(d.n == 1 && strstr(d.msgs[0], "no-such-theme-xyz: theme not found (looked in ") &&
          strstr(d.msgs[0], user) && strstr(d.msgs[0], RD_DATADIR "/themes"));
    diags_free(&d);

    /* paths are taken as is; a bad name is not looked up */
    CHECK(datafile_find(DATA_PROFILES, "/x/y.profile", got, sizeof got));
    CHECK_STR(got, "/x/y.profile");
    CHECK(datafile_find(DATA_PROFILES, "mine.profile", got, sizeof got));
    CHECK_STR(got, "mine.profile");
    CHECK(datafile_find(DATA_KEYMAPS, "../k", got, sizeof got));
    CHECK_STR(got, "../k");
    CHECK(!datafile_find(DATA_KEYMAPS, "", got, sizeof got));
    CHECK(!datafile_find(DATA_KEYMAPS, "..", got, sizeof got));
    CHECK(!datafile_find(DATA_KEYMAPS, "a b", got, sizeof got));
    CHECK(!datafile_find(DATA_KEYMAPS, NULL, got, sizeof got));
    CHECK(datafile_is_path(DATA_THEMES, "x.theme") && !datafile_is_path(DATA_THEMES, "x.keymap"));

    /* the user's dir: absolute XDG_CONFIG_HOME only, else HOME */
    char *p = datafile_user_path("keymaps");
    snprintf(want, sizeof want, "%s/redrive/keymaps", xdg);
    CHECK_STR(p, want);
    free(p);
    setenv("XDG_CONFIG_HOME", "relative", 1);
    setenv("HOME", "/home/op", 1);
    p = datafile_user_path("profiles");
    CHECK_STR(p, "/home/op/.config/redrive/profiles");
    free(p);
    unsetenv("XDG_CONFIG_HOME");

    rmdir(user);
    rmdir(redrive);
    rmdir(xdg);
    rmdir(env);
    rmdir(root);
}

int main(void)
{
    test_in_tree();
    test_order();
    return check_done("test_datafile");
}
