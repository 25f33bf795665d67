#include "datafile.h"

#include <dirent.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rd_build.h"
#include "suggest.h"
#include "xalloc.h"

#ifndef RD_BUILDDIR
#define RD_BUILDDIR ""   /* built outside meson (fuzz harnesses): never a developer build */
#endif


static const struct {
    const char *env, *sub, *ext, *what;
} kinds[DATA__COUNT] = {
    [DATA_PROFILES] = {"REDRIVE_PROFILES", "profiles", ".profile", "profile"},
    [DATA_THEMES] = {"REDRIVE_THEMES", "themes", ".theme", "theme"},
    [DATA_KEYMAPS] = {"REDRIVE_KEYMAPS", "keymaps", ".keymap", "keymap"},
};

bool datafile_is_path(rd_datakind kind, const char *name)
{
    size_t n = strlen(name), el = strlen(kinds[kind].ext);
    return strchr(name, '/') || (n > el && strcmp(name + n - el, kinds[kind].ext) == 0);
}

bool datafile_plain_name(const char *s)
{
    if (!*s || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '-' || *s == '_' || *s == '.'))
            return false;
    return true;
}

char *datafile_user_path(const char *sub)
{
    const char *x = getenv("XDG_CONFIG_HOME");
    if (x && x[0] == '/')
        return xasprintf("%s/redrive/%s", x, sub);
    const char *h = getenv("HOME");
    if (!h || !*h) {
        struct passwd *pw = getpwuid(getuid());
        h = pw && pw->pw_dir ? pw->pw_dir : ".";
    }
    return xasprintf("%s/.config/redrive/%s", h, sub);
}

bool datafile_in_tree(const char *exe, const char *builddir)
{
    size_t n = builddir ? strlen(builddir) : 0;
    while (n > 1 && builddir[n - 1] == '/')
        n--;
    return exe && n > 0 && strncmp(exe, builddir, n) == 0 && exe[n] == '/';
}

bool datafile_dev_build(void)
{
    char exe[PATH_MAX], tree[PATH_MAX];
    if (!RD_BUILDDIR[0] || !realpath("/proc/self/exe", exe))
        return false;
    const char *dir = realpath(RD_BUILDDIR, tree) ? tree : RD_BUILDDIR;
    return datafile_in_tree(exe, dir);
}

size_t datafile_dirs(rd_datakind kind, char *dirs[DATAFILE_MAX_DIRS + 1])
{
    size_t n = 0;
    const char *env = getenv(kinds[kind].env);
    if (env && *env)
        dirs[n++] = xstrdup(env);
    dirs[n++] = datafile_user_path(kinds[kind].sub);
    if (datafile_dev_build())
        dirs[n++] = xasprintf("%s/%s", RD_SRCDIR, kinds[kind].sub);
    dirs[n++] = xasprintf("%s/%s", RD_DATADIR, kinds[kind].sub);
    dirs[n] = NULL;
    return n;
}

void datafile_dirs_free(char *dirs[DATAFILE_MAX_DIRS + 1])
{
    for (size_t i = 0; dirs[i]; i++)
        free(dirs[i]);
    dirs[0] = NULL;
}

void datafile_places(rd_datakind kind, char *out, size_t cap)
{
    char *dirs[DATAFILE_MAX_DIRS + 1];
    datafile_dirs(kind, dirs);
    out[0] = '\0';
    for (size_t i = 0, len = 0; dirs[i] && len < cap; i++, len = strlen(out))
        snprintf(out + len, cap - len, "%s%s", i ? ", " : "", dirs[i]);
    datafile_dirs_free(dirs);
}

static bool is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

bool datafile_find(rd_datakind kind, const char *name, char *out, size_t cap)
{
    if (cap)
        out[0] = '\0';
    if (!name || (unsigned)kind >= DATA__COUNT)
        return false;
    if (datafile_is_path(kind, name))
        return (size_t)snprintf(out, cap, "%s", name) < cap;
    if (!datafile_plain_name(name))
        return false;
    char *dirs[DATAFILE_MAX_DIRS + 1];
    datafile_dirs(kind, dirs);
    bool found = false;
    for (size_t i = 0; dirs[i] && !found; i++) {
        char *p = xasprintf("%s/%s%s", dirs[i], name, kinds[kind].ext);
        found = is_file(p) && (size_t)snprintf(out, cap, "%s", p) < cap;
        free(p);
    }
    datafile_dirs_free(dirs);
    if (!found && cap)
        out[0] = '\0';
    return found;
}

/* " (did you mean attune?)": the names of kind's files in its directories closest to name. */
static const char *near_names(rd_datakind kind, const char *name, char *buf, size_t cap)
{
    suggest sg;
    suggest_init(&sg, name);
    char *dirs[DATAFILE_MAX_DIRS + 1];
    datafile_dirs(kind, dirs);
    size_t el = strlen(kinds[kind].ext);
    for (size_t i = 0; dirs[i]; i++) {
        DIR *dir = opendir(dirs[i]);
        for (struct dirent *e; dir && (e = readdir(dir));) {
            size_t n = strlen(e->d_name);
            char stem[SUGGEST_NAME];
            if (n > el && n - el < sizeof stem && strcmp(e->d_name + n - el, kinds[kind].ext) == 0) {
                snprintf(stem, sizeof stem, "%.*s", (int)(n - el), e->d_name);
                suggest_add(&sg, stem);
            }
        }
        if (dir)
            closedir(dir);
    }
    datafile_dirs_free(dirs);
    return suggest_text(&sg, buf, cap);
}

char *datafile_locate(rd_datakind kind, const char *name, rd_diags *d)
{
    char path[4096], places[1024], hint[200] = "";
    if (datafile_find(kind, name, path, sizeof path))
        return xstrdup(path);
    datafile_places(kind, places, sizeof places);
    if (name && datafile_plain_name(name))
        near_names(kind, name, hint, sizeof hint);
    diags_add(d, name && *name ? name : kinds[kind].what, 0, "%s not found (looked in %s)%s",
              kinds[kind].what, places, hint);
    return NULL;
}
