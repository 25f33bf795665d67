/* `redrive check`: what each part says, and how it is printed (check.h). */
#include "check.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../core/health.h"
#include "../core/hostrule.h"
#include "../core/model_json.h"
#include "../core/sanitize.h"
#include "../core/xalloc.h"
#include "../io/proxyenv.h"
#include "../io/awsecs.h"
#include "../io/clock.h"
#include "../io/url.h"

/* ---- the report ---------------------------------------------------------------------- */

ck_report *ck_list_add(ck_list *l, const char *system, const char *profile)
{
    xgrow(&l->items, &l->cap, l->n + 1, sizeof *l->items);
    ck_report *r = xcalloc(1, sizeof *r);
    r->system = xstrdup(system ? system : "?");
    r->profile = xstrdup(profile ? profile : "?");
    l->items[l->n++] = r;
    return r;
}

static void report_clear(ck_report *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->lines[i].what);
        free(r->lines[i].msg);
        free(r->lines[i].fix);
    }
    free(r->lines);
    free(r->system);
    free(r->profile);
}

void ck_list_free(ck_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        report_clear(l->items[i]);
        free(l->items[i]);
    }
    free(l->items);
    report_clear(&l->global);
    memset(l, 0, sizeof *l);
}

void ck_add(ck_report *r, ck_status st, const char *what, const char *fix, const char *fmt, ...)
{
    xgrow(&r->lines, &r->cap, r->n + 1, sizeof *r->lines);
    ck_line *ln = &r->lines[r->n++];
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    *ln = (ck_line){.st = st, .what = xstrdup(what), .msg = xstrdup(msg),
                    .fix = fix ? xstrdup(fix) : NULL};
}

static const rd_source_status *source(const rd_model *m, const char *name)
{
    for (size_t i = 0; i < m->sources.n; i++)
        if (strcmp(m->sources.items[i].name, name) == 0)
            return &m->sources.items[i];
    return NULL;
}

static bool has(const char *hay, const char *needle)
{
    return hay && strcasestr(hay, needle) != NULL;
}

static bool fact(const rd_source_status *s, unsigned f, bool *holds)
{
    *holds = (s->facts & f) != 0;
    return (s->facts_known & f) != 0;
}

/* ---- the store ----------------------------------------------------------------------- */

/* The likely fix for a store that did not answer, from its error text. */
static const char *store_fix(const char *err, bool redis)
{
    if (has(err, "WRONGPASS") || has(err, "NOAUTH") || has(err, "password") ||
        has(err, "authentication"))
        return redis ? "check the Redis user and password (store_user, store_password)"
                     : "check the role and its password (store_password, .pgpass)";
    if (has(err, "NOPERM") || has(err, "permission denied"))
        return redis ? "grant the ACL user the commands redrive reads with (docs/sources.md)"
                     : "grant the role SELECT on the profile's tables (docs/profiles.md)";
    if (has(err, "does not exist"))
        return "check the database and schema the profile reads (docs/profiles.md)";
    if (has(err, "certificate") || has(err, "SSL") || has(err, "TLS"))
        return "check the CA file and the server's certificate name";
    return "is the server running and reachable? check store = (host, port)";
}

/* Every host of a comma-separated list h[0..n) is a unix socket path or loopback
 * (core/hostrule.h: exactly localhost, 127.0.0.0/8, ::1). */
static bool hosts_local(const char *h, size_t n)
{
    while (n) {
        size_t k = 0;
        while (k < n && h[k] != ',')
            k++;
        char one[256];
        size_t m = k;
        if (m && h[0] != '[') {                      /* "host:port" in a URL */
            const char *colon = memchr(h, ':', m);
            if (colon && !memchr(colon + 1, ':', (size_t)(h + m - colon - 1)))
                m = (size_t)(colon - h);
        } else if (m && memchr(h, ']', m)) {
            m = (size_t)((const char *)memchr(h, ']', m) - h) + 1;
        }
        if (m >= sizeof one)
            return false;
        memcpy(one, h, m);
        one[m] = '\0';
        if (!(m == 0 || one[0] == '/' || one[0] == '%' || host_is_loopback(one)))
            return false;
        h += k < n ? k + 1 : k;
        n -= k < n ? k + 1 : k;
    }
    return true;
}

