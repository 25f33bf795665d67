#pragma once
/* The one reader of durations ("90", "1.5s", "250ms", "10m", "6h", "30d"): the config's
 * keys, the error groups' window, the CLI's --since. Below config.c and storegroups.c,
 * which both read one. */
#include <stdbool.h>

/* Seconds in *out_s; false (out_s untouched) when s is not a duration. */
bool parse_duration(const char *s, double *out_s);
