#pragma once
/*
 * The INI-style configuration (SPEC §6): one [system "NAME"] section per system.
 * Parsing never stops at the first error: every problem goes into diags as
 * "file:line: message". Secrets stay references ("env:NAME", "file:PATH", "cmd:..."):
 * a literal secret is refused with a message saying how to reference it.
 * Durations accept "500ms", "2s", "5m", "2h", "1d" (bare number = seconds).
 */
#include <stdbool.h>
#include "diag.h"
#include "duration.h"   /* parse_duration, for the readers of the config's durations */
#include "fleet.h"
#include "health.h"

/* Redis TLS (rediss:// stores only). */
typedef struct rd_store_tls_cfg {
    char *cacert;            /* CA bundle (PEM); NULL = system store */
    char *cert;              /* client certificate chain (PEM) */
    char *key;               /* its private key (PEM); NULL = inside cert */
    bool insecure;           /* no verification (shown as a banner) */
} rd_store_tls_cfg;

/* PostgreSQL TLS: libpq's sslmode, sslrootcert, sslcert, sslkey (NULL = libpq's default). */
typedef struct rd_store_ssl_cfg {
    char *mode, *rootcert, *cert, *key;
} rd_store_ssl_cfg;

/* The job store (keys store, store_*, schema). */
typedef struct rd_store_cfg {
    char *url;               /* libpq conninfo/URI, redis[s]://host:port/db, redis+unix:///path,
                                or a secret ref (env:/file:/cmd:) giving one of those */
    char *user;              /* Redis: AUTH user (ACL); NULL = password-only AUTH */
    char *password;          /* secret ref; Redis: AUTH password */
    char *schema;            /* PostgreSQL schema (search_path); NULL = the profile's */
    rd_store_tls_cfg tls;    /* Redis */
    rd_store_ssl_cfg ssl;    /* PostgreSQL */
    bool push;               /* LISTEN where the store notifies (default true) */
    double push_min_interval_s; /* at most one push-triggered refresh this often; default 0.25 */
} rd_store_cfg;

/* The RabbitMQ management API (keys broker, broker_*, dlq, queues). */
typedef struct rd_broker_cfg {
    char *url;               /* management base URL */
    char *user;
    char *password;          /* secret ref */
    char *vhost;             /* default "/" */
    char *dlq;               /* comma-separated names/globs */
    char *queues;            /* comma-separated globs; NULL = all */
} rd_broker_cfg;

/* Amazon SQS (alakai; keys sqs_*, aws_profile). */
typedef struct rd_sqs_cfg {
    char *queue_url;         /* comma-separated SQS queue URLs */
    char *region;            /* NULL = from the URL host, the profile, AWS_REGION */
    char *endpoint;          /* request endpoint override (emulator, VPC endpoint) */
    char *dlq;               /* comma-separated DLQ URLs or names; default RedrivePolicy */
    char *aws_profile;       /* NULL = AWS_PROFILE or "default" */
} rd_sqs_cfg;

/* The core API and how to authenticate to it (keys core, auth, token, ...). */
typedef struct rd_core_cfg {
    char *url;               /* core API base URL */
    char *auth;              /* bearer | token-command | jwt-login | api-key | dev-user | none */
    char *token;             /* secret ref */
    char *token_command;
    char *login;
    char *password;          /* secret ref (cmd:/env:/file:) or NULL → prompt */
    char *api_key_header;    /* default X-API-Key */
    char *dev_user;
    double probe_s;          /* GET /auth/me to show the core's state, default 30, 0 = off */
} rd_core_cfg;

/* HTTPS to the core API, the broker, SQS and worker /health URLs (keys cacert, insecure). */
typedef struct rd_http_cfg {
    char *cacert;            /* CA file */
    bool insecure;           /* plain http:// with credentials to a remote host */
} rd_http_cfg;

/* How the terminal UI looks and asks (keys banner, theme, ..., confirm_quit). */
typedef struct rd_ui_cfg {
    char *banner;            /* e.g. PROD */
    char *theme;
    char *keymap;
    char *clipboard;         /* "osc52": copy through the terminal (opt-in); NULL/"off": overlay */
    int page_size;           /* executions per page, default 100 */
    int confirm_over;        /* bulk actions above this many items: type the count, default 10 */
    bool confirm_quit;       /* q on the top view asks before quitting, default true */
} rd_ui_cfg;