/* Loopback host or unix socket: a plain connection does not cross the network. */
static bool store_is_local(const char *store)
{
    if (!store || strncmp(store, "redis+unix", 10) == 0 || strncmp(store, "unix://", 7) == 0)
        return true;
    if (strstr(store, "://")) {
        const char *h = strstr(store, "://") + 3;
        size_t n = strcspn(h, "/?");
        for (const char *at; (at = memchr(h, '@', n)) != NULL; n -= (size_t)(at + 1 - h), h = at + 1)
            ;
        if (strstr(store, "host=%2F") || strstr(store, "host=/"))
            return true;
        return hosts_local(h, n);
    }
    const char *h = strstr(store, "host=");
    if (!h)
        return true;                 /* libpq's default: the unix socket */
    h += 5;
    if (*h == '\'')
        h++;
    return hosts_local(h, strcspn(h, " '\t"));
}

/* From what the source saw on its connection (the TLS facts pg_conn and the Redis TLS
 * bridge report), never from the config: an unverified connection is a warning. */
static void store_tls(ck_report *r, const rd_system_cfg *cfg, const rd_source_status *s,
                      bool redis)
{
    bool tls = false, verified = false;
    if (fact(s, RD_FACT_TLS, &tls))
        fact(s, RD_FACT_TLS_VERIFIED, &verified);
    if (tls && verified)
        ck_add(r, CK_OK, "store tls", NULL, "encrypted, certificate and host name verified");
    else if (tls)
        ck_add(r, CK_WARN, "store tls", redis ? "remove store_insecure and set store_cacert = "
               "your CA" : "use sslmode=verify-full with sslrootcert = your CA",
               "encrypted, but TLS NOT VERIFIED: the server's certificate and host name are "
               "not checked");
    else if (store_is_local(cfg->store.url))
        ck_add(r, CK_OK, "store tls", NULL, "not used (local connection)");
    else
        ck_add(r, CK_WARN, "store tls", redis ? "use rediss:// with store_cacert"
                                              : "use sslmode=verify-full",
               "not encrypted over the network");
}

static void store_read_only(ck_report *r, const rd_source_status *s)
{
    bool ro;
    if (!fact(s, RD_FACT_READ_ONLY, &ro))
        ck_add(r, CK_WARN, "read-only", "use PostgreSQL 14 or later, or a read-only role",
               "the server does not report default_transaction_read_only");
    else if (ro)
        ck_add(r, CK_OK, "read-only", NULL, "session is read-only "
               "(default_transaction_read_only = on)");
    else
        ck_add(r, CK_WARN, "read-only", "ALTER ROLE <role> SET default_transaction_read_only = on",
               "session is NOT read-only");
}

static void store_keyspace(ck_report *r, const rd_source_status *s)
{
    bool on;
    if (!fact(s, RD_FACT_KEYSPACE, &on))
        ck_add(r, CK_WARN, "keyspace events", "allow CONFIG GET for this user, or accept "
               "a full sweep every poll", "cannot read notify-keyspace-events");
    else if (on)
        ck_add(r, CK_OK, "keyspace events", NULL, "notifications on: changes arrive as "
               "they happen");
    else
        ck_add(r, CK_WARN, "keyspace events", "CONFIG SET notify-keyspace-events Kh (and in "
               "redis.conf)", "notifications off: changes are seen at the next sweep");
}

/* Where the Redis sweep runs and what it may take: "on a replica" / "on the primary (no
 * replica configured)", its budget, and its progress while the first sweep runs. */
