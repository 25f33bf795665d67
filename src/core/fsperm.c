/* Owner and mode checks of trusted files and directories (fsperm.h). */
#include "fsperm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xalloc.h"

const char *fsperm_kind(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a device"
         : S_ISBLK(m) ? "a device" : S_ISSOCK(m) ? "a socket" : S_ISLNK(m) ? "a symbolic link"
         : S_ISREG(m) ? "a regular file" : "not a plain file";
}

bool fsperm_refused(const struct stat *st, const char *what, const char *path, unsigned rules,
                    char *why, size_t whycap)
{
    uid_t me = geteuid();
    mode_t bad = rules & FSP_ANYMODE ? 0 : rules & FSP_PRIVATE ? 077 : 022;
    bool root_ok = (rules & FSP_ROOT_OK) && me != 0;
    if ((rules & FSP_REGULAR) && !S_ISREG(st->st_mode))
        snprintf(why, whycap, "%s %s is not a regular file (%s)", what, path,
                 fsperm_kind(st->st_mode));
    else if ((rules & FSP_SOCKET) && !S_ISSOCK(st->st_mode))
        snprintf(why, whycap, "%s %s is not a socket (%s)", what, path, fsperm_kind(st->st_mode));
    else if ((rules & FSP_DIR) && !S_ISDIR(st->st_mode))
        snprintf(why, whycap, "%s %s is not a directory (%s)", what, path,
                 fsperm_kind(st->st_mode));
    else if (st->st_uid != me && !(root_ok && st->st_uid == 0))
        snprintf(why, whycap, "%s %s is owned by uid %u, not by you (uid %u)%s", what, path,
                 (unsigned)st->st_uid, (unsigned)me, root_ok ? " or root" : "");
    else if (st->st_mode & bad)
        snprintf(why, whycap, "%s %s is group/world %s (mode %03o): chmod %s it", what, path,
                 bad == 077 ? "readable or writable" : "writable",
                 (unsigned)(st->st_mode & 0777),
                 bad == 077 ? (S_ISDIR(st->st_mode) ? "700" : "600") : "go-w");
    else
        return false;
    return true;
}

int fsperm_open(const char *path, int flags, unsigned mode, const char *what, unsigned rules,
                struct stat *st_out, char *why, size_t whycap)
{
    struct stat st;
    int fd = open(path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, (mode_t)mode);
    if (fd < 0) {
        int e = errno;
        snprintf(why, whycap, "cannot open %s %s: %s", what, path, strerror(e));
        errno = e;
        return -1;
    }
    if (fstat(fd, &st) != 0) {
        snprintf(why, whycap, "cannot stat %s %s: %s", what, path, strerror(errno));
        close(fd);
        errno = EIO;
        return -1;
    }
    if (fsperm_refused(&st, what, path, rules, why, whycap)) {
        close(fd);
        errno = EPERM;
        return -1;
    }
    if (st_out)
        *st_out = st;
    return fd;
}

bool fsperm_check_file(const char *path, const char *what, unsigned rules, char *why,
                       size_t whycap)
{
    int fd = fsperm_open(path, O_RDONLY, 0, what, rules, NULL, why, whycap);
    if (fd < 0)
        return false;
    close(fd);
    return true;
}

bool fsperm_mkdirs(const char *dir, char *why, size_t whycap)
{
    char *d = xstrdup(dir);
    bool ok = true;
    for (char *p = d + (*d != '\0'); ok && *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        ok = mkdir(d, 0700) == 0 || errno == EEXIST;
        if (ok)
            *p = '/';
    }
    if (ok && *d)
        ok = mkdir(d, 0700) == 0 || errno == EEXIST;
    if (!ok)
        snprintf(why, whycap, "cannot create %s: %s", d, strerror(errno));
    free(d);
    return ok;
}

bool fsperm_dir_ok(const char *dir, const char *what, unsigned rules, char *why, size_t whycap)
{
    struct stat st;
    if (lstat(dir, &st) != 0) {
        snprintf(why, whycap, "cannot stat %s %s: %s", what, dir, strerror(errno));
        return false;
    }
    return !fsperm_refused(&st, what, dir, rules | FSP_DIR, why, whycap);
}

/* ---- every directory on the way (OpenSSH's safe_path) ---- */

/* A directory above a trusted file or directory: ours or root's, and nobody else can
 * write it, except a sticky directory of root's (/tmp, 1777), where nobody else can
 * rename or remove what is ours; what comes next is checked in its turn. */
static bool parent_refused(const struct stat *st, const char *what, const char *path,
                           const char *dir, char *why, size_t whycap)
{
    uid_t me = geteuid();
    bool sticky_root = (st->st_mode & S_ISVTX) && st->st_uid == 0;
    if (!S_ISDIR(st->st_mode))
        snprintf(why, whycap, "%s %s: %s is not a directory (%s)", what, path, dir,
                 fsperm_kind(st->st_mode));
    else if (st->st_uid != me && st->st_uid != 0)
        snprintf(why, whycap, "%s %s: the directory %s is owned by uid %u, not by you (uid %u) "
                 "or root", what, path, dir, (unsigned)st->st_uid, (unsigned)me);
    else if ((st->st_mode & 022) && !sticky_root)
        snprintf(why, whycap, "%s %s: the directory %s is group/world writable (mode %04o): "
                 "chmod go-w it", what, path, dir, (unsigned)(st->st_mode & 07777));
    else
        return false;
    return true;
}

