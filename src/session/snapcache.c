/* The last-known snapshot file (snapcache.h). */
#include "snapcache.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/fsperm.h"
#include "../core/model_json.h"
#include "../io/clock.h"
#include "../core/xalloc.h"

enum { CACHE_MAX = 8u << 20, NAME_MAX_KEEP = 40 };

static const char magic[] = "redrive-cache 1 ";

static uint64_t fnv1a(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

static char *cache_dir(void)
{
    const char *x = getenv("XDG_CACHE_HOME");
    if (x && x[0] == '/')
        return xasprintf("%s/redrive", x);
    const char *home = getenv("HOME");
    if (home && *home)
        return xasprintf("%s/.cache/redrive", home);
    return NULL;
}

char *snapcache_path(const char *config_path, const char *system)
{
    char *dir = cache_dir();
    if (!dir || !system)
        return dir ? (free(dir), NULL) : NULL;
    /* the same file however the config was named on the command line */
    char *real = config_path ? realpath(config_path, NULL) : NULL;
    const char *cp = real ? real : config_path ? config_path : "";
    uint64_t h = fnv1a(0xcbf29ce484222325ULL, cp, strlen(cp) + 1);
    h = fnv1a(h, system, strlen(system));
    free(real);
    char name[NAME_MAX_KEEP + 1];
    size_t n = 0;
    for (const char *p = system; *p && n < NAME_MAX_KEEP; p++) {
        unsigned char c = (unsigned char)*p;
        bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
        name[n] = keep && !(n == 0 && c == '.') ? (char)c : '_';
        n++;
    }
    name[n] = 0;
    char *path = xasprintf("%s/%s-%016llx.json", dir, name, (unsigned long long)h);
    free(dir);
    return path;
}

/* The directory of path, created 0700 (and its parents 0700 when missing); every
 * directory above it ours or root's and nobody else's to write (fsperm_parents_ok). */
static bool make_dir(const char *path, char *why, size_t whycap)
{
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    bool ok = false;
    if (!slash || slash == dir)
        goto done;
    *slash = 0;
    if (!fsperm_parents_ok(dir, "cache directory", why, whycap) ||
        !fsperm_mkdirs(dir, why, whycap) || !fsperm_parents_ok(dir, "cache directory", why, whycap))
        goto done;
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid()) {
        snprintf(why, whycap, "%s: not a directory of ours", dir);
        goto done;
    }
    if ((st.st_mode & 077) && chmod(dir, 0700) != 0)
        goto fail;
    ok = true;
    goto done;
fail:
    snprintf(why, whycap, "%s: %s", dir, strerror(errno));
done:
    free(dir);
    return ok;
}

static bool write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

bool snapcache_save(const char *path, const char *system, const rd_model *m, double saved_at,
                    char *why, size_t whycap)
{
    why[0] = 0;
    if (strpbrk(system, "\r\n")) {
        snprintf(why, whycap, "system name with a line break");
        return false;
    }
    if (!make_dir(path, why, whycap))
        return false;
    char *json = model_to_json_at(m, "cache", saved_at);
    char *head = xasprintf("%s%.3f %s\n", magic, saved_at, system);
    char *tmp = xasprintf("%s.%ld.tmp", path, (long)getpid());
    bool ok = false;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(why, whycap, "%s: %s", tmp, strerror(errno));
        goto done;
    }
    ok = fchmod(fd, 0600) == 0 && write_all(fd, head, strlen(head)) && write_all(fd, json, strlen(json)) &&
         fdatasync(fd) == 0;   /* on disk before the rename: never an empty file after a crash */
    if (!ok)
        snprintf(why, whycap, "%s: %s", tmp, strerror(errno));
    if (close(fd) != 0 && ok) {
        snprintf(why, whycap, "%s: %s", tmp, strerror(errno));
        ok = false;
    }
    if (ok && rename(tmp, path) != 0) {
        snprintf(why, whycap, "%s: %s", path, strerror(errno));
        ok = false;
    }
    if (!ok)
        unlink(tmp);