static void store_sweep(ck_report *r, const rd_system_cfg *cfg, const rd_source_status *s)
{
    bool replica = false, known = fact(s, RD_FACT_REPLICA, &replica);
    bool listed = cfg->store.url && strchr(cfg->store.url, ',');
    const char *where = !known ? "on a server of unknown role (INFO refused)"
                        : replica ? "on a replica"
                        : listed ? "on the primary (no replica of the store's list answers)"
                                 : "on the primary (no replica configured)";
    char budget[64], prog[200];
    if (cfg->alakai.sweep_budget > 0)
        snprintf(budget, sizeof budget, "at most %.0f %% of one Redis core",
                 cfg->alakai.sweep_budget * 100);
    else
        snprintf(budget, sizeof budget, "unbudgeted (sweep_budget = 0)");
    source_progress_text(s, prog, sizeof prog);
    ck_add(r, CK_OK, "sweep", NULL, "runs %s, %s%s%s", where, budget, prog[0] ? "; " : "",
           prog[0] ? prog : "");
}

/* Whether a profile query of this store needs an extension (requires_<query> = NAME). */
static bool profile_uses(const rd_profile *p, const char *ext)
{
    for (size_t i = 0; p && i < p->n_settings; i++)
        if (strncmp(p->settings[i].key, "requires_", 9) == 0 && p->settings[i].value &&
            strcmp(p->settings[i].value, ext) == 0)
            return true;
    return false;
}

static void store_features(ck_report *r, const rd_system_cfg *cfg, const rd_profile *prof,
                           const rd_source_status *s, const rd_model *m)
{
    char f[300] = "", dlq[120] = "no DLQ";
    bool pgmq;
    if (fact(s, RD_FACT_PGMQ, &pgmq))
        snprintf(f, sizeof f, "pgmq %s, ", pgmq ? "installed"
                 : profile_uses(prof, "pgmq") ? "not installed (the queues panel stays empty)"
                                              : "not installed");
    const char *from = prof ? profile_get(prof, "dlq_source") : NULL;
    long store_total = -1;              /* the store's own share of the DLQ */
    for (size_t i = 0; i < m->dlq_parts.n; i++)
        if (strcmp(m->dlq_parts.items[i].owner, s->name) == 0)
            store_total = m->dlq_parts.items[i].total;
    /* where this system's DLQ is: what the profile says AND the config has (a broker DLQ
     * needs a broker), the store's share whenever it counted one, SQS when configured */
    bool in_store = store_total >= 0 && (!from || profile_dlq_from(prof, "store"));
    bool on_broker = from && profile_dlq_from(prof, "broker") && cfg->broker.url && *cfg->broker.url;
    bool on_sqs = (cfg->sqs.queue_url && *cfg->sqs.queue_url) || (cfg->sqs.dlq && *cfg->sqs.dlq);
    if (in_store || on_broker || on_sqs) {
        char store[48] = "";
        if (in_store)
            snprintf(store, sizeof store, "in the store (%ld pending%s)", store_total,
                     s->progress.active ? " so far" : "");
        snprintf(dlq, sizeof dlq, "DLQ %s%s%s%s%s", store, in_store && on_broker ? " and " : "",
                 on_broker ? "on the broker" : "", (in_store || on_broker) && on_sqs ? " and " : "",
                 on_sqs ? "on SQS" : "");
    }
    ck_add(r, CK_OK, "features", NULL, "%s%s", f, dlq);
}

