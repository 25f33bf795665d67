#pragma once
/*
 * Clocks for the I/O rooms (io, sources, actions): seconds as doubles.
 * clock_mono() for deadlines, timeouts and intervals (never jumps); clock_wall() for
 * times shown or stored (heartbeat ages, token expiry, journal stamps).
 */
#include <sys/time.h>

double clock_mono(void);             /* CLOCK_MONOTONIC */
double clock_wall(void);             /* CLOCK_REALTIME, seconds since the epoch */
/* A duration in seconds as a timeval for event_add (negative → zero). */
struct timeval clock_tv(double s);
