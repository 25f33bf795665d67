#pragma once
/*
 * Building request URLs and bodies from outside names (ids, worker names, vhosts, queue
 * names, operator text). URLs go through libcurl (curl_easy_escape, CURLU); JSON string
 * contents through cJSON. Everything returned is allocated (free()).
 *
 * Invalid UTF-8 policy: a URL path segment is percent-encoded byte for byte, so any id
 * reaches the server exactly as the store holds it. A JSON string must be valid UTF-8:
 * url_escape_json refuses invalid input (NULL with a message) rather than replacing
 * bytes, because a replaced id or reason would silently name something else.
 */
#include <stdbool.h>
#include <stddef.h>

/* Every byte except A-Z a-z 0-9 - . _ ~ percent-encoded ('/' → %2F): one path segment. */
char *url_escape_path(const char *s);
/* The contents of a JSON string for s, without the quotes ("\"", "\\", "\n", "\u0001").
 * NULL with why when s is not valid UTF-8. */
char *url_escape_json(const char *s, char *why, size_t whycap);
/* s is valid UTF-8 (no overlongs, surrogates or code points above U+10FFFF). */
bool url_utf8_valid(const char *s);

/* base + "/" + path, with exactly one '/' between them. */
char *url_join(const char *base, const char *path);
bool url_is_http(const char *url);          /* scheme is plain http */
bool url_is_https(const char *url);
bool url_host_is_loopback(const char *url); /* core/hostrule.h host_is_loopback of the host */
/* "host:port" of an http(s) URL, default ports filled in (80/443); NULL when the URL
 * does not parse. */
char *url_host_port(const char *url);
