/* Which hosts may be sent a credential (see hostrule.h). */
#include "hostrule.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

bool host_is_loopback(const char *host)
{
    if (!host)
        return false;
    char h[INET6_ADDRSTRLEN + 2];
    size_t n = strlen(host);
    bool bracketed = n >= 2 && host[0] == '[' && host[n - 1] == ']';
    if (bracketed && n - 2 < sizeof h) {       /* "[v6]", as in a URL */
        memcpy(h, host + 1, n - 2);
        h[n - 2] = '\0';
    } else if (!bracketed && n < sizeof h) {
        memcpy(h, host, n + 1);
    } else {
        return false;
    }
    struct in_addr a4;
    struct in6_addr a6;
    if (!bracketed && strcasecmp(h, "localhost") == 0)
        return true;
    if (!bracketed && inet_pton(AF_INET, h, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, h, &a6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&a6) ||
               (IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127);
    return false;
}

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '.' || c == '_';
}

/* "host[:port]" or "[v6][:port]" in a[0..n): the host's span, false when malformed. */
static bool split_authority(const char *a, size_t n, const char **h, size_t *hn)
{
    size_t i = 0;
    if (n && a[0] == '[') {
        const char *close = memchr(a, ']', n);
        if (!close)
            return false;
        for (const char *c = a + 1; c < close; c++)
            if (!(name_char(*c) || *c == ':'))
                return false;
        *h = a;
        *hn = (size_t)(close - a) + 1;
        i = *hn;
    } else {
        while (i < n && name_char(a[i]))
            i++;
        *h = a;
        *hn = i;
    }
    if (i < n && a[i] == ':')
        for (i++; i < n; i++)
            if (a[i] < '0' || a[i] > '9')
                return false;
    return i == n;
}

urlrule_verdict urlrule_check(const char *url, bool plain_ok, char *host, size_t cap)
{
    if (host && cap)
        host[0] = '\0';
    if (!url)
        return URLR_SCHEME;
    bool http = strncasecmp(url, "http://", 7) == 0;
    if (!http && strncasecmp(url, "https://", 8) != 0)
        return URLR_SCHEME;
    const char *a = url + (http ? 7 : 8);
    size_t n = strcspn(a, "/?#");
    if (memchr(a, '@', n))
        return URLR_USERINFO;
    const char *h;
    size_t hn;
    if (!split_authority(a, n, &h, &hn))
        return URLR_BAD_HOST;
    if (hn == 0 || (hn == 2 && h[0] == '['))
        return URLR_NO_HOST;
    char buf[256];
    if (hn >= sizeof buf)
        return URLR_BAD_HOST;
    memcpy(buf, h, hn);
    buf[hn] = '\0';
    if (host && cap)
        snprintf(host, cap, "%s", buf);
    if (http && !plain_ok && !host_is_loopback(buf))
        return URLR_PLAIN_REMOTE;
    return URLR_OK;
}

const char *urlrule_text(urlrule_verdict v)
{
    switch (v) {
    case URLR_OK: return "is fine";
    case URLR_SCHEME: return "must be an http:// or https:// URL";
    case URLR_NO_HOST: return "has no host";
    case URLR_BAD_HOST: return "has a character no host name or port holds";
    case URLR_USERINFO: return "must not hold a user name or password (user:password@): give "
                               "credentials in their own keys, as references (env:NAME)";
    case URLR_PLAIN_REMOTE: return "uses plain http:// to a host that is not loopback "
                                   "(localhost, 127.0.0.0/8, ::1): use https:// (or set "
                                   "insecure = yes, shown in the banner)";
    }
    return "is refused";
}
