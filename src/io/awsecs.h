#pragma once
/*
 * The ECS container credentials endpoint, by the AWS SDKs' rules (io/awscreds.h uses it;
 * `check` reports a refusal):
 *   AWS_CONTAINER_CREDENTIALS_RELATIVE_URI (first): must start with '/'; the request goes
 *     to http://169.254.170.2 + it, and the parsed host must still be 169.254.170.2
 *     ("@HOST:PORT/x" would otherwise send the request to HOST). No authorization token.
 *   AWS_CONTAINER_CREDENTIALS_FULL_URI: https:// to any host; plain http:// only to
 *     loopback (core/hostrule.h), 169.254.170.2, 169.254.170.23 or fd00:ec2::23. No
 *     user:password@. AWS_CONTAINER_AUTHORIZATION_TOKEN(_FILE) goes with this one only.
 * Messages name the variable, never its value.
 */
#include <stdbool.h>
#include <stddef.h>

typedef enum {
    AWSECS_NONE,       /* neither variable set: the chain skips ECS */
    AWSECS_OK,         /* *url allocated; *with_token: send the authorization token */
    AWSECS_REFUSED,    /* why says which rule; the chain goes on to the next provider */
} awsecs_verdict;

/* rel, full: the two variables' values (NULL or "" = unset). */
awsecs_verdict awsecs_endpoint(const char *rel, const char *full, char **url, bool *with_token,
                               char *why, size_t cap);
/* The same from the environment. */
awsecs_verdict awsecs_endpoint_env(char **url, bool *with_token, char *why, size_t cap);
