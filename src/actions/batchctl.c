/* A batch's runs (batchrec.h): the run and paused lines appended to its record, and the
 * running lock beside it. */
#include "batchrec_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "../core/fsperm.h"
#include "../core/sanitize.h"
#include "../core/xalloc.h"
#include "journal.h"
#include "lineappend.h"

bool batchctl_line(rd_batch_info *b, const cJSON *o)
{
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(o, "run");
    if (cJSON_IsString(run)) {
        const cJSON *rate = cJSON_GetObjectItemCaseSensitive(o, "rate");
        const cJSON *conc = cJSON_GetObjectItemCaseSensitive(o, "concurrency");
        if (!cJSON_IsNumber(rate) || !(rate->valuedouble >= 0 && rate->valuedouble <= 1e6) ||
            !cJSON_IsNumber(conc) || !(conc->valuedouble >= 0 && conc->valuedouble <= 1000))
            return false;
        b->rate = rate->valuedouble;
        b->concurrency = (int)conc->valuedouble;
        b->paused = false;
        free(b->pause_reason);
        b->pause_reason = NULL;
        return true;
    }
    const cJSON *paused = cJSON_GetObjectItemCaseSensitive(o, "paused");
    const cJSON *reason = cJSON_GetObjectItemCaseSensitive(o, "reason");
    if (!cJSON_IsString(paused) || !cJSON_IsString(reason) || strlen(reason->valuestring) > 1024)
        return false;
    b->paused = true;
    free(b->pause_reason);
    b->pause_reason = sanitize_str(reason->valuestring, 0);
    return true;
}

/* o as a line appended to b's record and synced; false with why. */
static bool append(const rd_batch_info *b, cJSON *o, char *why, size_t whycap)
{
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    int fd = fsperm_open(b->path, O_RDWR | O_APPEND | O_NOFOLLOW, 0, "batch record",
                         FSP_REGULAR, NULL, why, whycap);
    if (fd < 0) {
        free(s);
        return false;
    }
    char err[160];
    char *line = xasprintf("%s\n", s);
    bool ok = lineappend_write(fd, line, strlen(line), err, sizeof err);
    if (ok && !(ok = fsync(fd) == 0))
        snprintf(err, sizeof err, "%s", strerror(errno));
    if (!ok)
        snprintf(why, whycap, "cannot write the batch record %s: %s", b->path, err);
    close(fd);
    free(line);
    free(s);
    return ok;
}

static cJSON *line_new(const char *key, const char *operator_)
{
    char now[48];
    journal_time_now(now, sizeof now);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, key, now);
    cJSON_AddStringToObject(o, "operator", operator_ ? operator_ : "?");
    return o;
}

bool batchrec_note_run(const rd_batch_info *b, double rate, int concurrency,
                       const char *operator_, char *why, size_t whycap)
{
    cJSON *o = line_new("run", operator_);
    cJSON_AddNumberToObject(o, "rate", rate);
    cJSON_AddNumberToObject(o, "concurrency", concurrency);
    return append(b, o, why, whycap);
}

bool batchrec_pause(const rd_batch_info *b, const char *reason, const char *operator_,
                    char *why, size_t whycap)
{
    cJSON *o = line_new("paused", operator_);
    cJSON_AddStringToObject(o, "reason", reason);
    return append(b, o, why, whycap);
}

int batchrec_lock_run(const rd_batch_info *b, char *why, size_t whycap)
{
    char *path = xasprintf("%s.run", b->path);
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(why, whycap, "cannot open %s: %s", path, strerror(errno));
    } else if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        char pid[24] = "";
        ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
        pid[n > 0 ? n : 0] = 0;
        pid[strcspn(pid, "\n")] = 0;
        snprintf(why, whycap, "batch %s is running (pid %s): one run at a time", b->id,
                 pid[0] ? pid : "?");
        close(fd);
        fd = -1;
    } else {
        char pid[24];
        int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
        if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
            /* the lock holds without the pid: the file only names who holds it */
        }
    }
    free(path);
    return fd;
}

void batchrec_unlock_run(const rd_batch_info *b, int fd)
{
    if (fd < 0)
        return;
    char *path = xasprintf("%s.run", b->path);
    unlink(path);            /* under the lock: a new run makes its own */
    free(path);
    close(fd);
}

bool batchrec_running(const rd_batch_info *b)
{
    if (!b->path)
        return false;
    char *path = xasprintf("%s.run", b->path);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    free(path);
    if (fd < 0)
        return false;
    bool held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd);
    return held;
}
