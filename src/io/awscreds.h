#pragma once
/*
 * AWS credentials found the way AWS tools find them, without blocking the loop:
 *   1. environment: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN
 *      (skipped when a profile is configured explicitly with aws_profile)
 *   2. shared files (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials, AWS_CONFIG_FILE
 *      or ~/.aws/config), profile aws_profile / AWS_PROFILE / "default": static keys,
 *      or credential_process run as a child (io/proc.h) with a deadline
 *   3. ECS task credentials: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI (169.254.170.2) or
 *      _FULL_URI, with AWS_CONTAINER_AUTHORIZATION_TOKEN(_FILE) (the full URI only); an
 *      endpoint the SDKs' rules refuse (io/awsecs.h) is skipped and named in the error
 *   4. EC2 instance metadata, IMDSv2 (token PUT, then GET) at
 *      AWS_EC2_METADATA_SERVICE_ENDPOINT or 169.254.169.254; off with
 *      AWS_EC2_METADATA_DISABLED=true
 * Expiring credentials are fetched again 5 minutes before they expire. Secrets are
 * wiped when freed and never appear in a message.
 */
#include <stdbool.h>
#include <stddef.h>

struct event_base;
typedef struct rd_http rd_http;

typedef struct rd_aws_creds {
    char *access_key, *secret_key, *token;     /* token NULL when none */
    double expires;                             /* epoch, 0 = never */
    char provider[48];                          /* "environment", "shared-file:prod",
                                                   "credential-process:prod", "ecs",
                                                   "imds" */
} rd_aws_creds;

typedef struct rd_awscreds rd_awscreds;
/* Called from the loop when a fetch has finished (ok or not): ask awscreds_get again. */
typedef void (*rd_awscreds_cb)(void *ud);

rd_awscreds *awscreds_new(struct event_base *base, rd_http *http, const char *profile,
                          rd_awscreds_cb cb, void *ud);
void awscreds_free(rd_awscreds *c);
/* The credentials when usable now; otherwise NULL and starts (or waits for) a fetch.
 * why says why there are none yet ("pending" while fetching, or the last failure). */
const rd_aws_creds *awscreds_get(rd_awscreds *c, char *why, size_t cap);
/* The region of the profile's config (`region`), or AWS_REGION / AWS_DEFAULT_REGION;
 * NULL when none. Valid while c lives. */
const char *awscreds_region(const rd_awscreds *c);
/* Parses a credential_process / ECS / IMDS JSON answer into out (allocated members).
 * Pure, for tests. */
bool awscreds_parse_json(const char *body, size_t len, rd_aws_creds *out, char *why,
                         size_t cap);
void awscreds_clear(rd_aws_creds *k);
