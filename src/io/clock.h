#pragma once
/*
 * Clocks for the I/O rooms (io, sources, actions): seconds as doubles.
 * clock_mono() for deadlines, timeouts and intervals (never jumps); clock_wall() for
 * times shown or stored (heartbeat ages, token expiry, journal stamps).
 */
#include <sys/time.h>

double clock_mono(void);             /* CLOCK_MONOTONIC */
double clock_wall(void);             /* CLOCK_REALTIME, seconds since the epoch */
/* CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID): what a callback costs the
 * loop, without the time the machine gave to others (benchmarks on a loaded host). */
double clock_cpu(void);
/* A duration in seconds as a timeval for event_add (negative → zero). */
struct timeval clock_tv(double s);
