#pragma once
/*
 * Which proxy libcurl takes from the environment for a URL, for `redrive check` to say.
 * The rule (io/http.c): a request that is not https never goes through a proxy
 * (CURLOPT_NOPROXY "*"), so the loopback and ECS exceptions to "https only" never put
 * a credential in clear on a proxy's wire. An https request reads the variables as
 * libcurl does: no_proxy / NO_PROXY first (*, host names and their subdomains, IP
 * addresses and CIDR ranges), then https_proxy / HTTPS_PROXY, then all_proxy / ALL_PROXY;
 * a variable set to the empty string counts as unset (curl_getenv).
 */
#include <stdbool.h>
#include <stddef.h>

typedef enum {
    PROXY_DIRECT_PLAIN,      /* not https: never through a proxy */
    PROXY_DIRECT_NONE,       /* https, no proxy variable set */
    PROXY_DIRECT_NO_PROXY,   /* https, the host is in no_proxy / NO_PROXY */
    PROXY_VIA,               /* https through the proxy in `shown` */
} rd_proxy_use;

/* What a request to url does. For PROXY_VIA, shown is the proxy as scheme://host:port
 * (never its user or password) or "(does not parse)"; var names the variable it came
 * from (for PROXY_DIRECT_NO_PROXY the no_proxy variable); otherwise var is NULL. */
rd_proxy_use proxyenv_for(const char *url, char *shown, size_t cap, const char **var);
