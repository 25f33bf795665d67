#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "datafile.h"
#include "fsperm.h"
#include "hostrule.h"
#include "ini.h"
#include "suggest.h"
#include "textutil.h"
#include "xalloc.h"

typedef enum { K_STR, K_SECRET, K_BOOL, K_DUR, K_INT, K_LONG, K_DOUBLE, K_RATE, K_NUM, K_PCT } key_type;

typedef struct key_def {
    const char *name;
    key_type type;
    size_t off;
} key_def;

/* The one place where a key of the file maps to a field: offsetof accepts the nested
 * member (store.tls.cacert), so every sub-struct's field is reached the same way. */
#define F(m) offsetof(rd_system_cfg, m)
static const key_def keys[] = {
    { "profile", K_STR, F(profile) },
    /* store: rd_store_cfg */
    { "store", K_STR, F(store.url) },
    { "store_user", K_STR, F(store.user) },
    { "store_password", K_SECRET, F(store.password) },
    { "schema", K_STR, F(store.schema) },
    { "store_cacert", K_STR, F(store.tls.cacert) },
    { "store_cert", K_STR, F(store.tls.cert) },
    { "store_key", K_STR, F(store.tls.key) },
    { "store_insecure", K_BOOL, F(store.tls.insecure) },
    { "store_sslmode", K_STR, F(store.ssl.mode) },
    { "store_sslrootcert", K_STR, F(store.ssl.rootcert) },
    { "store_sslcert", K_STR, F(store.ssl.cert) },
    { "store_sslkey", K_STR, F(store.ssl.key) },
    /* broker: rd_broker_cfg */
    { "broker", K_STR, F(broker.url) },
    { "broker_user", K_STR, F(broker.user) },
    { "broker_password", K_SECRET, F(broker.password) },
    { "broker_vhost", K_STR, F(broker.vhost) },
    { "dlq", K_STR, F(broker.dlq) },
    { "queues", K_STR, F(broker.queues) },
    /* sqs: rd_sqs_cfg */
    { "sqs_queue_url", K_STR, F(sqs.queue_url) },
    { "sqs_region", K_STR, F(sqs.region) },
    { "sqs_endpoint", K_STR, F(sqs.endpoint) },
    { "sqs_dlq", K_STR, F(sqs.dlq) },
    { "aws_profile", K_STR, F(sqs.aws_profile) },
    /* core: rd_core_cfg */
    { "core", K_STR, F(core.url) },
    { "auth", K_STR, F(core.auth) },
    { "token", K_SECRET, F(core.token) },
    { "token_command", K_STR, F(core.token_command) },
    { "login", K_STR, F(core.login) },
    { "password", K_SECRET, F(core.password) },
    { "api_key_header", K_STR, F(core.api_key_header) },
    { "dev_user", K_STR, F(core.dev_user) },
    { "core_probe", K_DUR, F(core.probe_s) },
    /* http: rd_http_cfg */
    { "cacert", K_STR, F(http.cacert) },
    { "insecure", K_BOOL, F(http.insecure) },
    /* ui: rd_ui_cfg */
    { "banner", K_STR, F(ui.banner) },
    { "theme", K_STR, F(ui.theme) },
    { "keymap", K_STR, F(ui.keymap) },
    { "clipboard", K_STR, F(ui.clipboard) },
    { "page_size", K_INT, F(ui.page_size) },
    { "confirm_over", K_INT, F(ui.confirm_over) },
    { "confirm_quit", K_BOOL, F(ui.confirm_quit) },
    /* alakai: rd_alakai_cfg */
    { "prefix", K_STR, F(alakai.prefix) },
    { "max_retries", K_INT, F(alakai.max_retries) },
    { "orphan_after", K_DUR, F(alakai.orphan_after_s) },
    { "sweep_budget", K_PCT, F(alakai.sweep_budget) },
    /* the system as a whole */
    { "workers", K_STR, F(workers) },
    { "journal_syslog", K_STR, F(journal_syslog) },
    { "read_only", K_BOOL, F(read_only) },
    { "local", K_BOOL, F(local) },
    { "poll", K_DUR, F(poll_s) },
    { "push", K_BOOL, F(store.push) },
    { "push_min_interval", K_DUR, F(store.push_min_interval_s) },
    { "rate_limit", K_DOUBLE, F(rate_limit) },
    { "batch_concurrency", K_INT, F(batch_concurrency) },
    { "batch_max_age", K_DUR, F(batch_max_age_s) },
    { "batch_canary", K_INT, F(batch_canary) },
    { "batch_canary_wait", K_DUR, F(batch_canary_wait_s) },
    { "batch_max_refail", K_PCT, F(batch_max_refail) },
    { "execution_timeout", K_DUR, F(execution_timeout_s) },
    /* health: rd_health_cfg */
    { "heartbeat_max_age", K_DUR, F(health.heartbeat_max_age) },
    { "failures_degraded", K_INT, F(health.failures_degraded) },
    { "failures_unhealthy", K_INT, F(health.failures_unhealthy) },
    { "depth_degraded", K_LONG, F(health.depth_degraded) },
    { "depth_unhealthy", K_LONG, F(health.depth_unhealthy) },
    { "rate_degraded", K_RATE, F(health.rate_degraded) },
    { "rate_unhealthy", K_RATE, F(health.rate_unhealthy) },
    /* fleet: rd_fleet_cfg */
    { "fail_rate_warn", K_NUM, F(fleet.fail_rate_warn) },
    { "fail_rate_crit", K_NUM, F(fleet.fail_rate_crit) },
    { "fail_rate_rise", K_NUM, F(fleet.fail_rate_rise) },
    { "dlq_warn", K_LONG, F(fleet.dlq_warn) },
    { "dlq_crit", K_LONG, F(fleet.dlq_crit) },
    { "unhealthy_workers_crit", K_LONG, F(fleet.unhealthy_workers_crit) },
    { "dlq_horizon_warn", K_DUR, F(fleet.dlq_horizon_warn) },
    { "dlq_horizon_crit", K_DUR, F(fleet.dlq_horizon_crit) },
};
#undef F
#define N_KEYS (sizeof keys / sizeof *keys)

