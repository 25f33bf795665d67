/* AWS Signature Version 4, header form (see sigv4.h). */
#include "sigv4.h"

#include <ctype.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../core/xalloc.h"

enum { SIGV4_MAX_HEADERS = 32 };

typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static void sb_addn(sbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void sb_add(sbuf *b, const char *s) { sb_addn(b, s, strlen(s)); }

static void hex(const unsigned char *d, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[d[i] >> 4];
        out[2 * i + 1] = digits[d[i] & 15];
    }
    out[2 * n] = '\0';
}

static void sha256_hex(const char *s, size_t n, char out[65])
{
    unsigned char md[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)s, n, md);
    hex(md, sizeof md, out);
}

static void hmac(const unsigned char *key, size_t klen, const char *msg, unsigned char out[32])
{
    unsigned int len = 32;
    HMAC(EVP_sha256(), key, (int)klen, (const unsigned char *)msg, strlen(msg), out, &len);
}

static bool unreserved(unsigned char c)
{
    return isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

/* Percent-encodes every byte but the unreserved ones (and '/' when keep_slash). */
static void encode(sbuf *b, const char *s, size_t n, bool keep_slash)
{
    static const char digits[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (unreserved(c) || (keep_slash && c == '/')) {
            sb_addn(b, (const char *)&s[i], 1);
        } else {
            char e[3] = { '%', digits[c >> 4], digits[c & 15] };
            sb_addn(b, e, 3);
        }
    }
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = (char)tolower((unsigned char)c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Decodes %XX in s[0..n) (other bytes as they are), then encodes strictly. */
static char *reencode(const char *s, size_t n)
{
    char *raw = xmalloc(n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int h, l;
        if (s[i] == '%' && i + 2 < n && (h = hexval(s[i + 1])) >= 0 &&
            (l = hexval(s[i + 2])) >= 0) {
            raw[k++] = (char)(h * 16 + l);
            i += 2;
        } else {
            raw[k++] = s[i];
        }
    }
    sbuf b = { 0 };
    sb_add(&b, "");
    encode(&b, raw, k, false);
    free(raw);
    return b.p;
}

typedef struct qparam {
    char *key, *val;
} qparam;

static int qparam_cmp(const void *a, const void *b)
{
    const qparam *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : strcmp(x->val, y->val);
}

static void canonical_query(sbuf *b, const char *q)
{
    qparam *v = NULL;
    size_t n = 0;
    while (q && *q) {
        size_t len = strcspn(q, "&");
        if (len > 0) {
            const char *eq = memchr(q, '=', len);
            size_t klen = eq ? (size_t)(eq - q) : len;
            v = xrealloc(v, (n + 1) * sizeof *v);
            v[n].key = reencode(q, klen);
            v[n].val = eq ? reencode(eq + 1, len - klen - 1) : xstrdup("");
            n++;
        }
        q += len;
        if (*q == '&')
            q++;
    }
    if (n)
        qsort(v, n, sizeof *v, qparam_cmp);
    for (size_t i = 0; i < n; i++) {
        if (i)
            sb_add(b, "&");
        sb_add(b, v[i].key);
        sb_add(b, "=");
        sb_add(b, v[i].val);
        free(v[i].key);
        free(v[i].val);
    }
    free(v);
}

typedef struct hdr {
    char *name, *value;
} hdr;

static int hdr_cmp(const void *a, const void *b)
{
    return strcmp(((const hdr *)a)->name, ((const hdr *)b)->name);
}

/* "Name: value" → lower-case name, value trimmed with inner runs of spaces collapsed. */
static bool hdr_parse(const char *line, hdr *h)
{
    const char *colon = strchr(line, ':');
    if (!colon || colon == line)
        return false;
    h->name = xstrndup(line, (size_t)(colon - line));
    for (char *p = h->name; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    sbuf v = { 0 };
    sb_add(&v, "");
    const char *p = colon + 1;
    while (*p == ' ' || *p == '\t')
        p++;
    bool space = false;
    for (; *p; p++) {
        if (*p == ' ' || *p == '\t') {
            space = true;
            continue;
        }
        if (space)
            sb_add(&v, " ");
        space = false;
        sb_addn(&v, p, 1);
    }
    h->value = v.p;
    return true;
}

/* Splits scheme://authority/path?query; host is the authority without userinfo and
 * without a default port, as libcurl sends it in Host. */
static bool split_url(const char *url, char **host, char **path, char **query)
{
    const char *s = strstr(url, "://");
    if (!s)
        return false;
    bool https = (size_t)(s - url) == 5 && strncasecmp(url, "https", 5) == 0;
    const char *a = s + 3;
    size_t alen = strcspn(a, "/?#");
    if (alen == 0)
        return false;
    const char *at = memchr(a, '@', alen);
    if (at) {
        alen -= (size_t)(at + 1 - a);
        a = at + 1;
    }
    *host = xstrndup(a, alen);
    char *colon = strrchr(*host, ':');
    if (colon && !strchr(colon, ']') &&
        ((https && strcmp(colon, ":443") == 0) || (!https && strcmp(colon, ":80") == 0)))
        *colon = '\0';
    for (char *p = *host; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    const char *rest = a + alen;
    size_t plen = strcspn(rest, "?#");
    *path = xstrndup(rest, plen);
    const char *q = rest[plen] == '?' ? rest + plen + 1 : "";
    *query = xstrndup(q, strcspn(q, "#"));
    return true;
}

static void free_hdrs(hdr *h, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (h[i].value)
            OPENSSL_cleanse(h[i].value, strlen(h[i].value));
        free(h[i].name);
        free(h[i].value);
    }
}

/* The canonical request's header block and the signed-header list. */
static bool canonical_headers(const sigv4_in *in, const char *host, const char *amzdate,
                              sbuf *canon, sbuf *signed_list)
{
    hdr h[SIGV4_MAX_HEADERS + 3];
    size_t n = 0;
    h[n++] = (hdr){ xstrdup("host"), xstrdup(host) };
    h[n++] = (hdr){ xstrdup("x-amz-date"), xstrdup(amzdate) };
    if (in->token && *in->token)
        h[n++] = (hdr){ xstrdup("x-amz-security-token"), xstrdup(in->token) };
    bool ok = true;
    for (size_t i = 0; in->headers && in->headers[i]; i++) {
        if (n >= SIGV4_MAX_HEADERS + 3 || !hdr_parse(in->headers[i], &h[n])) {
            ok = false;
            break;
        }
        n++;
    }
    qsort(h, n, sizeof *h, hdr_cmp);
    for (size_t i = 0; ok && i < n; i++) {
        sb_add(canon, h[i].name);
        sb_add(canon, ":");
        sb_add(canon, h[i].value);
        sb_add(canon, "\n");
        if (i)
            sb_add(signed_list, ";");
        sb_add(signed_list, h[i].name);
    }
    free_hdrs(h, n);
    return ok;
}

static void signing_key(const char *secret, const char *day, const char *region,
                        const char *service, unsigned char key[32])
{
    char *k0 = xasprintf("AWS4%s", secret);
    unsigned char a[32], b[32];
    hmac((const unsigned char *)k0, strlen(k0), day, a);
    hmac(a, 32, region, b);
    hmac(b, 32, service, a);
    hmac(a, 32, "aws4_request", key);
    OPENSSL_cleanse(k0, strlen(k0));
    OPENSSL_cleanse(a, sizeof a);
    OPENSSL_cleanse(b, sizeof b);
    free(k0);
}

bool sigv4_sign(const sigv4_in *in, sigv4_out *out, char *why, size_t cap)
{
    memset(out, 0, sizeof *out);
    if (!in->method || !in->url || !in->region || !*in->region || !in->service ||
        !in->access_key || !*in->access_key || !in->secret_key || !*in->secret_key) {
        snprintf(why, cap, "signing: missing method, URL, region or credentials");
        return false;
    }
    char *host = NULL, *path = NULL, *query = NULL;
    if (!split_url(in->url, &host, &path, &query)) {
        snprintf(why, cap, "signing: URL does not parse");
        return false;
    }
    struct tm tm;
    gmtime_r(&in->when, &tm);
    char amzdate[20], day[12];
    strftime(amzdate, sizeof amzdate, "%Y%m%dT%H%M%SZ", &tm);
    strftime(day, sizeof day, "%Y%m%d", &tm);

    sbuf canon = { 0 }, signed_list = { 0 };
    sb_add(&canon, in->method);
    sb_add(&canon, "\n");
    encode(&canon, *path ? path : "/", *path ? strlen(path) : 1, true);
    sb_add(&canon, "\n");
    canonical_query(&canon, query);
    sb_add(&canon, "\n");
    sb_add(&signed_list, "");
    bool ok = canonical_headers(in, host, amzdate, &canon, &signed_list);
    if (!ok) {
        snprintf(why, cap, "signing: a header is malformed or there are too many");
        goto done;
    }
    sb_add(&canon, "\n");
    sb_add(&canon, signed_list.p);
    sb_add(&canon, "\n");
    char body_hash[65], canon_hash[65];
    sha256_hex(in->body ? in->body : "", in->body ? strlen(in->body) : 0, body_hash);
    sb_add(&canon, body_hash);
    sha256_hex(canon.p, canon.n, canon_hash);

    char *scope = xasprintf("%s/%s/%s/aws4_request", day, in->region, in->service);
    char *to_sign = xasprintf("AWS4-HMAC-SHA256\n%s\n%s\n%s", amzdate, scope, canon_hash);
    unsigned char key[32], sig[32];
    signing_key(in->secret_key, day, in->region, in->service, key);
    hmac(key, 32, to_sign, sig);
    OPENSSL_cleanse(key, sizeof key);
    hex(sig, 32, out->signature);
    snprintf(out->date_hdr, sizeof out->date_hdr, "X-Amz-Date: %s", amzdate);
    out->auth_hdr = xasprintf("Authorization: AWS4-HMAC-SHA256 Credential=%s/%s, "
                              "SignedHeaders=%s, Signature=%s", in->access_key, scope,
                              signed_list.p, out->signature);
    if (in->token && *in->token)
        out->token_hdr = xasprintf("X-Amz-Security-Token: %s", in->token);
    free(scope);
    free(to_sign);
done:
    if (canon.p)
        OPENSSL_cleanse(canon.p, canon.n);   /* holds the session token */
    free(canon.p);
    free(signed_list.p);
    free(host);
    free(path);
    free(query);
    return ok;
}

void sigv4_out_free(sigv4_out *out)
{
    if (out->token_hdr)
        OPENSSL_cleanse(out->token_hdr, strlen(out->token_hdr));
    free(out->token_hdr);
    free(out->auth_hdr);
    memset(out, 0, sizeof *out);
}

bool sigv4_region_from_host(const char *host, char *out, size_t cap)
{
    /* find a label that looks like a region: xx-word-N (us-east-1, ap-southeast-2,
     * us-gov-west-1, cn-north-1, eu-central-2) */
    const char *p = host;
    while (p && *p) {
        size_t len = strcspn(p, ".");
        int dashes = 0;
        bool shape = len >= 7 && len < cap && isdigit((unsigned char)p[len - 1]) &&
                     isalpha((unsigned char)p[0]) && isalpha((unsigned char)p[1]) &&
                     p[2] == '-';
        for (size_t i = 0; shape && i < len; i++) {
            unsigned char c = (unsigned char)p[i];
            if (c == '-')
                dashes++;
            else if (!islower(c) && !isdigit(c))
                shape = false;
        }
        if (shape && dashes >= 2 && dashes <= 3) {
            memcpy(out, p, len);
            out[len] = '\0';
            return true;
        }
        p += len;
        if (*p == '.')
            p++;
    }
    return false;
}
