/* The journal reader on arbitrary file contents (JSON lines written by any version, cut
 * by a crash, edited by hand). The file lives in memory (memfd). Byte 0 picks how many
 * entries to keep. At most that many come back; each is either malformed (with its raw
 * text, capped) or an action record; there are never more entries than lines and record
 * starts inside them (a line that does not parse is read in pieces, journal.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/actions/journal.h"
#include "fuzz.h"

enum { RAW_CAP = 4096 };   /* journal.c */

static int memfd = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536)
        return 0;
    /* a memfd is mode 0777: the reader refuses a journal others can write (issue 21) */
    if (memfd < 0 && ((memfd = memfd_create("journal", 0)) < 0 || fchmod(memfd, 0600) != 0))
        abort();
    const uint8_t *text = data + 1;
    size_t len = size - 1;
    if (ftruncate(memfd, 0) != 0 || (len && pwrite(memfd, text, len, 0) != (ssize_t)len))
        abort();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", memfd);
    size_t max = data[0] % 64, lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n' ||
                 (i > 0 && len - i >= 8 && memcmp(text + i, "{\"time\":", 8) == 0);
    lines++;

    rd_journal_entry *e = NULL;
    size_t n = 99;
    char why[128] = "";
    FUZZ_ASSERT(journal_read_tail(path, max, &e, &n, why, sizeof why));
    FUZZ_ASSERT(n <= max && n <= lines && (n == 0 || e));
    for (size_t i = 0; i < n; i++) {
        FUZZ_ASSERT(e[i].raw && strlen(e[i].raw) <= RAW_CAP);
        if (e[i].malformed)
            continue;
        FUZZ_ASSERT(e[i].action);
        FUZZ_ASSERT(e[i].http_status >= 0 && e[i].http_status < 1000);
        FUZZ_ASSERT(e[i].n_targets == 0 || e[i].targets);
        for (size_t k = 0; k < e[i].n_targets; k++)
            FUZZ_ASSERT(e[i].targets[k]);
    }
    journal_entries_free(e, n);
    return 0;
}