static const char *const auth_modes[] = {
    "bearer", "token-command", "jwt-login", "api-key", "dev-user", "none",
};

/* Per-section parse state: where each key was set (0 = not set). */
typedef struct sect {
    rd_system_cfg cfg;
    int key_line[N_KEYS];
    bool drop;                /* duplicate name: checked, then discarded */
    int errs;                 /* errors attributed to this section */
} sect;

typedef struct parser {
    ini_reader r;             /* the tokenizer; all messages go through it */
    sect *s;
    size_t n, cap;
    bool in_section;          /* false before the first section or after a bad one */
    size_t cur;               /* section errors are attributed to; SIZE_MAX = none */
} parser;

static void err(parser *p, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void err(parser *p, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ini_verror(&p->r, line, fmt, ap);
    va_end(ap);
    if (p->cur < p->n)
        p->s[p->cur].errs++;
}

bool parse_bool(const char *s, bool *out)
{
    static const char *const t[] = { "true", "yes", "on", "1" };
    static const char *const f[] = { "false", "no", "off", "0" };
    if (!s)
        return false;
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(s, t[i]) == 0) {
            *out = true;
            return true;
        }
        if (strcasecmp(s, f[i]) == 0) {
            *out = false;
            return true;
        }
    }
    return false;
}

bool secret_is_ref(const char *s)
{
    if (!s)
        return false;
    return (strncmp(s, "env:", 4) == 0 && s[4]) || (strncmp(s, "file:", 5) == 0 && s[5]) ||
           (strncmp(s, "cmd:", 4) == 0 && s[4]);
}

