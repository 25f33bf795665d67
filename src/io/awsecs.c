/* The ECS container credentials endpoint rules (see awsecs.h). */
#include "awsecs.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../core/hostrule.h"
#include "../core/xalloc.h"

static const char ECS_HOST[] = "169.254.170.2";
static const char REL[] = "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI";
static const char FULL[] = "AWS_CONTAINER_CREDENTIALS_FULL_URI";

/* The hosts a plain-http full URI may name besides loopback (ECS, EKS Pod Identity). */
static bool ecs_host(const char *host)
{
    char h[INET6_ADDRSTRLEN];
    size_t n = strlen(host);
    if (n >= 2 && host[0] == '[' && host[n - 1] == ']' && n - 2 < sizeof h) {
        memcpy(h, host + 1, n - 2);
        h[n - 2] = '\0';
    } else if (n < sizeof h) {
        memcpy(h, host, n + 1);
    } else {
        return false;
    }
    struct in6_addr a, pod;
    if (strcmp(h, ECS_HOST) == 0 || strcmp(h, "169.254.170.23") == 0)
        return true;
    return inet_pton(AF_INET6, h, &a) == 1 && inet_pton(AF_INET6, "fd00:ec2::23", &pod) == 1 &&
           memcmp(&a, &pod, sizeof a) == 0;
}

/* Scheme and host of url as libcurl reads it, and whether it holds user:password@. */
static bool parse(const char *url, char **scheme, char **host, bool *userinfo)
{
    CURLU *u = curl_url();
    char *s = NULL, *h = NULL, *x = NULL;
    bool ok = u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
              curl_url_get(u, CURLUPART_SCHEME, &s, 0) == CURLUE_OK &&
              curl_url_get(u, CURLUPART_HOST, &h, 0) == CURLUE_OK;
    *userinfo = ok && (curl_url_get(u, CURLUPART_USER, &x, 0) == CURLUE_OK ||
                       curl_url_get(u, CURLUPART_PASSWORD, &x, 0) == CURLUE_OK);
    *scheme = ok ? xstrdup(s) : NULL;
    *host = ok ? xstrdup(h) : NULL;
    curl_free(s);
    curl_free(h);
    curl_free(x);
    curl_url_cleanup(u);
    return ok;
}

static awsecs_verdict refuse(char *why, size_t cap, const char *var, const char *rule)
{
    snprintf(why, cap, "%s refused: %s", var, rule);
    return AWSECS_REFUSED;
}

static awsecs_verdict relative(const char *rel, char **url, char *why, size_t cap)
{
    if (rel[0] != '/')
        return refuse(why, cap, REL, "it must start with '/'");
    char *u = xasprintf("http://%s%s", ECS_HOST, rel), *scheme, *host;
    bool userinfo, ok = parse(u, &scheme, &host, &userinfo);
    ok = ok && !userinfo && strcmp(host, ECS_HOST) == 0;
    free(scheme);
    free(host);
    if (!ok) {
        free(u);
        return refuse(why, cap, REL, "the request would not go to 169.254.170.2");
    }
    *url = u;
    return AWSECS_OK;
}

static awsecs_verdict full_uri(const char *full, char **url, char *why, size_t cap)
{
    char *scheme, *host;
    bool userinfo;
    if (!parse(full, &scheme, &host, &userinfo))
        return refuse(why, cap, FULL, "not a URL");
    awsecs_verdict v = AWSECS_OK;
    if (userinfo)
        v = refuse(why, cap, FULL, "a user name or password in the URL");
    else if (strcasecmp(scheme, "https") == 0)
        ;
    else if (strcasecmp(scheme, "http") != 0)
        v = refuse(why, cap, FULL, "only http:// or https://");
    else if (!host_is_loopback(host) && !ecs_host(host))
        v = refuse(why, cap, FULL, "plain http:// only to loopback, 169.254.170.2, "
                   "169.254.170.23 or fd00:ec2::23 (https:// to any host)");
    free(scheme);
    free(host);
    if (v == AWSECS_OK)
        *url = xstrdup(full);
    return v;
}

awsecs_verdict awsecs_endpoint(const char *rel, const char *full, char **url, bool *with_token,
                               char *why, size_t cap)
{
    *url = NULL;
    *with_token = false;
    if (why && cap)
        why[0] = '\0';
    if (rel && *rel)
        return relative(rel, url, why, cap);
    if (!full || !*full)
        return AWSECS_NONE;
    awsecs_verdict v = full_uri(full, url, why, cap);
    *with_token = v == AWSECS_OK;
    return v;
}

awsecs_verdict awsecs_endpoint_env(char **url, bool *with_token, char *why, size_t cap)
{
    return awsecs_endpoint(getenv(REL), getenv(FULL), url, with_token, why, cap);
}