void ck_report_store(ck_report *r, const rd_system_cfg *cfg, const rd_profile *prof,
                     const rd_model *m)
{
    bool redis = prof && prof->store && strcmp(prof->store, "redis") == 0;
    const rd_source_status *s = source(m, redis ? "redis" : "postgresql");
    bool reading = s && s->state == RD_SRC_CONNECTING && s->progress.active;
    if (!s || (s->state != RD_SRC_OK && !reading)) {
        const char *err = s && s->error[0] ? s->error : "no answer";
        ck_add(r, CK_FAIL, "store", store_fix(err, redis), "%s: %s",
               redis ? "Redis" : "PostgreSQL", err);
        return;
    }
    ck_add(r, CK_OK, "store", NULL, "%s %s, connected", redis ? "Redis" : "PostgreSQL",
           s->version[0] ? s->version : "(version not disclosed)");
    bool variant = prof && prof->name && cfg->profile && strcmp(prof->name, cfg->profile);
    ck_add(r, CK_OK, "profile", NULL, "%s%s", prof && prof->name ? prof->name : "?",
           variant ? " (the schema era the store has)" : "");
    if (!redis) {
        const char *schema = cfg->store.schema ? cfg->store.schema : prof ? profile_get(prof, "schema") : NULL;
        ck_add(r, CK_OK, "schema", NULL, "%s%s", schema ? schema : "public",
               cfg->store.schema ? "" : " (the profile's default; set schema = NAME to change it)");
        store_read_only(r, s);
    }
    for (size_t i = 0; i < s->n_notes && i < RD_SRC_NOTES; i++) {
        if (strncmp(s->notes[i], "missing index:", 14) == 0)   /* pg_changes.c */
            ck_add(r, CK_WARN, "indexes", "the profile's queries rely on it (docs/profiles.md): "
                   "ask the system's owners to add it; without it these queries read more",
                   "%.*s", (int)RD_SRC_NOTE_LEN, s->notes[i]);
        else
            ck_add(r, CK_WARN, "optional query", "grant the role access to it, or live without "
                   "that panel (the rest reads fine)", "%.*s", (int)RD_SRC_NOTE_LEN, s->notes[i]);
    }
    if (s->push[0]) {                 /* the store's notifications (docs/sources.md "Push") */
        bool on = strncmp(s->push, "on", 2) == 0;
        ck_add(r, on ? CK_OK : CK_WARN, "push", on ? NULL : "the console polls instead (every "
               "`poll`): changes appear within it", "%.*s", (int)sizeof s->push, s->push);
    }
    store_tls(r, cfg, s, redis);
    if (redis) {
        store_keyspace(r, s);
        store_sweep(r, cfg, s);
    }
    store_features(r, cfg, prof, s, m);
}

/* ---- the broker and the workers ----------------------------------------------------- */

static const char *broker_fix(const char *err)
{
    if (has(err, "broker_password"))
        return "fix broker_password (the secret line above)";
    if (has(err, "401"))
        return "check broker_user and broker_password";
    if (has(err, "403"))
        return "give the user the monitoring tag and read access to the vhost";
    if (has(err, "404"))
        return "check broker_vhost";
    if (has(err, "certificate") || has(err, "SSL"))
        return "set cacert = the CA that signed the broker's certificate";
    return "check broker = (the management API URL) and that the plugin listens";
}

/* TLS state of an http(s) URL: https is always verified (cacert or the system CAs). */
static void url_tls(ck_report *r, const char *what, const char *url, const rd_system_cfg *cfg)
{
    if (url_is_https(url))
        ck_add(r, CK_OK, what, NULL, "https, certificate and host name verified (%s)",
               cfg->http.cacert ? "cacert" : "system CAs");
    else if (url_host_is_loopback(url))
        ck_add(r, CK_OK, what, NULL, "plain http on loopback");
    else if (cfg->http.insecure)
        ck_add(r, CK_WARN, what, "use https://", "plain http over the network (insecure = true)");
    else
        ck_add(r, CK_FAIL, what, "use https:// (or insecure = true, shown in the banner)",
               "plain http to a remote host is refused");
}

/* The proxy a request to url goes through, as libcurl reads the environment: every
 * endpoint says it, so a corporate proxy in the way is never a surprise. */
