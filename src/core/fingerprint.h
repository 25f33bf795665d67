#pragma once
/* Error fingerprints: numbers, ids, uuids, hex, quoted values, timestamps, ips are
 * replaced by placeholders so failures group ("connection refused to host <ip>:<n>").
 * Output is at most cap-1 bytes, NUL-terminated; NULL/"" in → "". */
#include <stddef.h>

void fingerprint_make(const char *msg, char *out, size_t cap);
char *fingerprint_dup(const char *msg);
