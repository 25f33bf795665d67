#pragma once
/*
 * AWS Signature Version 4 (header form) for one HTTP request, signed by us with
 * OpenSSL's HMAC/SHA-256 rather than libcurl's CURLOPT_AWS_SIGV4 (curl 7.88 does not
 * sort the query string). Pure: no I/O, the time is given, so it is unit-tested
 * against AWS's published test suite.
 *
 * Signed headers: host, every header in `headers`, x-amz-date and, with a session
 * token, x-amz-security-token. The result holds the header lines to add to the request;
 * it contains the token (a secret): free it with sigv4_out_free, which wipes it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

typedef struct sigv4_in {
    const char *method;              /* "GET", "POST" */
    const char *url;                 /* http(s)://host[:port]/path[?query] */
    const char *body;                /* NULL = empty */
    const char *const *headers;      /* NULL-terminated "Name: value" to sign, may be NULL */
    const char *region, *service;
    const char *access_key, *secret_key, *token;   /* token NULL/"" = none */
    time_t when;
} sigv4_in;

typedef struct sigv4_out {
    char date_hdr[48];               /* "X-Amz-Date: 20150830T123600Z" */
    char *token_hdr;                 /* "X-Amz-Security-Token: ..." or NULL */
    char *auth_hdr;                  /* "Authorization: AWS4-HMAC-SHA256 Credential=..." */
    char signature[65];              /* hex, for tests */
} sigv4_out;

/* false with why when the URL does not parse or an input is missing. */
bool sigv4_sign(const sigv4_in *in, sigv4_out *out, char *why, size_t cap);
void sigv4_out_free(sigv4_out *out);
/* The region of an AWS endpoint host: sqs.eu-west-1.amazonaws.com → eu-west-1,
 * eu-west-1.queue.amazonaws.com → eu-west-1, vpce-...sqs.us-east-2.vpce.amazonaws.com.
 * false when the host names no region. */
bool sigv4_region_from_host(const char *host, char *out, size_t cap);
