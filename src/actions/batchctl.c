/* A batch's controls (batchrec.h): paused (with a reason, or none) or open, its rate and
 * window, appended to its record; and the lock a run holds on it. */
#include "batchrec.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/fsperm.h"
#include "../core/sanitize.h"
#include "../core/xalloc.h"
#include "batchrec_priv.h"
#include "batchrun.h"
#include "journal.h"
#include "lineappend.h"

/* The run's lock: an open-file-description write lock on one byte far past the record's
 * end (a lock, not data: lineappend's flock of the same file is another kind and never
 * meets it). Held by the process that runs the batch, dropped with its fd or its death. */
static const off_t LOCK_AT = (off_t)1 << 40;

static struct flock lock_of(short type)
{
    return (struct flock){.l_type = type, .l_whence = SEEK_SET, .l_start = LOCK_AT, .l_len = 1};
}

int batchrec_lock(const char *path, char *why, size_t whycap)
{
    int fd = fsperm_open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0, "batch record", FSP_REGULAR,
                         NULL, why, whycap);
    if (fd < 0)
        return -1;
    struct flock l = lock_of(F_WRLCK);
    if (fcntl(fd, F_OFD_SETLK, &l) != 0) {
        if (errno == EAGAIN || errno == EACCES)
            snprintf(why, whycap, "it is running (in this console or another redrive)");
        else
            snprintf(why, whycap, "cannot lock the batch record %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

bool batchrec_locked(const char *path)
{
    if (!path)
        return false;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct flock l = lock_of(F_WRLCK);
    bool held = fcntl(fd, F_OFD_GETLK, &l) == 0 && l.l_type != F_UNLCK;
    close(fd);
    return held;
}

/* ---- control lines ------------------------------------------------------------------ */

static bool rate_ok(double r) { return r > 0 && r <= 1000; }
static bool conc_ok(double c)
{
    return c >= 1 && c <= BATCHRUN_CONCURRENCY_MAX && c == (double)(int)c;
}

bool batchctl_line(rd_batch_info *b, const cJSON *o)
{
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "control");
    if (!cJSON_IsString(st))
        return false;
    const cJSON *reason = cJSON_GetObjectItemCaseSensitive(o, "reason");
    if (reason && (!cJSON_IsString(reason) || strlen(reason->valuestring) > 1024))
        return false;          /* a reason that cannot be shown: the line is not read */
    b->paused = strcmp(st->valuestring, "paused") == 0;
    free(b->pause_reason);
    b->pause_reason = b->paused && reason ? sanitize_str(reason->valuestring, 0) : NULL;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "rate");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "concurrency");
    /* a value out of range is not used: the system's own applies (nothing trusted) */
    b->rate = cJSON_IsNumber(r) && rate_ok(r->valuedouble) ? r->valuedouble : 0;
    b->concurrency = cJSON_IsNumber(c) && conc_ok(c->valuedouble) ? (int)c->valuedouble : 0;
    return true;
}

bool batchrec_append(const rd_batch_info *b, cJSON *o, char *why, size_t whycap)
{
    int fd = fsperm_open(b->path, O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0, "batch record",
                         FSP_REGULAR, NULL, why, whycap);
    if (fd < 0) {
        cJSON_Delete(o);
        return false;
    }
    char err[160];
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    char *line = xasprintf("%s\n", s);
    bool ok = lineappend_write(fd, line, strlen(line), err, sizeof err);
    if (ok && !(ok = fsync(fd) == 0))
        snprintf(err, sizeof err, "%s", strerror(errno));
    if (!ok)
        snprintf(why, whycap, "cannot write the batch record %s: %s", b->path, err);
    close(fd);
    free(s);
    free(line);
    return ok;
}

bool batchrec_control(const rd_batch_info *b, const rd_batch_ctl *c, const char *operator_,
                      char *why, size_t whycap)
{
    char now[48];
    journal_time_now(now, sizeof now);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "control", c->paused ? "paused" : "open");
    cJSON_AddStringToObject(o, "at", now);
    cJSON_AddStringToObject(o, "operator", operator_ ? operator_ : "?");
    if (rate_ok(c->rate))
        cJSON_AddNumberToObject(o, "rate", c->rate);
    if (conc_ok(c->concurrency))
        cJSON_AddNumberToObject(o, "concurrency", c->concurrency);
    if (c->paused && c->reason) {   /* at most 1024 bytes: a longer one is cut */
        char r[1025];
        snprintf(r, sizeof r, "%s", c->reason);
        cJSON_AddStringToObject(o, "reason", r);
    }
    return batchrec_append(b, o, why, whycap);
}

/* The record's last line, read from its tail (a control line is short): a run reads it
 * between parts, so a pause written by another process stops it there. */
bool batchrec_control_now(const char *path, rd_batch_ctl *out, bool *abandoned)
{
    *out = (rd_batch_ctl){0};
    *abandoned = false;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return false;
    char buf[4096];
    struct stat st;
    off_t at = fstat(fd, &st) == 0 && st.st_size > (off_t)sizeof buf - 1
                   ? st.st_size - (off_t)sizeof buf + 1 : 0;
    ssize_t n = pread(fd, buf, sizeof buf - 1, at);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = 0;
    while (n > 0 && buf[n - 1] == '\n')
        buf[--n] = 0;
    char *last = strrchr(buf, '\n');
    last = last ? last + 1 : buf;
    cJSON *o = cJSON_Parse(last);
    rd_batch_info b = {0};
    bool found = cJSON_IsObject(o) && batchctl_line(&b, o);
    *abandoned = cJSON_IsObject(o) && cJSON_GetObjectItemCaseSensitive(o, "abandoned");
    cJSON_Delete(o);
    free(b.pause_reason);      /* the reason is not carried: the run only stops */
    if (found)
        *out = (rd_batch_ctl){.paused = b.paused, .rate = b.rate, .concurrency = b.concurrency};
    return found;
}
