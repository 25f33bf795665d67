/* Request URLs and JSON string contents, through libcurl and cJSON (see url.h). */
#include "url.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../core/hostrule.h"
#include "../core/sanitize.h"
#include "../core/xalloc.h"

/* ---- escaping ------------------------------------------------------------------------ */

/* libcurl and cJSON fail here only by running out of memory: same policy as xalloc. */
static void oom(void)
{
    static const char msg[] = "redrive: out of memory\n";
    fwrite(msg, 1, sizeof msg - 1, stderr);
    abort();
}

char *url_escape_path(const char *s)
{
    if (!s)
        s = "";
    char *e = curl_easy_escape(NULL, s, (int)strlen(s));
    if (!e)
        oom();
    char *out = xstrdup(e);
    curl_free(e);
    return out;
}

bool url_utf8_valid(const char *s)
{
    /* The one UTF-8 decoder (core/sanitize) changes exactly the invalid sequences. */
    size_t n = s ? strlen(s) : 0;
    char *clean = sanitize_utf8(s, n);
    bool same = strlen(clean) == n && memcmp(clean, s, n) == 0;
    free(clean);
    return same;
}

char *url_escape_json(const char *s, char *why, size_t whycap)
{
    if (!s)
        s = "";
    if (!url_utf8_valid(s)) {
        snprintf(why, whycap, "the value is not valid UTF-8");
        return NULL;
    }
    cJSON *item = cJSON_CreateString(s);
    char *quoted = item ? cJSON_PrintUnformatted(item) : NULL;
    cJSON_Delete(item);
    size_t n = quoted ? strlen(quoted) : 0;
    if (n < 2 || quoted[0] != '"' || quoted[n - 1] != '"')
        oom();
    char *out = xstrndup(quoted + 1, n - 2);
    cJSON_free(quoted);
    return out;
}

/* ---- URLs ---------------------------------------------------------------------------- */

static char *url_part(const char *url, CURLUPart part, unsigned flags)
{
    CURLU *u = url ? curl_url() : NULL;
    char *out = NULL, *v = NULL;
    if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, part, &v, flags) == CURLUE_OK) {
        out = xstrdup(v);
        curl_free(v);
    }
    curl_url_cleanup(u);
    return out;
}

char *url_join(const char *base, const char *path)
{
    size_t n = strlen(base);
    while (n && base[n - 1] == '/')
        n--;
    return xasprintf("%.*s%s%s", (int)n, base, path[0] == '/' ? "" : "/", path);
}

static bool scheme_is(const char *url, const char *scheme)
{
    char *s = url_part(url, CURLUPART_SCHEME, 0);
    bool yes = s && strcasecmp(s, scheme) == 0;
    free(s);
    return yes;
}

bool url_is_http(const char *url) { return scheme_is(url, "http"); }
bool url_is_https(const char *url) { return scheme_is(url, "https"); }

bool url_host_is_loopback(const char *url)
{
    char *host = url_part(url, CURLUPART_HOST, 0);
    bool lo = host_is_loopback(host);
    free(host);
    return lo;
}

char *url_host_port(const char *url)
{
    char *host = url_part(url, CURLUPART_HOST, 0);
    char *port = host ? url_part(url, CURLUPART_PORT, CURLU_DEFAULT_PORT) : NULL;
    char *out = port ? xasprintf("%s:%s", host, port) : NULL;
    free(host);
    free(port);
    return out;
}