static bool parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static bool parse_double(const char *s, double lo, double hi, double *out)
{
    if (!(isdigit((unsigned char)*s) || *s == '.'))
        return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* "25%" or "25" (a percentage, 0 to 100) as a share: 0.25. */
static bool parse_percent(const char *s, double *out)
{
    char buf[32];
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof buf)
        return false;
    memcpy(buf, s, n + 1);
    if (buf[n - 1] == '%')
        buf[--n] = '\0';
    while (n && buf[n - 1] == ' ')
        buf[--n] = '\0';
    double v;
    if (!n || !parse_double(buf, 0, 100, &v))
        return false;
    *out = v / 100;
    return true;
}

static void system_defaults(rd_system_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->poll_s = 2;
    c->store.push = true;
    c->store.push_min_interval_s = 0.25;
    c->core.probe_s = 30;
    c->alakai.max_retries = 1;
    c->alakai.prefix = xstrdup("alakai-executions");
    c->alakai.orphan_after_s = 7200;
    c->rate_limit = 5;
    c->batch_concurrency = 8;
    c->batch_max_age_s = 86400;
    c->batch_canary = -1;            /* not set: the console offers its default */
    c->batch_canary_wait_s = 300;
    c->batch_max_refail = 0.5;
    c->ui.page_size = 100;
    c->ui.confirm_over = 10;
    c->ui.confirm_quit = true;
    c->core.api_key_header = xstrdup("X-API-Key");
    c->broker.vhost = xstrdup("/");
    c->core.auth = xstrdup("none");
    c->alakai.sweep_budget = 0.25;
    health_defaults(&c->health);
    fleet_cfg_defaults(&c->fleet);
}

static void system_free(rd_system_cfg *c)
{
    for (size_t i = 0; i < N_KEYS; i++)
        if (keys[i].type == K_STR || keys[i].type == K_SECRET)
            free(*(char **)(void *)((char *)c + keys[i].off));
    free(c->name);
    free(c->file);
    free(c->key_lines);
    memset(c, 0, sizeof *c);
}

static bool set_typed(const key_def *k, void *field, const char *v)
{
    long l;
    switch (k->type) {
    case K_BOOL: return parse_bool(v, field);
    case K_DUR: return parse_duration(v, field);
    case K_DOUBLE: return parse_double(v, 0.001, 1e6, field);
    case K_RATE: return parse_double(v, 0, 1, field);
    case K_NUM: return parse_double(v, 0, 1e9, field);
    case K_PCT: return parse_percent(v, field);
    case K_INT:
        if (!parse_long(v, 0, INT_MAX, &l))
            return false;
        *(int *)field = (int)l;
        return true;
    case K_LONG: return parse_long(v, 0, LONG_MAX, field);
    case K_STR:
    case K_SECRET: break;
    }
    return false;
}

static const char *type_help(key_type t)
{
    switch (t) {
    case K_BOOL: return "bad boolean (use true/false, yes/no, on/off)";
    case K_DUR: return "bad duration (use e.g. 500ms, 2s, 5m, 2h, 1d)";
    case K_DOUBLE: return "bad number (expected a positive number)";
    case K_RATE: return "bad rate (expected a number between 0 and 1)";
    case K_NUM: return "bad number (expected a number, 0 or more)";
    case K_PCT: return "bad share (expected a percentage from 0 to 100, e.g. 25%)";
    case K_INT:
    case K_LONG: return "bad integer (expected a non-negative whole number)";
    case K_STR:
    case K_SECRET: break;
    }
    return "bad value";
}