static void url_proxy(ck_report *r, const char *what, const char *url)
{
    char shown[200];
    const char *var;
    switch (proxyenv_for(url, shown, sizeof shown, &var)) {
    case PROXY_DIRECT_PLAIN:
        ck_add(r, CK_OK, what, NULL, "direct, no proxy (plain http never goes through one)");
        break;
    case PROXY_DIRECT_NONE:
        ck_add(r, CK_OK, what, NULL, "direct, no proxy (none set in the environment)");
        break;
    case PROXY_DIRECT_NO_PROXY:
        ck_add(r, CK_OK, what, NULL, "direct, no proxy (the host is in %s)", var);
        break;
    case PROXY_VIA:
        ck_add(r, CK_OK, what, NULL, "through the proxy %s (%s)", shown, var);
        break;
    }
}

static void broker_dlq(ck_report *r, const rd_system_cfg *cfg, const rd_model *m)
{
    char names[200] = "";
    size_t n = 0, o = 0;
    for (size_t i = 0; i < m->queues.n; i++) {
        const rd_queue *q = &m->queues.items[i];
        if (!q->is_dlq)
            continue;
        if (n++ < 4 && o < sizeof names)
            o += (size_t)snprintf(names + o, sizeof names - o, "%s%s", o ? ", " : "", q->name);
    }
    if (n)
        ck_add(r, CK_OK, "dlq", NULL, "%zu dead-letter queue%s: %s%s", n, n == 1 ? "" : "s",
               names, n > 4 ? ", …" : "");
    else
        ck_add(r, CK_WARN, "dlq", "set dlq = the dead-letter queue names or globs",
               "no dead-letter queue found%s%s", cfg->broker.dlq ? " matching " : "",
               cfg->broker.dlq ? cfg->broker.dlq : "");
}

void ck_report_broker(ck_report *r, const rd_system_cfg *cfg, const rd_profile *prof,
                      const rd_model *m)
{
    const rd_source_status *w = source(m, "workers-http");
    if (w && w->state == RD_SRC_OK)
        ck_add(r, CK_OK, "workers", NULL, "/health answered");
    else if (w)
        ck_add(r, CK_FAIL, "workers", "check workers = (the workers' /health URLs)", "%s",
               w->error[0] ? w->error : "no answer");
    if (!cfg->broker.url || !*cfg->broker.url)
        return;
    const rd_source_status *s = source(m, "rabbitmq");
    bool reading = s && s->state == RD_SRC_CONNECTING && s->progress.active;
    if (!s || (s->state != RD_SRC_OK && !reading)) {
        const char *err = s && s->error[0] ? s->error : "no answer";
        ck_add(r, CK_FAIL, "broker", broker_fix(err), "RabbitMQ: %s", err);
        url_proxy(r, "broker proxy", cfg->broker.url);
        return;
    }
    ck_add(r, CK_OK, "broker", NULL, "RabbitMQ %s, %zu queue%s read",
           s->version[0] ? s->version : "(version not disclosed)", m->queues.n,
           m->queues.n == 1 ? "" : "s");
    url_tls(r, "broker tls", cfg->broker.url, cfg);
    url_proxy(r, "broker proxy", cfg->broker.url);
    if (profile_dlq_from(prof, "broker"))
        broker_dlq(r, cfg, m);
}

/* ---- Amazon SQS (alakai) ------------------------------------------------------------- */

/* "shared-file:prod" → "the shared credentials file, profile prod"; never a key. */
static void creds_text(const char *provider, char *out, size_t cap)
{
    const char *colon = strchr(provider, ':');
    const char *arg = colon ? colon + 1 : "";
    if (strcmp(provider, "environment") == 0)
        snprintf(out, cap, "the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)");
    else if (strncmp(provider, "shared-file:", 12) == 0)
        snprintf(out, cap, "the shared credentials file, profile %s", arg);
    else if (strncmp(provider, "credential-process:", 19) == 0)
        snprintf(out, cap, "credential_process of profile %s", arg);
    else if (strcmp(provider, "ecs") == 0)
        snprintf(out, cap, "ECS task credentials (container credentials endpoint)");
    else if (strcmp(provider, "imds") == 0)
        snprintf(out, cap, "EC2 instance metadata (IMDSv2)");
    else
        snprintf(out, cap, "%s", provider);
}

