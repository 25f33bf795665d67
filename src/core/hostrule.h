#pragma once
/*
 * Which hosts may be sent a credential (docs/config.md, "Credentials and hosts"). One
 * loopback test for the whole program: the config parser (at load), the HTTP client (at
 * send time) and name resolution (on resolved addresses) all ask host_is_loopback.
 */
#include <stdbool.h>
#include <stddef.h>

/* Exactly "localhost" (any case), an IPv4 literal in 127.0.0.0/8, ::1 or ::ffff:127.x.y.z
 * (brackets around IPv6 accepted). Nothing else: "127.0.0.1.evil.example" is a name. */
bool host_is_loopback(const char *host);

typedef enum {
    URLR_OK,
    URLR_SCHEME,        /* not http:// or https:// */
    URLR_NO_HOST,       /* nothing between "://" and the path */
    URLR_BAD_HOST,      /* a character no host name or port holds ("\", "%", " ", ...) */
    URLR_USERINFO,      /* "user[:password]@" before the host */
    URLR_PLAIN_REMOTE,  /* http:// to a host that is not loopback */
} urlrule_verdict;

/* Checks an http(s) URL a request will go to. plain_ok: plain http to any host is allowed
 * (insecure = yes, or a URL that never carries a credential). host (cap bytes, may be
 * NULL) gets the host as written when one was found. */
urlrule_verdict urlrule_check(const char *url, bool plain_ok, char *host, size_t cap);
/* The rule a verdict broke, for a message after the key ("'core' ..."). */
const char *urlrule_text(urlrule_verdict v);
