/*
 * redrive config init [--profile NAME] [--system NAME] [PATH]: writes the commented
 * template of a profile (core/cfgtemplate.h) to PATH (default: --config, else the default
 * config path), mode 0600, creating missing directories 0700. Never overwrites: an
 * existing file (or a link) is left as it is and the command fails with exit 2.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/cfgtemplate.h"
#include "../core/config.h"
#include "../core/sanitize.h"
#include "../core/xalloc.h"
#include "cmdtable.h"

/* pre, the outside string s sanitized, post. */
static void say(FILE *f, const char *pre, const char *s, const char *post)
{
    char *clean = sanitize_str(s ? s : "", 0);
    fprintf(f, "%s%s%s", pre, clean, post);
    free(clean);
}

/* "redrive config init: cannot VERB PATH: strerror(errno)" */
static void say_errno(const char *verb, const char *path)
{
    int e = errno;
    fprintf(stderr, "redrive config init: cannot %s ", verb);
    say(stderr, "", path, ": ");
    fprintf(stderr, "%s\n", strerror(e));
}

/* mkdir -p of path's parent directories, 0700. */
static bool make_parents(const char *path)
{
    char *d = xstrdup(path);
    bool ok = true;
    for (char *p = d + 1; ok && (p = strchr(p, '/')); p++) {
        *p = '\0';
        ok = mkdir(d, 0700) == 0 || errno == EEXIST;
        *p = '/';
    }
    if (!ok)
        say_errno("create", d);
    free(d);
    return ok;
}

static int write_new(const char *path, const char *text)
{
    if (!make_parents(path))
        return RD_EXIT_USAGE;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        if (errno == EEXIST)
            say(stderr, "redrive config init: ", path, " exists: not overwritten (check it with `redrive check`)\n");
        else
            say_errno("create", path);
        return RD_EXIT_USAGE;
    }
    size_t n = strlen(text);
    bool ok = fchmod(fd, 0600) == 0 && write(fd, text, n) == (ssize_t)n;
    ok = (close(fd) == 0) && ok;
    if (!ok) {
        say_errno("write", path);
        unlink(path);
        return RD_EXIT_FAIL;
    }
    return RD_EXIT_OK;
}

static bool parse(int argc, char **argv, const char **profile, const char **system, const char **path)
{
    if (argc < 2 || strcmp(argv[1], "init") != 0) {
        fputs("usage: redrive config init [--profile NAME] [--system NAME] [PATH]\n", stderr);
        return false;
    }
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], **slot = NULL;
        if (cli_option_unknown(CMD_CONFIG, a, "redrive config init"))   /* the table decides */
            return false;
        if (strcmp(a, "--profile") == 0) slot = profile;
        else if (strcmp(a, "--system") == 0) slot = system;
        if (slot) {
            if (i + 1 >= argc) {
                say(stderr, "redrive config init: ", a, " needs a value\n");
                return false;
            }
            *slot = argv[++i];
        } else if (*path) {
            say(stderr, "redrive config init: one PATH only, not also '", a, "'\n");
            return false;
        } else {
            *path = a;
        }
    }
    return true;
}

int cli_config(const rd_opts *opts, int argc, char **argv)
{
    const char *profile = "attune", *system = NULL, *path = NULL;
    if (!parse(argc, argv, &profile, &system, &path))
        return RD_EXIT_USAGE;
    if (!system)
        system = profile;
    if (!*system || strpbrk(system, "\"\n\r[]")) {
        say(stderr, "redrive config init: bad system name '", system, "' (no quotes, brackets or newlines)\n");
        return RD_EXIT_USAGE;
    }
    rd_profile p = {0};
    rd_diags d = {0};
    if (!profile_load(profile, &p, &d)) {
        for (size_t i = 0; i < d.n; i++)
            say(stderr, "redrive config init: ", d.msgs[i], "\n");
        diags_free(&d);
        profile_free(&p);
        return RD_EXIT_USAGE;
    }
    diags_free(&d);
    char *def = path ? NULL : opts->config_path ? xstrdup(opts->config_path) : config_default_path();
    const char *where = path ? path : def;
    char *text = cfgtemplate_render(&p, profile, system);
    int rc = where ? write_new(where, text) : RD_EXIT_USAGE;
    if (!where)
        fputs("redrive config init: no config path (set HOME or give PATH)\n", stderr);
    if (rc == RD_EXIT_OK) {
        say(stdout, "wrote ", where, " (mode 0600)\n");
        say(stdout, "next: fill in its placeholders, then run: redrive --config ", where, " check\n");
    }
    free(text);
    free(def);
    profile_free(&p);
    return rc;
}