static void set_key(parser *p, sect *s, const char *key, const char *val, int line)
{
    size_t i = 0;
    while (i < N_KEYS && strcmp(keys[i].name, key) != 0)
        i++;
    if (i == N_KEYS) {
        suggest sg;
        char hint[200];
        suggest_init(&sg, key);
        for (size_t k = 0; k < N_KEYS; k++)
            suggest_add(&sg, keys[k].name);
        err(p, line, "unknown key '%s'%s", key, suggest_text(&sg, hint, sizeof hint));
        return;
    }
    const key_def *k = &keys[i];
    if (s->key_line[i])
        err(p, line, "duplicate key '%s' (first set on line %d)", key, s->key_line[i]);
    s->key_line[i] = line;
    void *field = (char *)&s->cfg + k->off;
    if (k->type == K_SECRET && *val && !secret_is_ref(val)) {
        err(p, line, "literal secret in '%s' refused: reference it as env:NAME, "
            "file:PATH or cmd:COMMAND", key);
        return;
    }
    if (k->type == K_STR || k->type == K_SECRET) {
        char **dst = field;
        free(*dst);
        *dst = *val ? xstrdup(val) : NULL;
        return;
    }
    if (!set_typed(k, field, val))
        err(p, line, "%s for '%s': '%s'", type_help(k->type), key, val);
}

static int key_line(const sect *s, const char *name)
{
    for (size_t i = 0; i < N_KEYS; i++)
        if (strcmp(keys[i].name, name) == 0)
            return s->key_line[i] ? s->key_line[i] : s->cfg.line;
    return s->cfg.line;
}

/* Checks a URL of `key`: http(s), a host, no userinfo; plain http:// only to loopback
 * (or with insecure) when the URL carries credentials. The value is never echoed: only the
 * host of a plain-http URL, which holds nothing but host-name characters. */
static void check_url(parser *p, const sect *s, const char *key, const char *url, bool cred)
{
    char host[256];
    urlrule_verdict v = urlrule_check(url, !cred || s->cfg.http.insecure, host, sizeof host);
    if (v == URLR_PLAIN_REMOTE)
        err(p, key_line(s, key), "'%s' uses plain http:// to '%s', which is not a loopback "
            "host (localhost, 127.0.0.0/8, ::1): use https:// (or set insecure = yes, shown "
            "in the banner)", key, host);
    else if (v != URLR_OK)
        err(p, key_line(s, key), "'%s' %s", key, urlrule_text(v));
}

/* Every URL of a list (text_split_list: at commas and blanks; sqs_queue_url, workers); with
 * names_ok, items without "://" are names, not URLs (sqs_dlq). */
static void check_url_list(parser *p, const sect *s, const char *key, const char *list,
                           bool cred, bool names_ok)
{
    size_t n;
    text_span *sp = text_split_all(list, TEXT_LIST_WORDS, &n);
    for (size_t i = 0; i < n; i++) {
        char *one = xstrndup(sp[i].s, sp[i].len);
        if (!(names_ok && !strstr(one, "://")))
            check_url(p, s, key, one, cred);
        free(one);
    }
    free(sp);
}

static void check_auth(parser *p, const sect *s)
{
    const rd_system_cfg *c = &s->cfg;
    int line = key_line(s, "auth");
    const char *a = c->core.auth ? c->core.auth : "none";
    size_t i = 0;
    while (i < sizeof auth_modes / sizeof *auth_modes && strcmp(auth_modes[i], a) != 0)
        i++;
    if (i == sizeof auth_modes / sizeof *auth_modes) {
        err(p, line, "unknown auth mode '%s' (bearer, token-command, jwt-login, api-key, "
            "dev-user or none)", a);
        return;
    }
    if ((!strcmp(a, "bearer") || !strcmp(a, "api-key")) && !c->core.token)
        err(p, line, "auth = %s needs 'token' (env:NAME, file:PATH or cmd:COMMAND)", a);
    if (!strcmp(a, "token-command") && !c->core.token_command)
        err(p, line, "auth = token-command needs 'token_command'");
    if (!strcmp(a, "jwt-login") && !c->core.login)
        err(p, line, "auth = jwt-login needs 'login'");
    if (!strcmp(a, "dev-user")) {
        char host[256];
        if (!c->core.dev_user)
            err(p, line, "auth = dev-user needs 'dev_user'");
        if (!c->core.url || urlrule_check(c->core.url, true, host, sizeof host) != URLR_OK ||
            !host_is_loopback(host))
            err(p, line, "auth = dev-user is only allowed with a loopback core URL");
        else if (!c->local)
            err(p, line, "auth = dev-user needs the system marked 'local = true'");
    }
    if (strcmp(a, "none") != 0 && !c->core.url)
        err(p, line, "auth = %s set but no 'core' URL", a);
}