static const char *sqs_fix(const char *err)
{
    if (has(err, "credentials") || has(err, "Signature") || has(err, "InvalidClientTokenId") ||
        has(err, "UnrecognizedClient"))
        return "give AWS credentials (docs/config.md, SQS credentials) and check their keys";
    if (has(err, "AccessDenied"))
        return "allow sqs:GetQueueAttributes and sqs:ReceiveMessage on the queues";
    if (has(err, "QueueDoesNotExist") || has(err, "NonExistentQueue"))
        return "check sqs_queue_url (and sqs_region)";
    return "check sqs_queue_url, sqs_endpoint and sqs_region";
}

void ck_report_sqs(ck_report *r, const rd_system_cfg *cfg, const rd_model *m)
{
    if (!cfg->sqs.queue_url || !*cfg->sqs.queue_url)
        return;
    const rd_source_status *s = source(m, "sqs");
    const char *sqs_url = cfg->sqs.endpoint && *cfg->sqs.endpoint ? cfg->sqs.endpoint
                                                                  : cfg->sqs.queue_url;
    url_tls(r, "sqs tls", sqs_url, cfg);
    url_proxy(r, "sqs proxy", sqs_url);
    char *ecs_url = NULL, ecs_why[200];
    bool ecs_token;
    if (awsecs_endpoint_env(&ecs_url, &ecs_token, ecs_why, sizeof ecs_why) == AWSECS_REFUSED)
        ck_add(r, CK_FAIL, "sqs ecs endpoint", "fix the variable or unset it (docs/config.md, "
               "SQS credentials); the next provider was tried", "%s", ecs_why);
    free(ecs_url);
    if (s && s->creds[0]) {
        char who[160], exp[80] = "";
        creds_text(s->creds, who, sizeof who);
        if (s->creds_expires > 0) {
            char age[16];
            format_age(s->creds_expires - clock_wall(), age, sizeof age);
            snprintf(exp, sizeof exp, ", expire in %s (refreshed 5m before)", age);
        }
        ck_add(r, CK_OK, "sqs credentials", NULL, "from %s%s", who, exp);
    } else {
        const char *err = s && s->error[0] ? s->error : "none found";
        ck_add(r, CK_FAIL, "sqs credentials", "give AWS credentials (docs/config.md, SQS "
               "credentials)", "no AWS credentials used: %s", err);
    }
    bool reading = s && s->state == RD_SRC_CONNECTING && s->progress.active;
    if (!s || (s->state != RD_SRC_OK && !reading)) {
        const char *err = s && s->error[0] ? s->error : "no answer";
        ck_add(r, CK_FAIL, "sqs", sqs_fix(err), "%s", err);
        return;
    }
    char names[200] = "";
    size_t n = 0, o = 0;
    for (size_t i = 0; i < m->queues.n; i++) {
        const rd_queue *q = &m->queues.items[i];
        if (q->retention_s <= 0)
            continue;                /* not an SQS queue */
        if (n++ < 4 && o < sizeof names)
            o += (size_t)snprintf(names + o, sizeof names - o, "%s%s%s", o ? ", " : "",
                                  q->name, q->is_dlq ? " (DLQ)" : "");
    }
    ck_add(r, CK_OK, "sqs", NULL, "%zu queue%s read: %s%s", n, n == 1 ? "" : "s", names,
           n > 4 ? ", …" : "");
}

/* ---- the core API ---------------------------------------------------------------------- */

/* What to do when the core could not say who we are: the credentials first (a login the
 * core refused, a secret that could not be read: the core answered, so never "is it
 * running"), then the core's own answer, then no answer at all (naming where). */
