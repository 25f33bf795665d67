/* The history file reader (core/history.c `history_load`) on arbitrary file contents
 * (a file cut by a crash, edited by hand, tampered with): whatever it keeps is in range
 * (steps of a time below HIST_TIME_MAX, values finite and ≥ 0 or gaps, names not empty),
 * and saving what it kept and loading that again gives the same history. */
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "history.h"
#include "fuzz.h"

static char path[64], saved[64];

static void put_file(const uint8_t *data, size_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) || close(fd) != 0)
        abort();
}

static void check_range(const rd_history *h)
{
    for (int i = 0; i < HIST_N; i++) {
        FUZZ_ASSERT(h->step[i] >= 0 && h->step[i] < (long)(HIST_TIME_MAX / HIST_STEP_S));
        FUZZ_ASSERT(h->step[i] == 0 || h->step[i] % HIST_N == i);
        for (int s = 0; s < HIST_SERIES; s++) {
            FUZZ_ASSERT(isnan(h->v[s][i]) || (isfinite(h->v[s][i]) && h->v[s][i] >= 0));
            FUZZ_ASSERT(h->mark[s][i] <= HIST_UPPER && (!isnan(h->v[s][i]) || h->mark[s][i] == HIST_EXACT));
        }
    }
    for (int q = 0; q < HIST_QUEUES; q++)
        FUZZ_ASSERT(memchr(h->qname[q], '\0', HIST_QNAME) != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    if (!path[0]) {
        /* in memory where there is /dev/shm: history_save syncs the file it writes */
        static char shm[] = "/dev/shm/rd-fuzz-history-XXXXXX", tmp[] = "/tmp/rd-fuzz-history-XXXXXX";
        const char *dir = mkdtemp(shm) ? shm : mkdtemp(tmp);
        if (!dir)
            abort();
        snprintf(path, sizeof path, "%s/h", dir);
        snprintf(saved, sizeof saved, "%s/s", dir);
    }
    put_file(data, size);
    static rd_history h, back;
    bool damaged = false;
    char why[256];
    FUZZ_ASSERT(history_load(&h, path, &damaged, why, sizeof why));
    check_range(&h);
    FUZZ_ASSERT(history_save(&h, saved, why, sizeof why));
    FUZZ_ASSERT(history_load(&back, saved, &damaged, why, sizeof why) && !damaged);
    FUZZ_ASSERT(memcmp(h.step, back.step, sizeof h.step) == 0);
    for (int q = 0; q < HIST_QUEUES; q++)
        FUZZ_ASSERT(strcmp(h.qname[q], back.qname[q]) == 0);
    FUZZ_ASSERT(memcmp(h.mark, back.mark, sizeof h.mark) == 0);   /* a bound stays one */
    for (int i = 0; i < HIST_N; i++)
        for (int s = 0; s < HIST_SERIES; s++)
            FUZZ_ASSERT(h.step[i] == 0 || (isnan(h.v[s][i]) && isnan(back.v[s][i])) ||
                        fabsf(h.v[s][i] - back.v[s][i]) <= 1e-6f * h.v[s][i]);   /* %.7g */
    return 0;
}