static bool is_redis_url(const char *u)
{
    return strncmp(u, "redis://", 8) == 0 || strncmp(u, "rediss://", 9) == 0 ||
           strncmp(u, "redis+unix://", 13) == 0 || strncmp(u, "unix://", 7) == 0;
}

/* A Redis store written in the file: no credentials in it (a store that is itself a
 * secret reference may carry them), TLS settings only with rediss://. */
static void check_redis_store(parser *p, const sect *s)
{
    const rd_system_cfg *c = &s->cfg;
    static const char *const tls_keys[] = { "store_cacert", "store_cert", "store_key" };
    const char *tls_vals[] = { c->store.tls.cacert, c->store.tls.cert, c->store.tls.key };
    bool ref = secret_is_ref(c->store.url), redis = !ref && is_redis_url(c->store.url);
    if (redis && strchr(c->store.url, '@'))
        err(p, key_line(s, "store"), "credentials in the store URL are not supported: set "
            "store_user and store_password = env:NAME|file:PATH|cmd:COMMAND, or make the "
            "whole store a reference (store = env:REDIS_URL)");
    bool tls = strncmp(c->store.url, "rediss://", 9) == 0;
    if (redis && !tls) {
        for (size_t i = 0; i < 3; i++)
            if (tls_vals[i])
                err(p, key_line(s, tls_keys[i]), "'%s' needs a rediss:// store", tls_keys[i]);
        if (c->store.tls.insecure)
            err(p, key_line(s, "store_insecure"), "'store_insecure' needs a rediss:// store");
    }
    if (c->store.tls.key && !c->store.tls.cert)
        err(p, key_line(s, "store_key"), "'store_key' needs 'store_cert'");
}

/* ---- PostgreSQL keys ---- */

/* A literal libpq conninfo or URI holding a password ("password=" keyword, URI query
 * parameter, or user:password@ in the authority). */
bool conninfo_has_password(const char *ci)
{
    bool uri = strncasecmp(ci, "postgresql://", 13) == 0 || strncasecmp(ci, "postgres://", 11) == 0;
    if (uri) {
        const char *a = strstr(ci, "://") + 3;
        const char *end = a + strcspn(a, "/?#");
        const char *at = NULL;
        for (const char *q = a; q < end; q++)
            if (*q == '@')
                at = q;
        if (at && memchr(a, ':', (size_t)(at - a)))
            return true;
        const char *qs = strchr(end, '?');
        for (const char *k = qs; k; k = strchr(k + 1, '&'))
            if (strncasecmp(k + 1, "password=", 9) == 0)
                return true;
        return false;
    }
    for (const char *k = ci; (k = strstr(k, "password")) != NULL; k += 8) {
        const char *e = k + 8;
        while (*e == ' ' || *e == '\t')
            e++;
        if (*e == '=' && (k == ci || k[-1] == ' ' || k[-1] == '\t'))
            return true;
    }
    return false;
}

/* A schema name: 1..63 bytes of letters, digits, '_', '$', '-' or non-ASCII (UTF-8). It is
 * quoted by the server (quote_ident) when it is applied. */
static bool schema_name_ok(const char *v)
{
    size_t n = strlen(v);
    if (n == 0 || n > 63)
        return false;
    for (const unsigned char *c = (const unsigned char *)v; *c; c++)
        if (!(isalnum(*c) || *c == '_' || *c == '$' || *c == '-' || *c >= 0x80))
            return false;
    return true;
}

