/* Which hosts may be sent a credential (src/core/hostrule.c): the one loopback test and
 * the URL rule the config parser applies at load; one row per boundary. */
#include <stdio.h>
#include <string.h>

#include "../../src/core/hostrule.h"
#include "check.h"

static void test_loopback(void)
{
    static const struct { const char *host; bool lo; } t[] = {
        {"localhost", true},          {"LocalHost", true},
        {"127.0.0.1", true},          {"127.255.255.254", true},
        {"127.0.0.0", true},          {"::1", true},
        {"[::1]", true},              {"::ffff:127.0.0.1", true},
        {"[::ffff:127.1.2.3]", true}, {"0:0:0:0:0:0:0:1", true},
        {"127.0.0.1.evil.example", false},   /* the prefix test accepted these */
        {"127.evil.example", false},  {"127.", false},
        {"127.1", false},             {"127.0.0.256", false},
        {"localhost.", false},        {"localhost.evil.example", false},
        {"localhostx", false},        {"xlocalhost", false},
        {"128.0.0.1", false},         {"126.255.255.255", false},
        {"0.0.0.0", false},           {"10.0.0.1", false},
        {"169.254.170.2", false},     {"::", false},
        {"::2", false},               {"::ffff:10.0.0.1", false},
        {"[127.0.0.1]", false},       {"[::1", false},
        {"::1]", false},              {" 127.0.0.1", false},
        {"127.0.0.1 ", false},        {"127.0.0.1:80", false},
        {"", false},                  {NULL, false},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        CHECK_MSG(host_is_loopback(t[i].host) == t[i].lo, t[i].host ? t[i].host : "(null)");
    char longname[400];
    memset(longname, '1', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    CHECK(!host_is_loopback(longname));
}

static void test_urls(void)
{
    static const struct {
        const char *url;
        bool plain_ok;
        urlrule_verdict v;
        const char *host;
    } t[] = {
        {"http://127.0.0.1:8080/x", false, URLR_OK, "127.0.0.1"},
        {"HTTP://localhost", false, URLR_OK, "localhost"},
        {"http://[::1]:9/", false, URLR_OK, "[::1]"},
        {"https://core.example/api", false, URLR_OK, "core.example"},
        {"https://core.example:8443", false, URLR_OK, "core.example"},
        {"http://core.example", true, URLR_OK, "core.example"},
        {"http://127.0.0.1.evil.example:8080", false, URLR_PLAIN_REMOTE,
         "127.0.0.1.evil.example"},
        {"http://10.0.0.1/", false, URLR_PLAIN_REMOTE, "10.0.0.1"},
        {"http://[fe80::1]/", false, URLR_PLAIN_REMOTE, "[fe80::1]"},
        {"http://core.example?x=1", false, URLR_PLAIN_REMOTE, "core.example"},
        {"http://core.example#f", false, URLR_PLAIN_REMOTE, "core.example"},
        {"http://user:pw@127.0.0.1/", false, URLR_USERINFO, ""},
        {"https://user@core.example/", true, URLR_USERINFO, ""},
        {"http://:pw@127.0.0.1/", false, URLR_USERINFO, ""},
        {"http://127.0.0.1\\@evil.example/", false, URLR_USERINFO, ""},
        {"http://127.0.0.1\\evil.example/", false, URLR_BAD_HOST, ""},
        {"http://127.0.0.1%2eevil/", false, URLR_BAD_HOST, ""},
        {"http://127.0.0.1:8a/", false, URLR_BAD_HOST, ""},
        {"http://127.0.0.1:1:2/", false, URLR_BAD_HOST, ""},
        {"http://[::1/", false, URLR_BAD_HOST, ""},
        {"http://[::1]x/", false, URLR_BAD_HOST, ""},
        {"http:///path", false, URLR_NO_HOST, ""},
        {"http://:80/", false, URLR_NO_HOST, ""},
        {"http://[]/", false, URLR_NO_HOST, ""},
        {"ftp://127.0.0.1/", false, URLR_SCHEME, ""},
        {"127.0.0.1:80", false, URLR_SCHEME, ""},
        {"http:/127.0.0.1", false, URLR_SCHEME, ""},
        {"", false, URLR_SCHEME, ""},
        {NULL, false, URLR_SCHEME, ""},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        char host[64] = "junk";
        const char *ctx = t[i].url ? t[i].url : "(null)";
        CHECK_MSG(urlrule_check(t[i].url, t[i].plain_ok, host, sizeof host) == t[i].v, ctx);
        CHECK_MSG(strcmp(host, t[i].host) == 0, ctx);
        CHECK_MSG(strlen(urlrule_text(t[i].v)) > 5, ctx);
    }
}

int main(void)
{
    test_loopback();
    test_urls();
    return check_done("test_hostrule");
}
