/* The ECS container credentials endpoint rules (src/io/awsecs.c), one row per boundary:
 * the AWS SDKs' hosts for a plain-http full URI, a relative URI that must stay on
 * 169.254.170.2, the authorization token with the full URI only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/io/awsecs.h"
#include "../unit/check.h"

static void test_rules(void)
{
    static const struct {
        const char *rel, *full;
        awsecs_verdict v;
        const char *url;        /* the request URL when OK */
        bool token;
        const char *why;        /* part of the refusal */
    } t[] = {
        {NULL, NULL, AWSECS_NONE, NULL, false, ""},
        {"", "", AWSECS_NONE, NULL, false, ""},
        {"/v2/credentials/abc", NULL, AWSECS_OK, "http://169.254.170.2/v2/credentials/abc",
         false, ""},
        {"/v2/creds", "http://127.0.0.1:9/x", AWSECS_OK, "http://169.254.170.2/v2/creds",
         false, ""},                                  /* relative first, no token */
        {"@evil.example:80/x", NULL, AWSECS_REFUSED, NULL, false,
         "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI refused: it must start with '/'"},
        {"v2/creds", NULL, AWSECS_REFUSED, NULL, false, "must start with '/'"},
        {"//evil.example/x", NULL, AWSECS_OK, "http://169.254.170.2//evil.example/x", false,
         ""},                                         /* a path on 169.254.170.2 */
        {NULL, "http://127.0.0.1:9/creds", AWSECS_OK, "http://127.0.0.1:9/creds", true, ""},
        {NULL, "http://localhost:9/creds", AWSECS_OK, "http://localhost:9/creds", true, ""},
        {NULL, "http://[::1]:9/creds", AWSECS_OK, "http://[::1]:9/creds", true, ""},
        {NULL, "http://169.254.170.2/v1", AWSECS_OK, "http://169.254.170.2/v1", true, ""},
        {NULL, "http://169.254.170.23/v1", AWSECS_OK, "http://169.254.170.23/v1", true, ""},
        {NULL, "http://[fd00:ec2::23]/v1", AWSECS_OK, "http://[fd00:ec2::23]/v1", true, ""},
        {NULL, "http://[fd00:ec2:0::23]/v1", AWSECS_OK, "http://[fd00:ec2:0::23]/v1", true, ""},
        {NULL, "https://creds.example/v1", AWSECS_OK, "https://creds.example/v1", true, ""},
        {NULL, "http://creds.example/v1", AWSECS_REFUSED, NULL, false,
         "AWS_CONTAINER_CREDENTIALS_FULL_URI refused: plain http:// only to loopback"},
        {NULL, "http://127.0.0.1.evil.example/v1", AWSECS_REFUSED, NULL, false, "plain http://"},
        {NULL, "http://169.254.170.3/v1", AWSECS_REFUSED, NULL, false, "plain http://"},
        {NULL, "http://169.254.169.254/v1", AWSECS_REFUSED, NULL, false, "plain http://"},
        {NULL, "http://[fd00:ec2::24]/v1", AWSECS_REFUSED, NULL, false, "plain http://"},
        {NULL, "http://u:Secr3t@127.0.0.1:9/", AWSECS_REFUSED, NULL, false, "user name"},
        {NULL, "ftp://127.0.0.1/x", AWSECS_REFUSED, NULL, false, "only http:// or https://"},
        {NULL, "not a url", AWSECS_REFUSED, NULL, false, "not a URL"},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        char ctx[160], why[200];
        snprintf(ctx, sizeof ctx, "rel=%s full=%s", t[i].rel ? t[i].rel : "-",
                 t[i].full ? t[i].full : "-");
        static char junk[] = "junk";
        char *url = junk;
        bool token = !t[i].token;
        awsecs_verdict v = awsecs_endpoint(t[i].rel, t[i].full, &url, &token, why, sizeof why);
        CHECK_MSG(v == t[i].v, ctx);
        CHECK_MSG((!url && !t[i].url) || (url && t[i].url && !strcmp(url, t[i].url)), ctx);
        CHECK_MSG(token == t[i].token, ctx);
        CHECK_MSG(strstr(why, t[i].why) != NULL, ctx);
        CHECK_MSG(!strstr(why, "Secr3t") && !strstr(why, "evil"), ctx);   /* never echoed */
        free(url);
    }
}

int main(void)
{
    test_rules();
    return check_done("test_awsecs");
}