static void check_pg(parser *p, const sect *s)
{
    static const char *const modes[] = { "disable", "allow", "prefer", "require", "verify-ca",
                                         "verify-full", NULL };
    const rd_system_cfg *c = &s->cfg;
    bool redis = c->store.url && is_redis_url(c->store.url);
    if (c->store.url && !redis && !secret_is_ref(c->store.url) && conninfo_has_password(c->store.url))
        err(p, key_line(s, "store"), "a password in 'store' is refused: use store_password = "
            "env:NAME|file:PATH|cmd:COMMAND, or give the whole store as a reference "
            "(store = env:DATABASE_URL)");
    if (c->store.ssl.mode) {
        size_t i = 0;
        while (modes[i] && strcmp(modes[i], c->store.ssl.mode) != 0)
            i++;
        if (!modes[i])
            err(p, key_line(s, "store_sslmode"), "unknown store_sslmode '%s' (disable, allow, "
                "prefer, require, verify-ca or verify-full)", c->store.ssl.mode);
    }
    static const char *const pg_only[] = { "store_sslmode", "store_sslrootcert", "store_sslcert",
                                           "store_sslkey", "schema", NULL };
    for (size_t i = 0; redis && pg_only[i]; i++)
        for (size_t k = 0; k < N_KEYS; k++)
            if (strcmp(keys[k].name, pg_only[i]) == 0 && s->key_line[k])
                err(p, s->key_line[k], "'%s' applies to a PostgreSQL store only", pg_only[i]);
    if (c->store.schema && !schema_name_ok(c->store.schema))
        err(p, key_line(s, "schema"), "bad schema name '%s' (1-63 letters, digits, '_', '$' "
            "or '-')", c->store.schema);
}

/* journal_syslog = yes | no | /socket/path, kept as the socket path (NULL: off). A path
 * must be a socket we trust (fsperm_socket_ok); a missing one is fine (the syslog may
 * start later: checked again at each send). */
static void check_syslog(parser *p, sect *s)
{
    rd_system_cfg *c = &s->cfg;
    bool on;
    char why[512];
    if (c->journal_syslog && c->journal_syslog[0] == '/' &&
        !fsperm_socket_ok(c->journal_syslog, why, sizeof why) && errno != ENOENT)
        err(p, key_line(s, "journal_syslog"), "journal_syslog refused: %s", why);
    if (!c->journal_syslog || c->journal_syslog[0] == '/')
        return;
    if (parse_bool(c->journal_syslog, &on)) {
        free(c->journal_syslog);
        c->journal_syslog = on ? xstrdup("/dev/log") : NULL;
        return;
    }
    err(p, key_line(s, "journal_syslog"), "journal_syslog must be yes, no or the absolute path of a "
        "syslog socket, not '%s'", c->journal_syslog);
}

