/* The config file itself: who may have written it, who may read it (config.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fsperm.h"
#include "ini.h"
#include "textutil.h"
#include "xalloc.h"

#define CONFIG_MAX_BYTES (4u << 20)

/* "scheme://user:password@host": a password in a URL's authority. */
static bool url_has_password(const char *v)
{
    const char *a = strstr(v, "://");
    if (!a)
        return false;
    a += 3;
    const char *end = a + strcspn(a, "/?#");
    const char *at = NULL;
    for (const char *q = a; q < end; q++)
        if (*q == '@')
            at = q;
    return at && memchr(a, ':', (size_t)(at - a)) != NULL;
}

/* A secret key (token, password, *_password) given as a literal, not a reference. */
static bool literal_secret(const char *key, const char *v)
{
    size_t n = strlen(key);
    bool secret = strcmp(key, "token") == 0 ||
                  (n >= 8 && strcmp(key + n - 8, "password") == 0);
    return secret && *v && !secret_is_ref(v);
}

/* The line of the first value that is a credential written in the file, 0 when none. */
static int inline_credentials(const char *path, const char *text, size_t len)
{
    static const ini_format fmt = {INI_SECTIONS | INI_COMMENTS, NULL};
    rd_diags quiet = {0};            /* the parse proper reports the file's errors */
    ini_reader r;
    ini_open(&r, path, text, len, &fmt, &quiet);
    ini_line l;
    int found = 0;
    while (!found && ini_next(&r, &l))
        if (l.kind == INI_PAIR && l.value && !secret_is_ref(l.value) &&
            (url_has_password(l.value) || conninfo_has_password(l.value) ||
             literal_secret(l.name, l.value)))
            found = l.line;
    ini_close(&r);
    diags_free(&quiet);
    return found;
}

bool config_load(const char *path, rd_config *out, rd_diags *d)
{
    char why[400];
    size_t len = 0;
    struct stat st;
    /* refused before a byte is parsed: a cmd: in a file someone else wrote would run */
    int fd = fsperm_open(path, O_RDONLY, 0, "config file", FSP_REGULAR | FSP_ROOT_OK, &st,
                         why, sizeof why);
    bool refused = fd < 0 && errno == EPERM;
    if (fd < 0 && !refused)
        snprintf(why, sizeof why, "cannot read: %s", strerror(errno));
    char *buf = fd >= 0 ? text_read_fd_len(fd, CONFIG_MAX_BYTES, &len, why, sizeof why) : NULL;
    if (!buf) {
        memset(out, 0, sizeof *out);
        out->path = xstrdup(path);
        diags_add(d, path, 0, "%s%s", why, refused ? "; nothing in it is used" : "");
        return false;
    }
    int line = (st.st_mode & 044) ? inline_credentials(path, buf, len) : 0;
    if (line)
        diags_add(d, path, line, "warning: this file holds a credential and is readable by "
                  "group/world (mode %03o): chmod 600 it, or reference the secret "
                  "(env:NAME, file:PATH, cmd:COMMAND)", (unsigned)(st.st_mode & 0777));
    bool ok = config_parse_len(path, buf, len, out, d);
    free(buf);
    return ok;
}
