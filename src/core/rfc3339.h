#pragma once
/*
 * The one RFC 3339 timestamp reader, also for PostgreSQL's text form:
 *
 *   YYYY-MM-DD{T|t| }HH:MM[:SS][{.|,}fraction][Z|z|{+|-}HH[[:]MM[[:]SS]]]
 *
 * No zone means UTC. Seconds may be 60 (a leap second reads as the next second).
 * Every field is range-checked (the day against its month, leap years included)
 * and nothing may follow: out-of-range fields and trailing text are rejected.
 */
#include <stdbool.h>

/* Epoch seconds (with the fraction) into *out; false when s is not such a time. */
bool rfc3339_parse(const char *s, double *out);
