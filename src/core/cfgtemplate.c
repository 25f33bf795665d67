#include "cfgtemplate.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/* Which profiles a key is for. */
enum { T_ANY = 0, T_PG = 1, T_REDIS = 2, T_BROKER = 4, T_TASKER = 8, T_ALAKAI = 16 };

typedef struct trow {
    const char *key;
    unsigned when;          /* every bit must hold (T_ANY: always) */
    bool set;               /* written as a setting, not commented out */
    const char *value;      /* "{ENV}" → the system's variable prefix; NULL: from the profile */
    const char *meaning;
} trow;

static const trow rows[] = {
    { "profile", T_ANY, true, NULL, "the job system and its schema (profiles/NAME.profile)" },
    { "store", T_PG, true, "env:{ENV}_STORE",
      "the PostgreSQL store: libpq conninfo or URI (postgresql://user@host:5432/db); a secret\n"
      "# reference (env:, file:, cmd:) because it may carry a password" },
    { "schema", T_PG, false, NULL, "PostgreSQL schema of the job tables" },
    { "store_sslmode", T_PG, false, "verify-full", "TLS to PostgreSQL: disable, require, verify-ca, verify-full" },
    { "store_sslrootcert", T_PG, false, "/etc/ssl/certs/db-ca.pem", "CA bundle the server must chain to" },
    { "store", T_REDIS, true, "env:{ENV}_STORE",
      "the Redis store: redis://host:6379/0, rediss://host:6380/0 (TLS) or\n"
      "# redis+unix:///path?db=N; a secret reference when the URL carries a password" },
    { "store_user", T_REDIS, false, "redrive_ro", "Redis ACL user for AUTH (unset: password-only AUTH)" },
    { "store_password", T_REDIS, false, "env:{ENV}_STORE_PASSWORD", "Redis AUTH password (a secret reference)" },
    { "store_cacert", T_REDIS, false, "/etc/ssl/certs/redis-ca.pem", "Redis TLS: CA bundle (PEM)" },
    { "prefix", T_ALAKAI, false, "alakai-executions", "key prefix of the execution hashes" },
    { "max_retries", T_ALAKAI, false, "1", "the orchestrator's MAX_RETRIES (must match it)" },
    { "orphan_after", T_ALAKAI, false, "2h", "running longer than this = orphan suspect" },
    { "sweep_budget", T_ALAKAI, false, "25%",
      "the task sweep's share of one Redis core (0 = as fast as the server allows)" },
    { "sqs_queue_url", T_ALAKAI, false, "https://sqs.eu-west-1.amazonaws.com/123456789012/alakai-dispatch",
      "Amazon SQS dispatch queue URLs, comma-separated (adds the sqs source)" },
    { "sqs_region", T_ALAKAI, false, "eu-west-1", "signing region (default: from the queue URL)" },
    { "aws_profile", T_ALAKAI, false, "redrive", "profile of ~/.aws/credentials (default: AWS_PROFILE, default)" },
    { "workers", T_TASKER, false, "https://worker-1.example.net:8081", "worker /health base URLs, comma-separated" },
    { "broker", T_BROKER, false, "https://rabbitmq.example.net:15672", "RabbitMQ management API base URL" },
    { "broker_user", T_BROKER, false, "redrive", "management API user" },
    { "broker_password", T_BROKER, false, "env:{ENV}_BROKER_PASSWORD", "management API password (a secret reference)" },
    { "broker_vhost", T_BROKER, false, "/", "RabbitMQ virtual host" },
    { "dlq", T_BROKER, false, "*.dlq, *_dlq", "DLQ queue names or globs, comma-separated" },
    { "queues", T_ANY, false, "*", "queues to show (globs)" },
    { "core", T_ANY, false, "https://core.example.net", "core API base URL (unset: no actions)" },
    { "auth", T_ANY, false, "bearer", "bearer, token-command, jwt-login, api-key, dev-user or none" },
    { "token", T_ANY, false, "env:{ENV}_TOKEN", "bearer / api-key token (a secret reference)" },
    { "cacert", T_ANY, false, "/etc/ssl/certs/internal-ca.pem", "CA bundle for the core API and the broker" },
    { "banner", T_ANY, false, "PROD", "environment banner in the theme's danger colour" },
    { "read_only", T_ANY, false, "yes", "hide and refuse every action" },
    { "poll", T_ANY, false, "2s", "refresh interval" },
    { "journal_syslog", T_ANY, false, "yes",
      "also send each audit journal line to syslog (authpriv, tag redrive): yes, no, or\n"
      "# the path of a syslog socket (default /dev/log)" },
};

void cfgtemplate_env_prefix(const char *system, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "REDRIVE_");
    for (const char *s = system; *s && n + 1 < cap; s++)
        buf[n++] = isalnum((unsigned char)*s) && ((unsigned char)*s < 0x80)
                       ? (char)toupper((unsigned char)*s) : '_';
    if (n < cap)
        buf[n] = '\0';
}

static unsigned profile_bits(const rd_profile *p)
{
    unsigned b = 0;
    if (p->store && strcmp(p->store, "redis") == 0)
        b |= T_REDIS;
    else
        b |= T_PG;
    /* a broker when the profile names one as a DLQ source; unsaid: PostgreSQL systems */
    if (profile_get(p, "dlq_source") ? profile_dlq_from(p, "broker") : !(b & T_REDIS))
        b |= T_BROKER;
    if (p->semantics && strcmp(p->semantics, "tasker") == 0)
        b |= T_TASKER;
    if (p->semantics && strcmp(p->semantics, "alakai") == 0)
        b |= T_ALAKAI;
    return b;
}

/* value with {ENV} replaced, newly allocated. */
static char *expand(const char *value, const char *env)
{
    const char *at = strstr(value, "{ENV}");
    if (!at)
        return xstrdup(value);
    return xasprintf("%.*s%s%s", (int)(at - value), value, env, at + 5);
}

static void put(char **buf, size_t *len, size_t *cap, const char *s)
{
    size_t n = strlen(s);
    xgrow(buf, cap, *len + n + 1, 1);
    memcpy(*buf + *len, s, n + 1);
    *len += n;
}

char *cfgtemplate_render(const rd_profile *p, const char *profile_name, const char *system)
{
    char env[128];
    cfgtemplate_env_prefix(system, env, sizeof env);
    unsigned bits = profile_bits(p);
    size_t len = 0, cap = 0;
    char *out = NULL;
    char *head = xasprintf("# redrive configuration (redrive config init --profile %s): one [system \"NAME\"]\n"
                           "# section per system. Fill in what is set below, uncomment what you need,\n"
                           "# then run `redrive check`. Secrets are references, never values:\n"
                           "# env:NAME, file:PATH (mode 0600), cmd:COMMAND. All keys: redrive(1), docs/config.md.\n\n"
                           "[system \"%s\"]\n", profile_name, system);
    put(&out, &len, &cap, head);
    free(head);
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        const trow *r = &rows[i];
        if ((r->when & bits) != r->when)
            continue;
        const char *v = r->value ? r->value : strcmp(r->key, "profile") == 0 ? profile_name : profile_get(p, r->key);
        if (!v)
            continue;
        char *val = expand(v, env);
        char *line = xasprintf("\n# %s: %s\n%s%s = %s\n", r->key, r->meaning, r->set ? "" : "# ", r->key, val);
        put(&out, &len, &cap, line);
        free(line);
        free(val);
    }
    return out;
}