static void identity_failed(ck_report *r, const rd_system_cfg *cfg, const rd_whoami *who)
{
    char fix[300];
    long st = who->creds_failed ? who->login_status : who->http_status;
    if (st == 401 || st == 403)
        snprintf(fix, sizeof fix, who->creds_failed
                 ? "check login and password for auth = %s (the core refused them)"
                 : "check the credentials for auth = (token, login/password)",
                 (cfg->core.auth ? cfg->core.auth : "bearer"));
    else if (who->creds_failed && st == 0 && !who->unreachable &&
             !strstr(who->why, "unreachable"))
        snprintf(fix, sizeof fix, "correct the credentials' setting for auth = %s "
                 "(token, password or token_command)", (cfg->core.auth ? cfg->core.auth : "bearer"));
    else if (st == 0) {
        char *hp = url_host_port(cfg->core.url);
        snprintf(fix, sizeof fix, "is the core running at %s (core =)?", hp ? hp : "?");
        free(hp);
    } else
        snprintf(fix, sizeof fix, "see the core's log");
    ck_add(r, CK_FAIL, "identity", fix, "%s", who->why);
}

static void core_identity(ck_report *r, const rd_system_cfg *cfg, const rd_whoami *who)
{
    if (who->ok) {
        char how[160] = "";
        if (who->role[0] && who->auth[0])
            snprintf(how, sizeof how, " (role %s, via %s)", who->role, who->auth);
        else if (who->role[0] || who->auth[0])
            snprintf(how, sizeof how, " (%s %s)", who->role[0] ? "role" : "via",
                     who->role[0] ? who->role : who->auth);
        ck_add(r, CK_OK, "identity", NULL, "the core says %s%s", who->identity, how);
    } else if (who->anonymous && (who->http_status == 401 || who->http_status == 403)) {
        ck_add(r, CK_OK, "identity", NULL, "not asked: read-only never logs in (the core "
               "answered an anonymous GET /auth/me with HTTP %ld)", who->http_status);
    } else if (who->http_status == 404) {
        ck_add(r, CK_WARN, "identity", "serve GET /auth/me (docs/core-api.md)", "%s", who->why);
    } else {
        identity_failed(r, cfg, who);
    }
}

void ck_report_core(ck_report *r, const rd_system_cfg *cfg, rd_actor *a, const rd_whoami *who)
{
    if (!cfg->core.url || !*cfg->core.url) {
        ck_add(r, CK_WARN, "core", "set core = the core API URL",
               "no core API configured: actions are disabled");
        return;
    }
    url_tls(r, "core tls", cfg->core.url, cfg);
    url_proxy(r, "core proxy", cfg->core.url);
    char why[256];
    if (a && !actor_can_act(a, why, sizeof why)) {
        bool ro = strncmp(why, "read-only", 9) == 0;
        ck_add(r, ro ? CK_OK : CK_FAIL, "auth", ro ? NULL : "see docs/core-api.md "
               "(Authentication)", "%s", why);
    } else {
        ck_add(r, CK_OK, "auth", NULL, "%s", cfg->core.auth && *cfg->core.auth ? cfg->core.auth : "none");
    }
    if (who)
        core_identity(r, cfg, who);
}

/* ---- printing ------------------------------------------------------------------------- */

static const char *mark(ck_status st, bool ascii)
{
    static const char *const utf8[] = {"\xe2\x9c\x93", "!", "\xe2\x9c\x97"};
    static const char *const plain[] = {"ok  ", "warn", "FAIL"};
    return ascii ? plain[st] : utf8[st];
}

static const char *status_name(ck_status st)
{
    static const char *const names[] = {"ok", "warning", "failed"};
    return names[st];
}

static void print_lines(const ck_report *r, bool ascii, FILE *out, size_t *failed,
                        size_t *warned)
{
    for (size_t i = 0; i < r->n; i++) {
        const ck_line *ln = &r->lines[i];
        char *t = xasprintf("%s: %s%s%s", ln->what, ln->msg, ln->fix ? " - fix: " : "",
                            ln->fix ? ln->fix : "");
        char *clean = sanitize_str(t, ascii ? SAN_ASCII : 0);
        fprintf(out, "  %s %s\n", mark(ln->st, ascii), clean);
        free(clean);
        free(t);
        *failed += ln->st == CK_FAIL;
        *warned += ln->st == CK_WARN;
    }
}