static void section_validate(parser *p, sect *s)
{
    const rd_system_cfg *c = &s->cfg;
    if (!c->profile)
        err(p, c->line, "system \"%s\": missing required key 'profile'", c->name);
    if (!c->store.url)
        err(p, c->line, "system \"%s\": missing required key 'store'", c->name);
    else
        check_redis_store(p, s);
    if (c->core.url)
        check_url(p, s, "core", c->core.url, true);
    if (c->broker.url)
        check_url(p, s, "broker", c->broker.url, true);
    if (c->sqs.endpoint)
        check_url(p, s, "sqs_endpoint", c->sqs.endpoint, true);
    check_url_list(p, s, "sqs_queue_url", c->sqs.queue_url, true, false);
    check_url_list(p, s, "sqs_dlq", c->sqs.dlq, true, true);
    check_url_list(p, s, "workers", c->workers, false, false);   /* /health: no credential */
    check_auth(p, s);
    check_pg(p, s);
    check_syslog(p, s);
    if (c->poll_s < 0.1)
        err(p, key_line(s, "poll"), "poll must be at least 100ms");
    if (c->store.push_min_interval_s < 0 || c->store.push_min_interval_s > 60)
        err(p, key_line(s, "push_min_interval"), "push_min_interval must be between 0 and 60s");
    if (c->batch_concurrency < 1 || c->batch_concurrency > 64)
        err(p, key_line(s, "batch_concurrency"),
            "batch_concurrency must be from 1 to 64 (requests in flight at once)");
    if (c->batch_max_age_s <= 0)
        err(p, key_line(s, "batch_max_age"), "batch_max_age must be more than 0");
    if (c->batch_canary_wait_s <= 0)
        err(p, key_line(s, "batch_canary_wait"), "batch_canary_wait must be more than 0");
    if (c->ui.page_size < 1)
        err(p, key_line(s, "page_size"), "page_size must be at least 1");
    if (c->alakai.sweep_budget > 0 && c->alakai.sweep_budget < 0.01)
        err(p, key_line(s, "sweep_budget"), "sweep_budget must be 0 (unbudgeted) or at least 1%%");
    if (c->ui.confirm_over < 0)
        err(p, key_line(s, "confirm_over"), "confirm_over must be 0 or more");
    if (c->ui.clipboard && strcmp(c->ui.clipboard, "osc52") != 0 && strcmp(c->ui.clipboard, "off") != 0)
        err(p, key_line(s, "clipboard"), "clipboard must be 'osc52' or 'off', not '%s'", c->ui.clipboard);
    if (c->health.failures_degraded > c->health.failures_unhealthy ||
        c->health.depth_degraded > c->health.depth_unhealthy ||
        c->health.rate_degraded > c->health.rate_unhealthy)
        err(p, c->line, "system \"%s\": a degraded threshold is above its unhealthy one",
            c->name);
    const rd_fleet_cfg *f = &c->fleet;
    if (f->fail_rate_crit > 0 && f->fail_rate_warn > f->fail_rate_crit)
        err(p, key_line(s, "fail_rate_warn"), "fail_rate_warn (%g) is above fail_rate_crit (%g)",
            f->fail_rate_warn, f->fail_rate_crit);
    if (f->dlq_crit > 0 && f->dlq_warn > f->dlq_crit)
        err(p, key_line(s, "dlq_warn"), "dlq_warn (%ld) is above dlq_crit (%ld)", f->dlq_warn,
            f->dlq_crit);
    /* a horizon is judged below its thresholds: the critical one is the shorter */
    if (f->dlq_horizon_warn > 0 && f->dlq_horizon_crit > f->dlq_horizon_warn)
        err(p, key_line(s, "dlq_horizon_crit"), "dlq_horizon_crit (%gs) is above dlq_horizon_warn (%gs)",
            f->dlq_horizon_crit, f->dlq_horizon_warn);
}

static void unquote(char *v)
{
    size_t n = strlen(v);
    if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
        memmove(v, v + 1, n - 2);
        v[n - 2] = '\0';
    }
}

/* [system "NAME"]: l->name is "system", l->value the quoted name. */
static void section_open(parser *p, const ini_line *l)
{
    if (strcmp(l->name, "system") != 0 || !*l->value) {
        err(p, l->line, "unknown section [%s] (expected [system \"NAME\"])", l->text);
        return;
    }
    char *name = l->value;
    size_t n = strlen(name);
    if (n < 3 || name[0] != '"' || name[n - 1] != '"' || memchr(name + 1, '"', n - 2)) {
        err(p, l->line, "bad system name (expected [system \"NAME\"])");
        return;
    }
    name[n - 1] = '\0';
    name++;
    xgrow(&p->s, &p->cap, p->n + 1, sizeof *p->s);
    sect *s = &p->s[p->n++];
    memset(s, 0, sizeof *s);
    system_defaults(&s->cfg);
    s->cfg.name = xstrdup(name);
    s->cfg.line = l->line;
    p->cur = p->n - 1;
    for (size_t i = 0; i + 1 < p->n; i++)
        if (!p->s[i].drop && strcmp(p->s[i].cfg.name, name) == 0) {
            err(p, l->line, "duplicate system \"%s\" (first defined on line %d)", name,
                p->s[i].cfg.line);
            s->drop = true;
        }
    p->in_section = true;
}

