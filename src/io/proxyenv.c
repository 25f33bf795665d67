/* The environment's proxy for a URL, read as libcurl reads it (see proxyenv.h). */
#include "proxyenv.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "url.h"

/* The variable as curl_getenv reads it: empty is the same as unset. */
static const char *env1(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* The lower-case variable, then the upper-case one (NULL when neither is set). */
static const char *env2(const char *lower, const char *upper, const char **var)
{
    const char *v = env1(lower);
    *var = lower;
    if (!v) {
        v = env1(upper);
        *var = upper;
    }
    return v;
}

/* ip (no brackets) inside the entry "ADDR" or "ADDR/BITS" of the same family. */
static bool ip_in(const char *ip, const char *entry, size_t n)
{
    char buf[64];
    if (n >= sizeof buf)
        return false;
    memcpy(buf, entry, n);
    buf[n] = '\0';
    char *slash = strchr(buf, '/');
    long bits = -1;
    if (slash) {
        *slash = '\0';
        char *end;
        bits = strtol(slash + 1, &end, 10);
        if (*end || end == slash + 1 || bits < 0)
            return false;
    }
    unsigned char a[16], b[16];
    int fam = strchr(ip, ':') ? AF_INET6 : AF_INET;
    size_t len = fam == AF_INET6 ? 16 : 4;
    if (inet_pton(fam, ip, a) != 1 || inet_pton(fam, buf, b) != 1)
        return false;
    if (bits < 0 || (size_t)bits > len * 8)
        bits = (long)len * 8;
    size_t whole = (size_t)bits / 8;
    unsigned rest = (unsigned)bits % 8;
    if (memcmp(a, b, whole) != 0)
        return false;
    unsigned char mask = (unsigned char)(0xff00u >> rest);
    return rest == 0 || (a[whole] & mask) == (b[whole] & mask);
}

/* A host name equals the entry or is a subdomain of it; a leading or trailing dot in
 * the entry is ignored. */
static bool name_in(const char *host, const char *entry, size_t n)
{
    size_t hn = strlen(host);
    if (hn && host[hn - 1] == '.')
        hn--;
    if (n && entry[n - 1] == '.')
        n--;
    if (n && entry[0] == '.') {
        entry++;
        n--;
    }
    if (n == 0 || n > hn)
        return false;
    if (n == hn)
        return strncasecmp(host, entry, n) == 0;
    return host[hn - n - 1] == '.' && strncasecmp(host + hn - n, entry, n) == 0;
}

static bool host_in_list(const char *host, const char *list)
{
    if (strcmp(list, "*") == 0)
        return true;
    char bare[256];
    size_t hn = strlen(host);
    if (host[0] == '[' && hn >= 2 && hn - 2 < sizeof bare) {   /* [::1] */
        memcpy(bare, host + 1, hn - 2);
        bare[hn - 2] = '\0';
    } else {
        snprintf(bare, sizeof bare, "%s", host);
    }
    unsigned char tmp[16];
    bool ip = inet_pton(AF_INET, bare, tmp) == 1 || inet_pton(AF_INET6, bare, tmp) == 1;
    for (const char *p = list; *p;) {
        p += strspn(p, ", \t");
        size_t n = strcspn(p, ", \t");
        if (n && (ip ? ip_in(bare, p, n) : name_in(bare, p, n)))
            return true;
        p += n;
    }
    return false;
}

/* scheme://host:port of a proxy setting (libcurl's default scheme is http). */
static void proxy_shown(const char *proxy, char *shown, size_t cap)
{
    CURLU *u = curl_url();
    char *s = NULL, *h = NULL, *p = NULL;
    if (u && curl_url_set(u, CURLUPART_URL, proxy, CURLU_GUESS_SCHEME) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_SCHEME, &s, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &h, 0) == CURLUE_OK) {
        if (!strstr(proxy, "://")) {                 /* "proxy:3128" is http://proxy:3128 */
            curl_free(s);
            s = NULL;
        }
        bool port = curl_url_get(u, CURLUPART_PORT, &p, 0) == CURLUE_OK;
        snprintf(shown, cap, "%s://%s%s%s", s ? s : "http", h, port ? ":" : "", port ? p : "");
    } else {
        snprintf(shown, cap, "(does not parse)");
    }
    curl_free(s);
    curl_free(h);
    curl_free(p);
    curl_url_cleanup(u);
}

rd_proxy_use proxyenv_for(const char *url, char *shown, size_t cap, const char **var)
{
    *var = NULL;
    if (cap)
        shown[0] = '\0';
    if (!url || !url_is_https(url))
        return PROXY_DIRECT_PLAIN;
    const char *nvar, *no = env2("no_proxy", "NO_PROXY", &nvar);
    char *host = NULL;
    CURLU *u = curl_url();
    if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK)
        curl_url_get(u, CURLUPART_HOST, &host, 0);
    curl_url_cleanup(u);
    bool skip = no && host && host_in_list(host, no);
    curl_free(host);
    if (skip) {
        *var = nvar;
        return PROXY_DIRECT_NO_PROXY;
    }
    const char *pvar, *proxy = env2("https_proxy", "HTTPS_PROXY", &pvar);
    if (!proxy)
        proxy = env2("all_proxy", "ALL_PROXY", &pvar);
    if (!proxy)
        return PROXY_DIRECT_NONE;
    *var = pvar;
    proxy_shown(proxy, shown, cap);
    return PROXY_VIA;
}
