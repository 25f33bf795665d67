/* The one RFC 3339 reader. A time it accepts is finite, and written back in the
 * canonical UTC form it reads as the same whole second. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzz.h"
#include "rfc3339.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 256)
        return 0;
    char *s = fuzz_cstr(data, size);
    double t;
    if (rfc3339_parse(s, &t)) {
        FUZZ_ASSERT(isfinite(t) && strlen(s) >= 16);
        double whole = floor(t);
        FUZZ_ASSERT(t - whole < 1);
        time_t sec = (time_t)whole;
        struct tm tm;
        FUZZ_ASSERT(gmtime_r(&sec, &tm));
        if (tm.tm_year >= -1900 && tm.tm_year <= 9999 - 1900) {
            char back[40];
            snprintf(back, sizeof back, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
            double t2;
            FUZZ_ASSERT(rfc3339_parse(back, &t2) && t2 == whole);
        }
    }
    free(s);
    return 0;
}
