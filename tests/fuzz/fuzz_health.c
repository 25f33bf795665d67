/* Worker /health answers (tasker), decoded loosely. Figures stay in their ranges, the
 * status is lower-case, and a body that is not a JSON object leaves the metrics as
 * they were. The body is exact-size (not NUL-terminated) and may hold NUL bytes. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/sources/probe_health.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    pr_metrics m, before;
    memset(&m, 0x5A, sizeof m);
    memcpy(&before, &m, sizeof m);
    if (!probe_health_decode((const char *)data, size, &m)) {
        FUZZ_ASSERT(memcmp(&m, &before, sizeof m) == 0);
        return 0;
    }
    FUZZ_ASSERT(memchr(m.status, '\0', sizeof m.status));
    for (const char *c = m.status; *c; c++)
        FUZZ_ASSERT(!(*c >= 'A' && *c <= 'Z'));
    FUZZ_ASSERT(m.depth >= -1 && m.depth <= 1000000000000L);
    FUZZ_ASSERT(m.in_flight >= -1 && m.in_flight <= 1000000);
    FUZZ_ASSERT(m.capacity >= -1 && m.capacity <= 1000000);
    FUZZ_ASSERT(m.failures >= -1 && m.failures <= 1000000);
    FUZZ_ASSERT(m.rate == -1 || (isfinite(m.rate) && m.rate >= 0 && m.rate <= 1));
    return 0;
}