static void parse_line(parser *p, const ini_line *l)
{
    switch (l->kind) {
    case INI_BAD:   /* reported by the reader; the section is incomplete */
        if (p->cur < p->n)
            p->s[p->cur].errs++;
        return;
    case INI_SECTION:
        p->in_section = false;
        p->cur = SIZE_MAX;
        if (l->name)
            section_open(p, l);
        return;
    case INI_TEXT:
        err(p, l->line, "missing '=' (expected key = value)");
        return;
    case INI_RAW:
        return;   /* config never asks for raw lines */
    case INI_PAIR:
        break;
    }
    if (!p->n) {
        err(p, l->line, "key outside a [system \"NAME\"] section");
        return;
    }
    if (!p->in_section)
        return;   /* inside a bad section header: already reported */
    unquote(l->value);
    if (!*l->name) {
        err(p, l->line, "missing key before '='");
        return;
    }
    set_key(p, &p->s[p->n - 1], l->name, l->value, l->line);
}

static const ini_format config_format = {
    INI_SECTIONS | INI_COMMENTS, "[system \"NAME\"]",
};

bool config_parse_len(const char *path, const char *text, size_t len, rd_config *out,
                      rd_diags *d)
{
    parser p = { .cur = SIZE_MAX };
    memset(out, 0, sizeof *out);
    out->path = xstrdup(path ? path : "config");
    ini_open(&p.r, out->path, text, len, &config_format, d);
    ini_line l;
    while (ini_next(&p.r, &l))
        parse_line(&p, &l);
    ini_close(&p.r);
    out->systems = xcalloc(p.n ? p.n : 1, sizeof *out->systems);
    for (size_t i = 0; i < p.n; i++) {
        p.cur = i;
        section_validate(&p, &p.s[i]);
        if (p.s[i].drop || p.s[i].errs) {
            system_free(&p.s[i].cfg);
        } else {
            rd_system_cfg *c = &out->systems[out->n++];
            *c = p.s[i].cfg;
            c->file = xstrdup(out->path);
            c->key_lines = xcalloc(N_KEYS, sizeof *c->key_lines);
            memcpy(c->key_lines, p.s[i].key_line, sizeof p.s[i].key_line);
        }
    }
    free(p.s);
    return p.r.errors == 0;
}

bool config_parse(const char *path, const char *text, rd_config *out, rd_diags *d)
{
    return config_parse_len(path, text, text ? strlen(text) : 0, out, d);
}

void config_free(rd_config *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        system_free(&c->systems[i]);
    free(c->systems);
    free(c->path);
    memset(c, 0, sizeof *c);
}

void config_key_where(const rd_system_cfg *c, const char *key, char *out, size_t cap)
{
    int line = c ? c->line : 0;
    for (size_t i = 0; c && c->key_lines && i < N_KEYS; i++)
        if (strcmp(keys[i].name, key) == 0 && c->key_lines[i])
            line = c->key_lines[i];
    if (c && c->file && line > 0)
        snprintf(out, cap, "%s:%d: %s", c->file, line, key);
    else
        snprintf(out, cap, "%s", key);
}

char *config_default_path(void)
{
    return datafile_user_path("config");
}

const char *config_suggest_system(const rd_config *c, const char *name, char *buf, size_t cap)
{
    suggest s;
    suggest_init(&s, name);
    for (size_t i = 0; c && i < c->n; i++)
        suggest_add(&s, c->systems[i].name);
    return suggest_text(&s, buf, cap);
}

rd_system_cfg *config_find(rd_config *c, const char *name)
{
    if (!c || !c->n)
        return NULL;
    if (!name)
        return &c->systems[0];
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->systems[i].name, name) == 0)
            return &c->systems[i];
    return NULL;
}