/* Each directory above abs (an absolute path), from / down; a symlinked one is checked
 * where it leads (its real path's directories and itself). A missing one ends the walk:
 * *missing set, true. */
static bool walk_parents(const char *abs, const char *what, const char *path, int depth,
                         bool *missing, char *why, size_t whycap)
{
    char *d = xstrdup(abs);
    size_t n = strlen(d);
    while (n > 1 && d[n - 1] == '/')
        d[--n] = '\0';
    bool ok = true;
    for (size_t i = 0; ok && !*missing && i < n; i++) {
        if (d[i] != '/' || (i > 0 && d[i - 1] == '/'))
            continue;
        char keep = d[i + (i == 0)];
        d[i + (i == 0)] = '\0';                  /* "/" itself, then "/a", "/a/b", ... */
        struct stat st;
        if (lstat(d, &st) != 0) {
            *missing = errno == ENOENT;
            if (!*missing) {
                snprintf(why, whycap, "%s %s: cannot stat %s: %s", what, path, d, strerror(errno));
                ok = false;
            }
        } else if (S_ISLNK(st.st_mode) && depth < 2) {
            char *real = realpath(d, NULL);
            if (!real) {
                *missing = errno == ENOENT;
                if (!*missing)
                    snprintf(why, whycap, "%s %s: cannot resolve %s: %s", what, path, d,
                             strerror(errno));
                ok = *missing;
            } else {
                ok = walk_parents(real, what, path, depth + 1, missing, why, whycap) &&
                     (*missing || stat(real, &st) != 0 ||
                      !parent_refused(&st, what, path, real, why, whycap));
                free(real);
            }
        } else {
            ok = !parent_refused(&st, what, path, d, why, whycap);
        }
        d[i + (i == 0)] = keep;
    }
    free(d);
    return ok;
}

bool fsperm_parents_ok(const char *path, const char *what, char *why, size_t whycap)
{
    char *abs = NULL;
    if (path[0] != '/') {
        char *cwd = getcwd(NULL, 0);
        if (!cwd) {
            snprintf(why, whycap, "%s %s: cannot read the current directory: %s", what, path,
                     strerror(errno));
            return false;
        }
        abs = xasprintf("%s/%s", cwd, path);
        free(cwd);
    }
    bool missing = false;
    bool ok = walk_parents(abs ? abs : path, what, path, 0, &missing, why, whycap);
    free(abs);
    if (!ok)
        errno = EPERM;          /* never a stale ENOENT: a refusal is not "no such file" */
    return ok;
}

bool fsperm_path_ok(const char *path, const char *what, unsigned rules, char *why,
                    size_t whycap)
{
    struct stat st;
    if (!fsperm_parents_ok(path, what, why, whycap))
        return false;
    if (lstat(path, &st) != 0) {
        int e = errno;
        snprintf(why, whycap, "cannot stat %s %s: %s", what, path, strerror(e));
        errno = e;
        return false;
    }
    if (S_ISLNK(st.st_mode)) {               /* /dev/log -> /run/systemd/journal/dev-log */
        char *real = realpath(path, NULL);
        bool ok = real && fsperm_parents_ok(real, what, why, whycap) && stat(real, &st) == 0;
        if (!ok && !real)
            snprintf(why, whycap, "cannot resolve %s %s: %s", what, path, strerror(errno));
        free(real);
        if (!ok)
            return false;
    }
    if (fsperm_refused(&st, what, path, rules, why, whycap)) {
        errno = EPERM;
        return false;
    }
    return true;
}

bool fsperm_socket_ok(const char *path, char *why, size_t whycap)
{
    return fsperm_path_ok(path, "syslog socket", FSP_SOCKET | FSP_ROOT_OK | FSP_ANYMODE, why,
                          whycap);
}

bool fsperm_dir_ready(const char *dir, const char *what, char *why, size_t whycap)
{
    return fsperm_parents_ok(dir, what, why, whycap) && fsperm_mkdirs(dir, why, whycap) &&
           fsperm_parents_ok(dir, what, why, whycap) &&
           fsperm_dir_ok(dir, what, 0, why, whycap);
}

bool fsperm_dir_trusted(const char *dir, const char *what, char *why, size_t whycap)
{
    struct stat st;
    if (lstat(dir, &st) != 0 && errno == ENOENT)
        return fsperm_parents_ok(dir, what, why, whycap);
    return fsperm_parents_ok(dir, what, why, whycap) &&
           fsperm_dir_ok(dir, what, 0, why, whycap);
}