static int print_text(const ck_list *l, bool ascii, const char *config_path, FILE *out)
{
    size_t failed = 0, warned = 0;
    char *cp = sanitize_str(config_path, ascii ? SAN_ASCII : 0);
    fprintf(out, "config %s\n", cp);
    free(cp);
    print_lines(&l->global, ascii, out, &failed, &warned);
    for (size_t i = 0; i < l->n; i++) {
        char *name = sanitize_str(l->items[i]->system, ascii ? SAN_ASCII : 0);
        char *prof = sanitize_str(l->items[i]->profile, ascii ? SAN_ASCII : 0);
        fprintf(out, "system %s (profile %s)\n", name, prof);
        free(name);
        free(prof);
        print_lines(l->items[i], ascii, out, &failed, &warned);
    }
    fprintf(out, "%zu failed, %zu warning%s\n", failed, warned, warned == 1 ? "" : "s");
    return failed ? RD_EXIT_PARTIAL : RD_EXIT_OK;
}

static cJSON *json_lines(const ck_report *r, size_t *failed, size_t *warned)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < r->n; i++) {
        const ck_line *ln = &r->lines[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "check", ln->what);
        cJSON_AddStringToObject(o, "status", status_name(ln->st));
        char *msg = sanitize_utf8(ln->msg, strlen(ln->msg));
        cJSON_AddStringToObject(o, "message", msg);
        free(msg);
        if (ln->fix)
            cJSON_AddStringToObject(o, "fix", ln->fix);
        else
            cJSON_AddNullToObject(o, "fix");
        cJSON_AddItemToArray(arr, o);
        *failed += ln->st == CK_FAIL;
        *warned += ln->st == CK_WARN;
    }
    return arr;
}

static int print_json(const ck_list *l, const char *config_path, FILE *out)
{
    size_t failed = 0, warned = 0;
    cJSON *root = cJSON_CreateObject();
    char *cp = sanitize_utf8(config_path, strlen(config_path));
    cJSON_AddStringToObject(root, "config", cp);
    free(cp);
    cJSON_AddItemToObject(root, "checks", json_lines(&l->global, &failed, &warned));
    cJSON *systems = cJSON_AddArrayToObject(root, "systems");
    for (size_t i = 0; i < l->n; i++) {
        cJSON *o = cJSON_CreateObject();
        char *name = sanitize_utf8(l->items[i]->system, strlen(l->items[i]->system));
        cJSON_AddStringToObject(o, "name", name);
        free(name);
        char *prof = sanitize_utf8(l->items[i]->profile, strlen(l->items[i]->profile));
        cJSON_AddStringToObject(o, "profile", prof);
        free(prof);
        cJSON_AddItemToObject(o, "checks", json_lines(l->items[i], &failed, &warned));
        cJSON_AddItemToArray(systems, o);
    }
    cJSON_AddNumberToObject(root, "failed", (double)failed);
    cJSON_AddNumberToObject(root, "warnings", (double)warned);
    cJSON_AddBoolToObject(root, "ok", failed == 0);
    char *txt = cJSON_Print(root);
    char *safe = json_text_safe(txt);
    fprintf(out, "%s\n", safe);
    free(safe);
    free(txt);
    cJSON_Delete(root);
    return failed ? RD_EXIT_PARTIAL : RD_EXIT_OK;
}

int ck_print(const ck_list *l, bool json, bool ascii, const char *config_path, FILE *out)
{
    int rc = json ? print_json(l, config_path ? config_path : "", out)
                  : print_text(l, ascii, config_path ? config_path : "", out);
    return fflush(out) == 0 ? rc : RD_EXIT_FAIL;
}