/* Alakai's semantics and its store's sweep (keys prefix, max_retries, orphan_after,
 * sweep_budget). */
typedef struct rd_alakai_cfg {
    char *prefix;            /* key prefix, default alakai-executions */
    int max_retries;         /* MAX_RETRIES, default 1 */
    double orphan_after_s;   /* default 7200 */
    double sweep_budget;     /* Redis sweep: share of one server core, default 0.25 (25 %);
                                0 = unbudgeted (as fast as the server allows) */
} rd_alakai_cfg;

typedef struct rd_system_cfg {
    char *name;
    int line;                /* line of the section header */
    char *profile;           /* attune | tasker | alakai | openagents | path */
    rd_store_cfg store;
    rd_broker_cfg broker;
    rd_sqs_cfg sqs;
    rd_core_cfg core;
    rd_http_cfg http;
    rd_ui_cfg ui;
    rd_alakai_cfg alakai;
    char *workers;           /* tasker: comma-separated /health URLs */
    char *journal_syslog;    /* syslog socket for a copy of each journal line; NULL = off
                              * (config: yes = /dev/log, no, or a socket path) */
    bool read_only;
    bool local;              /* explicitly a local system (dev-user allowed) */
    double poll_s;           /* default 2 */
    double rate_limit;       /* bulk actions per second, default 5 */
    int batch_concurrency;   /* a batch's requests in flight at most, 1..64, default 8 */
    double batch_max_age_s;  /* an older batch record resumes only with --force; 24 h */
    int batch_canary;        /* a batch sends this many first and waits for their outcome;
                              * 0: no canary; -1 (not set): none on the CLI, the console
                              * offers 10 for a set over 100 */
    double batch_canary_wait_s;   /* how long the canary's outcome is waited for; 5 min */
    double batch_max_refail; /* the share failing again (0..1) above which the canary and
                              * the breaker pause a batch; default 0.5 */
    double execution_timeout_s; /* longest an execution may run (drain cockpit); 0 = the profile's */
    rd_health_cfg health;    /* heartbeat_max_age etc. */
    rd_fleet_cfg fleet;      /* the fleet level's thresholds: fail_rate_warn etc. */
    /* where the section came from, for messages about a value that fails at run time
       (a cmd: secret that worked at start): config_key_where() */
    char *file;
    int *key_lines;          /* per known key, 0 = not set; owned */
} rd_system_cfg;

typedef struct rd_config {
    char *path;
    rd_system_cfg *systems;
    size_t n;
} rd_config;

/* Parse text (named `path` in messages). Returns false when any error was found;
 * systems that parsed cleanly are still in out. */
bool config_parse(const char *path, const char *text, rd_config *out, rd_diags *d);
/* The same on text[0..len): a NUL byte inside is an error ("file:line: NUL byte"). */
bool config_parse_len(const char *path, const char *text, size_t len, rd_config *out,
                      rd_diags *d);
/* Reads and parses the file (config_file.c). Trusted like OpenSSH trusts its own: a file
 * that is not a regular file, is owned by someone other than the user or root, or is
 * writable by group or others is refused before anything in it is used (false, no
 * systems, one diagnostic). A readable-by-others file holding credentials written in it
 * gets a "warning: " diagnostic (true: it is still used). */
bool config_load(const char *path, rd_config *out, rd_diags *d);
void config_free(rd_config *c);
/* "FILE:LINE: KEY" for a key of the system (the section's line when the key is not set;
 * just KEY when the system was not read from a file): the lead of a run-time message
 * such as "FILE:12: token_command: command exited with status 3". */
void config_key_where(const rd_system_cfg *c, const char *key, char *out, size_t cap);
/* $XDG_CONFIG_HOME/redrive/config or ~/.config/redrive/config (allocated). */
char *config_default_path(void);
rd_system_cfg *config_find(rd_config *c, const char *name);   /* NULL name → first */
/* " (did you mean attune1?)": the systems of c closest to name (suggest.h), or "". */
const char *config_suggest_system(const rd_config *c, const char *name, char *buf, size_t cap);

bool parse_bool(const char *s, bool *out);
/* true when s is a secret reference (env:/file:/cmd:). */
bool secret_is_ref(const char *s);
/* A literal libpq conninfo or URI holding a password ("password=" keyword, URI query
 * parameter, or user:password@ in the authority). */
bool conninfo_has_password(const char *ci);
