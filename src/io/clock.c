/* Clocks (see clock.h). */
#include "clock.h"

#include <math.h>
#include <time.h>

static double seconds_of(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double clock_mono(void)
{
    return seconds_of(CLOCK_MONOTONIC);
}

double clock_wall(void)
{
    return seconds_of(CLOCK_REALTIME);
}

double clock_cpu(void)
{
    return seconds_of(CLOCK_THREAD_CPUTIME_ID);
}

struct timeval clock_tv(double s)
{
    if (!(s > 0))                    /* also NaN */
        s = 0;
    double whole = floor(s);
    struct timeval tv = { (time_t)whole, (suseconds_t)((s - whole) * 1e6) };
    if (tv.tv_usec >= 1000000) {
        tv.tv_sec++;
        tv.tv_usec -= 1000000;
    }
    return tv;
}
