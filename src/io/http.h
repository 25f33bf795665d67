#pragma once
/*
 * HTTP over libcurl's multi_socket API on the libevent loop. Never blocks: DNS is
 * curl's threaded resolver (http_async_dns says whether this libcurl has one), every
 * request has a deadline, bodies are capped. URL building: io/url.h.
 * Used by the RabbitMQ and SQS sources (sources/http_poller.h), the worker /health
 * probes, the action layer (actions, auth, whoami), the AWS credential chain
 * (io/awscreds.c: the container and instance endpoints), the session (which owns the
 * handle) and `check` (http_async_dns).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
typedef struct rd_http rd_http;

typedef struct rd_http_req {
    const char *method;              /* "GET", "POST", "PATCH", ... */
    const char *url;
    const char *body;                /* NULL = none */
    const char *const *headers;      /* NULL-terminated "Name: value" list, may be NULL */
    const char *userpwd;             /* "user:password" basic auth, or NULL */
    const char *cacert;              /* CA bundle, NULL = system */
    long timeout_ms;                 /* whole request, default 10000 */
    long connect_timeout_ms;         /* default 3000 */
    size_t max_body;                 /* cap, default 4 MiB; larger → truncated=true */
    bool credential;                 /* headers or body carry a secret (userpwd always does):
                                        never over plain http:// to a host that is not
                                        loopback (core/hostrule.h) unless insecure_ok, never
                                        to a URL holding user:password@ */
    bool insecure_ok;                /* the system's insecure = yes */
    bool path_as_is;                 /* send the path as built: libcurl removes no "." or
                                        ".." segment (CURLOPT_PATH_AS_IS; action requests) */
} rd_http_req;

typedef struct rd_http_resp {
    long status;                     /* HTTP status, 0 when no response */
    int curl_code;                   /* CURLcode, 0 = ok */
    bool timed_out;                  /* deadline hit (a POST may have been applied) */
    bool truncated;
    char error[256];                 /* curl's message, raw (sanitize before display) */
    char *body;                      /* NUL-terminated, owned by the library during cb */
    size_t body_len;
    double elapsed_s;
    bool request_sent;               /* (part of) the request was written to the server:
                                        without a response it may have been applied */
} rd_http_resp;

typedef void (*rd_http_cb)(const rd_http_resp *resp, void *ud);

/* Never blocks or refuses: without an asynchronous resolver in libcurl (see
 * http_async_dns) requests still work, but a name lookup may stall the loop. */
rd_http *http_new(struct event_base *base);
void http_free(rd_http *h);          /* cancels pending requests without callbacks */
/* Starts a request; cb runs exactly once, later, from the loop. Returns an id (>0),
 * or 0 when the request could not be started (cb not called), e.g. a header holding CR
 * or LF, or a credential refused for its URL (see rd_http_req.credential): http_why says
 * why. Redirects are never followed; TLS verification is always on; only https goes
 * through the environment's proxy (io/proxyenv.h), plain http never does. */
uint64_t http_start_named(rd_http *h, const rd_http_req *req, rd_http_cb cb, void *ud,
                          const char *name);
/* name: the callback's, for the loop trace (loop.h) */
#define http_start(h, req, cb, ud) http_start_named((h), (req), (cb), (ud), #cb)
/* Why the last http_start on h returned 0 ("the request could not be started" when no
 * better reason is known); never holds a secret. */
const char *http_why(const rd_http *h);
void http_cancel(rd_http *h, uint64_t id);   /* no callback afterwards */
size_t http_pending(const rd_http *h);
/* libcurl resolves names without blocking (CURL_VERSION_ASYNCHDNS: the threaded or
 * c-ares resolver). For the console and `check` to report. */
bool http_async_dns(void);