done:
    free(tmp);
    free(head);
    free(json);
    return ok;
}

typedef struct snap_job {
    char *path, *system;
    rd_model *m;   /* the copy (model_copy_cache) */
    double saved_at;
} snap_job;

static bool snap_job_run(void *arg, char *why, size_t whycap)
{
    snap_job *j = arg;
    return snapcache_save(j->path, j->system, j->m, j->saved_at, why, whycap);
}

static void snap_job_free(void *arg)
{
    snap_job *j = arg;
    model_free(j->m);
    free(j->path);
    free(j->system);
    free(j);
}

bool snapcache_save_bg(rd_bgwrite *w, const char *path, const char *system, const rd_model *m,
                       double saved_at, char *why, size_t whycap)
{
    snap_job *j = xcalloc(1, sizeof *j);
    *j = (snap_job){.path = xstrdup(path), .system = xstrdup(system), .m = model_copy_cache(m),
                    .saved_at = saved_at};
    return bgwrite_queue(w, snap_job_run, snap_job_free, j, why, whycap);
}

/* The whole file, if it is a regular file of ours that nobody else can write. */
static char *read_ours(const char *path, size_t *len, snapcache_status *st, char *why, size_t whycap)
{
    if (!fsperm_parents_ok(path, "cache file", why, whycap))
        return NULL;
    /* O_NONBLOCK: a FIFO put in its place must not hang the start */
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            *st = SNAPCACHE_NONE;
        else
            snprintf(why, whycap, "%s", strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        snprintf(why, whycap, "not a regular file");
        goto done;
    }
    if (sb.st_uid != getuid() || (sb.st_mode & 022)) {
        snprintf(why, whycap, "not ours or writable by others (mode %03o)", (unsigned)(sb.st_mode & 0777));
        goto done;
    }
    if (sb.st_size > (off_t)CACHE_MAX) {
        snprintf(why, whycap, "larger than %u MiB", CACHE_MAX >> 20);
        goto done;
    }
    size_t cap = (size_t)sb.st_size, n = 0;
    buf = xmalloc(cap + 1);
    while (n < cap) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    buf[n] = 0;
    *len = n;
done:
    close(fd);
    return buf;
}

snapcache_status snapcache_load(const char *path, const char *system, rd_model *m,
                                double *saved_at, char *why, size_t whycap)
{
    why[0] = 0;
    *saved_at = 0;
    snapcache_status st = SNAPCACHE_IGNORED;
    size_t len = 0;
    char *buf = read_ours(path, &len, &st, why, whycap);
    if (!buf)
        return why[0] ? SNAPCACHE_IGNORED : SNAPCACHE_NONE;
    char *eol = memchr(buf, '\n', len);
    size_t ml = sizeof magic - 1;
    if (!eol || strlen(buf) != len || (size_t)(eol - buf) < ml || memcmp(buf, magic, ml) != 0) {
        snprintf(why, whycap, "not a redrive cache file");
        goto done;
    }
    *eol = 0;
    char *end = NULL;
    errno = 0;
    double t = strtod(buf + ml, &end);
    if (errno || end == buf + ml || *end != ' ' || !isfinite(t) || t <= 0 || t > 1e11) {
        snprintf(why, whycap, "no valid time in its header");
        goto done;
    }
    if (strcmp(end + 1, system) != 0) {
        snprintf(why, whycap, "written for another system");
        goto done;
    }
    char err[160];
    if (!model_from_json(m, eol + 1, clock_wall(), err, sizeof err)) {   /* m untouched unless it parses */
        snprintf(why, whycap, "%s", err);
        goto done;
    }
    model_dlq_mark_cached(m, t);   /* replaced by each source's live total, never added to */
    *saved_at = t;
    st = SNAPCACHE_LOADED;
done:
    free(buf);
    return st;
}
