#pragma once
/*
 * Messages about a value that came from a secret reference (store = env:DATABASE_URL):
 * no part of the value is ever printed. redact_ref() rewrites a message (libpq's, the
 * resolver's, a parser's) so that every part of the value in it is replaced by its name:
 * "could not resolve host "the host part of env:DATABASE_URL"". The value is read as a URL
 * (user, password, host, port, database, query parameters), a libpq "key=value" conninfo
 * (each value named by its key) or else as one opaque value; each part is also matched
 * piece by piece (split at @ : / , ; ? & = # and blanks) and percent-decoded, so a
 * password holding an unescaped '@' that a parser cut in the wrong place is still found.
 * A URL whose userinfo holds '@' adds "(encode @ in the password as %40)".
 */
#include <stddef.h>

/* Writes msg with every part of value replaced into out (cap bytes, always terminated).
 * ref names the reference ("env:DATABASE_URL"). value NULL or "": msg unchanged. */
void redact_ref(const char *msg, const char *value, const char *ref, char *out, size_t cap);
