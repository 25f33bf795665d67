#include "config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "check_diags.h"

static const char good[] =
    "# redrive config\n"
    "[system \"attune-prod\"]\n"
    "profile = attune                  # attune | tasker\n"
    "store = postgresql://ops_ro@db.internal/attune\n"
    "broker = http://127.0.0.1:15672\n"
    "broker_user = monitoring\n"
    "broker_password = env:RABBIT_PASSWORD\n"
    "dlq = attune.dlx.queue\n"
    "queues = worker.*.executions\n"
    "core = https://attune.internal\n"
    "auth = jwt-login\n"
    "login = ops\n"
    "password = cmd:pass show attune/ops\n"
    "banner = \"PROD\"\n"
    "read_only = yes\n"
    "poll = 500ms\n"
    "heartbeat_max_age = 1m\n"
    "failures_degraded = 4\n"
    "depth_unhealthy = 200\n"
    "rate_degraded = 0.25\n"
    "theme = dark\n"
    "keymap = vi\n"
    "cacert = /etc/ssl/private-ca.pem\n"
    "page_size = 50\n"
    "rate_limit = 2.5\n"
    "\n"
    "; second system\n"
    "[system \"alakai-local\"]\n"
    "profile = ./profiles/custom.profile\n"
    "store = redis://127.0.0.1:6379/0\n"
    "core = http://localhost:8080\n"
    "auth = dev-user\n"
    "dev_user = alice\n"
    "local = true\n"
    "max_retries = 2\n"
    "orphan_after = 90m\n"
    "token_command = gcloud auth print-identity-token # trailing comment\n";

static void test_good(void)
{
    rd_config c;
    rd_diags d = { 0 };
    bool ok = config_parse("cfg", good, &c, &d);
    for (size_t i = 0; i < d.n; i++)
        fprintf(stderr, "unexpected: %s\n", d.msgs[i]);
    CHECK(ok);
    CHECK(d.n == 0);
    CHECK(c.n == 2);
    rd_system_cfg *s = config_find(&c, "attune-prod");
    CHECK(s != NULL);
    CHECK(config_find(&c, NULL) == s);
    CHECK(config_find(&c, "nope") == NULL);
    if (!s)
        goto out;
    CHECK(s->line == 2);
    CHECK_STR(s->profile, "attune");
    CHECK_STR(s->store.url, "postgresql://ops_ro@db.internal/attune");
    CHECK_STR(s->broker.password, "env:RABBIT_PASSWORD");
    CHECK_STR(s->core.password, "cmd:pass show attune/ops");
    CHECK_STR(s->ui.banner, "PROD");
    CHECK_STR(s->broker.vhost, "/");
    CHECK_STR(s->core.api_key_header, "X-API-Key");
    CHECK_STR(s->alakai.prefix, "alakai-executions");
    CHECK_STR(s->ui.theme, "dark");
    CHECK_STR(s->ui.keymap, "vi");
    CHECK_STR(s->http.cacert, "/etc/ssl/private-ca.pem");
    CHECK(s->read_only);
    CHECK(!s->http.insecure);
    CHECK_NEAR(s->poll_s, 0.5);
    CHECK_NEAR(s->health.heartbeat_max_age, 60);
    CHECK(s->health.failures_degraded == 4);
    CHECK(s->health.failures_unhealthy == 10);
    CHECK(s->health.depth_unhealthy == 200);
    CHECK(s->health.depth_degraded == 50);
    CHECK_NEAR(s->health.rate_degraded, 0.25);
    CHECK_NEAR(s->health.rate_unhealthy, 0.70);
    CHECK(s->ui.page_size == 50);
    CHECK_NEAR(s->rate_limit, 2.5);
    CHECK(s->alakai.max_retries == 1);
    CHECK_NEAR(s->alakai.orphan_after_s, 7200);
    rd_system_cfg *a = config_find(&c, "alakai-local");
    CHECK(a != NULL);
    if (a) {
        CHECK(a->alakai.max_retries == 2);
        CHECK_NEAR(a->alakai.orphan_after_s, 5400);
        CHECK_NEAR(a->poll_s, 2);
        CHECK_STR(a->core.token_command, "gcloud auth print-identity-token");
        CHECK_STR(a->core.dev_user, "alice");
        CHECK(a->local);
        CHECK(a->ui.page_size == 100);
        CHECK_NEAR(a->rate_limit, 5);
    }
out:
    config_free(&c);
    diags_free(&d);
}

static const char bad[] =
    "poll = 2s\n"                                          /* 1 outside a section */
    "[system \"a\"]\n"                                     /* 2 */
    "profile = attune\n"                                   /* 3 */
    "store = postgresql:///x\n"                            /* 4 */
    "colour = blue\n"                                      /* 5 unknown key */
    "poll = fast\n"                                        /* 6 bad duration */
    "read_only = maybe\n"                                  /* 7 bad bool */
    "this line has no equals\n"                            /* 8 missing = */
    "token = hunter2\n"                                    /* 9 literal secret */
    "auth = magic\n"                                       /* 10 unknown auth */
    "[system \"a\"]\n"                                     /* 11 duplicate system */
    "profile = tasker\n"                                   /* 12 */
    "store = postgresql:///y\n"                            /* 13 */
    "[system \"b\"]\n"                                     /* 14 missing profile/store */
    "broker_password = s3cret\n"                           /* 15 literal secret */
    "password = letmein\n"                                 /* 16 literal secret */
    "[system \"c\"]\n"                                     /* 17 */
    "profile = alakai\n"                                   /* 18 */
    "store = redis://127.0.0.1:6379/0\n"                   /* 19 */
    "core = http://10.1.2.3:8080\n"                        /* 20 http non-loopback */
    "auth = dev-user\n"                                    /* 21 dev-user non-loopback */
    "dev_user = bob\n"                                     /* 22 */
    "max_retries = -1\n"                                   /* 23 bad integer */
    "rate_degraded = 1.5\n"                                /* 24 bad rate */
    "orphan_after = 2 hours\n"                             /* 25 bad duration */
    "[section]\n"                                          /* 26 unknown section */
    "x = y\n"                                              /* 27 ignored (bad section) */
    "[system \"d\"]\n"                                     /* 28 */
    "profile = attune\n"                                   /* 29 */
    "store = postgresql:///z\n"                            /* 30 */
    "core = http://attune.example.com\n"                   /* 31 ok: insecure */
    "insecure = true\n"                                    /* 32 */
    "poll = 1s\n"                                          /* 33 */
    "poll = 2s\n";                                         /* 34 duplicate key */

static void test_bad(void)
{
    rd_config c;
    rd_diags d = { 0 };
    CHECK(!config_parse("bad.ini", bad, &c, &d));
    static const diag_want want[] = {
        { "bad.ini:1: ", "outside" },
        { "bad.ini:5: ", "unknown key 'colour'" },
        { "bad.ini:6: ", "bad duration" },
        { "bad.ini:7: ", "bad boolean" },
        { "bad.ini:8: ", "missing '='" },
        { "bad.ini:9: ", "env:NAME, file:PATH or cmd:COMMAND" },
        { "bad.ini:10: ", "unknown auth mode 'magic'" },
        { "bad.ini:11: ", "duplicate system \"a\"" },
        { "bad.ini:14: ", "missing required key 'profile'" },
        { "bad.ini:14: ", "missing required key 'store'" },
        { "bad.ini:15: ", "literal secret in 'broker_password'" },
        { "bad.ini:16: ", "literal secret in 'password'" },
        { "bad.ini:20: ", "which is not a loopback host" },
        { "bad.ini:21: ", "dev-user is only allowed with a loopback" },
        { "bad.ini:23: ", "bad integer" },
        { "bad.ini:24: ", "bad rate" },
        { "bad.ini:25: ", "bad duration" },
        { "bad.ini:26: ", "unknown section" },
        { "bad.ini:34: ", "duplicate key 'poll'" },
    };
    CHECK_DIAGS(&d, want);
    CHECK(!has(&d, "bad.ini:27: ", ""));
    CHECK(!has(&d, "bad.ini:31: ", ""));
    /* systems with errors are left out; d had only a duplicate-key error */
    CHECK(c.n == 0);
    config_free(&c);
    diags_free(&d);
}

/* sweep_budget: a percentage of one Redis core; 0 = unbudgeted; the default 25 %. */
static void test_sweep_budget(void)
{
    static const struct { const char *v; double want; const char *err; } cases[] = {
        { NULL, 0.25, NULL }, { "10%", 0.10, NULL }, { "40", 0.40, NULL }, { "0", 0, NULL },
        { "100 %", 1.0, NULL }, { "0.5%", -1, "at least 1%" }, { "150%", -1, "bad share" },
        { "-5%", -1, "bad share" }, { "%", -1, "bad share" }, { "fast", -1, "bad share" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[200];
        snprintf(text, sizeof text, "[system \"a\"]\nprofile = alakai\nstore = redis://127.0.0.1/0\n"
                 "%s%s\n", cases[i].v ? "sweep_budget = " : "", cases[i].v ? cases[i].v : "");
        rd_config c;
        rd_diags d = { 0 };
        bool ok = config_parse("b.ini", text, &c, &d);
        if (cases[i].err) {
            CHECK_MSG(!ok && has(&d, "b.ini:4: ", cases[i].err), cases[i].v);
        } else {
            CHECK_MSG(ok && c.n == 1, cases[i].v ? cases[i].v : "(default)");
            if (ok && c.n == 1)
                CHECK_NEAR(c.systems[0].alakai.sweep_budget, cases[i].want);
        }
        config_free(&c);
        diags_free(&d);
    }
}

/* The batch guards (issue 35): batch_canary a count (0 none, -1 when not set), batch_canary_wait a duration
 * (more than 0, default 5 min), batch_max_refail a share (default 50 %). */
static void test_batch_guards(void)
{
    static const struct {
        const char *line;
        int canary;
        double wait, refail;
        const char *err;
    } cases[] = {
        { "", -1, 300, 0.5, NULL },
        { "batch_canary = 50", 50, 300, 0.5, NULL },
        { "batch_canary = 0", 0, 300, 0.5, NULL },
        { "batch_canary_wait = 90s", -1, 90, 0.5, NULL },
        { "batch_max_refail = 20%", -1, 300, 0.2, NULL },
        { "batch_max_refail = 0", -1, 300, 0, NULL },
        { "batch_max_refail = 100%", -1, 300, 1.0, NULL },
        { "batch_max_refail = 101%", 0, 0, 0, "bad share" },
        { "batch_canary = -1", 0, 0, 0, "bad integer" },
        { "batch_canary_wait = 0", 0, 0, 0, "batch_canary_wait must be more than 0" },
        { "batch_canary_wait = soon", 0, 0, 0, "bad duration" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[200];
        snprintf(text, sizeof text, "[system \"a\"]\nprofile = attune\nstore = postgresql:///a\n%s\n",
                 cases[i].line);
        rd_config c;
        rd_diags d = { 0 };
        bool ok = config_parse("g.ini", text, &c, &d);
        if (cases[i].err) {
            CHECK_MSG(!ok && has(&d, "g.ini:4: ", cases[i].err), cases[i].line);
        } else {
            CHECK_MSG(ok && c.n == 1, cases[i].line);
            if (ok && c.n == 1) {
                CHECK_MSG(c.systems[0].batch_canary == cases[i].canary, cases[i].line);
                CHECK_NEAR(c.systems[0].batch_canary_wait_s, cases[i].wait);
                CHECK_NEAR(c.systems[0].batch_max_refail, cases[i].refail);
            }
        }
        config_free(&c);
        diags_free(&d);
    }
}

static void test_mixed(void)
{
    const char *t = "[system \"ok\"]\nprofile=tasker\nstore=postgresql:///t\n"
                    "[system \"broken\"]\nprofile=tasker\n";
    rd_config c;
    rd_diags d = { 0 };
    CHECK(!config_parse("m", t, &c, &d));
    CHECK(c.n == 1);
    CHECK(config_find(&c, "ok") != NULL);
    CHECK(config_find(&c, "broken") == NULL);
    CHECK(d.n == 1 && has(&d, "m:4: ", "store"));
    config_free(&c);
    diags_free(&d);

    /* CRLF, empty text, NULL text */
    CHECK(config_parse("crlf", "[system \"x\"]\r\nprofile = attune\r\nstore = s\r\n", &c, &d));
    CHECK(c.n == 1 && !strcmp(c.systems[0].store.url, "s"));
    config_free(&c);
    CHECK(config_parse("e", "", &c, &d) && c.n == 0);
    config_free(&c);
    CHECK(config_parse("e", NULL, &c, &d) && c.n == 0);
    config_free(&c);
    CHECK(d.n == 0);
    diags_free(&d);
}

static void test_auth_rules(void)
{
    static const struct { const char *body; bool ok; const char *needle; } cases[] = {
        { "core=https://x\nauth=bearer\ntoken=file:/t\n", true, NULL },
        { "core=https://x\nauth=bearer\n", false, "needs 'token'" },
        { "core=https://x\nauth=api-key\ntoken=env:K\n", true, NULL },
        { "core=https://x\nauth=token-command\n", false, "token_command" },
        { "core=https://x\nauth=jwt-login\nlogin=a\n", true, NULL },
        { "core=http://127.0.0.1:1\nauth=dev-user\ndev_user=a\nlocal=true\n", true, NULL },
        { "core=http://[::1]:1\nauth=dev-user\ndev_user=a\nlocal=true\n", true, NULL },
        { "core=http://127.0.0.1:1\nauth=dev-user\ndev_user=a\n", false, "local = true" },
        { "core=https://example.com\nauth=dev-user\ndev_user=a\nlocal=1\n", false, "loopback" },
        { "core=http://user@localhost:9/x\nauth=none\n", false, "user name or password" },
        { "core=ftp://x\n", false, "http:// or https://" },
        { "broker=http://rabbit.internal:15672\n", false, "not a loopback host" },
        { "broker=http://rabbit.internal:15672\ninsecure=on\n", true, NULL },
        { "token=env:\n", false, "literal secret" },
        { "token=\n", true, NULL },
        { "failures_degraded=20\n", false, "degraded threshold" },
        { "poll=0\n", false, "at least 100ms" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *t = NULL;
        size_t n = strlen(cases[i].body) + 80;
        t = malloc(n);
        snprintf(t, n, "[system \"s\"]\nprofile=attune\nstore=x\n%s", cases[i].body);
        rd_config c;
        rd_diags d = { 0 };
        bool ok = config_parse("a", t, &c, &d);
        CHECK_MSG(ok == cases[i].ok, cases[i].body);
        if (cases[i].needle)
            CHECK_MSG(d.n >= 1 && strstr(d.msgs[0], cases[i].needle), cases[i].body);
        config_free(&c);
        diags_free(&d);
        free(t);
    }
}

/* Credential-bearing URLs (core, broker, sqs_*) and worker URLs: one row per rule
 * boundary; a refused value is never echoed (only the host of a plain-http URL). */
static void test_url_rules(void)
{
    static const struct { const char *body; const char *needle; } cases[] = {
        { "core=http://127.0.0.1:1\n", NULL },
        { "core=http://127.9.8.7:1/api\n", NULL },
        { "core=http://localhost:1\n", NULL },
        { "core=http://LOCALHOST:1\n", NULL },
        { "core=http://[::1]:1\n", NULL },
        { "core=http://127.0.0.1.evil.example:8080\n",
          "a:4: 'core' uses plain http:// to '127.0.0.1.evil.example', which is not a loopback" },
        { "core=http://127.evil.example\n", "not a loopback" },
        { "core=http://localhost.evil.example\n", "not a loopback" },
        { "core=http://localhost.\n", "not a loopback" },
        { "core=http://0.0.0.0:1\n", "not a loopback" },
        { "core=http://127.1:1\n", "not a loopback" },
        { "core=http://[::2]:1\n", "not a loopback" },
        { "core=http://evil.example\ninsecure=yes\n", NULL },
        { "core=https://evil.example\n", NULL },
        { "core=https://user:Secr3t@core.example\n",
          "a:4: 'core' must not hold a user name or password" },
        { "core=http://Secr3t@127.0.0.1:1\ninsecure=yes\n", "user name or password" },
        { "core=http://127.0.0.1\\@evil.example/\n", "user name or password" },
        { "core=http://127.0.0.1\\evil.example/\n", "no host name or port holds" },
        { "core=http://127.0.0.1:80:81/\n", "no host name or port holds" },
        { "core=http://127.0.0.1 .evil/\n", "no host name or port holds" },
        { "core=http:///x\n", "has no host" },
        { "core=http://[]:1/\n", "has no host" },
        { "core=ftp://127.0.0.1/\n", "http:// or https://" },
        { "broker=http://guest:Secr3t@127.0.0.1:15672\n", "'broker' must not hold" },
        { "broker=http://127.0.0.1.evil.example:15672\n", "'broker' uses plain http://" },
        { "sqs_endpoint=http://127.0.0.1.evil.example\n", "'sqs_endpoint' uses plain http://" },
        { "sqs_queue_url=http://127.0.0.1:1/1/q, http://sqs.evil/1/q\n",
          "'sqs_queue_url' uses plain http:// to 'sqs.evil'" },
        { "sqs_dlq=q-dlq, http://127.0.0.1:1/1/q-dlq\n", NULL },
        { "sqs_dlq=q-dlq, http://sqs.evil/1/q-dlq\n", "'sqs_dlq' uses plain http://" },
        { "workers=http://w1.example:8000 http://127.0.0.1:9\n", NULL },
        { "workers=http://w1.example:8000, http://u:Secr3t@127.0.0.1:9\n",
          "'workers' must not hold a user name or password" },
        { "workers=w1:8000\n", "'workers' must be an http:// or https:// URL" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char t[512];
        snprintf(t, sizeof t, "[system \"s\"]\nprofile=attune\nstore=x\n%s", cases[i].body);
        rd_config c;
        rd_diags d = { 0 };
        bool ok = config_parse("a", t, &c, &d);
        CHECK_MSG(ok == !cases[i].needle, cases[i].body);
        if (cases[i].needle) {
            CHECK_MSG(d.n == 1 && strstr(d.msgs[0], cases[i].needle), cases[i].body);
            CHECK_MSG(d.n == 1 && !strstr(d.msgs[0], "Secr3t"), cases[i].body);
        }
        config_free(&c);
        diags_free(&d);
    }
}

/* The PostgreSQL keys: credentials, TLS, schema; one row per rule boundary. */
static void test_pg_keys(void)
{
    static const struct { const char *body; bool ok; const char *needle; } cases[] = {
        { "store=host=db user=ro\nstore_user=ops\nstore_password=env:PGPW\n", true, NULL },
        { "store=host=db\nstore_password=hunter2\n", false, "literal secret in 'store_password'" },
        { "store=host=db password=hunter2\n", false, "password in 'store' is refused" },
        { "store=host=db  password = x\n", false, "password in 'store' is refused" },
        { "store=host=db passwordless=1\n", true, NULL },
        { "store=postgresql://ops:pw@db/attune\n", false, "password in 'store' is refused" },
        { "store=postgresql://ops@db/attune\n", true, NULL },
        { "store=postgres://db/attune?sslmode=require&password=x\n", false, "refused" },
        { "store=postgresql://db/a?user=x%3Ay\n", true, NULL },
        { "store=postgresql://[::1]:5432/a\n", true, NULL },
        { "store=env:DATABASE_URL\n", true, NULL },
        { "store=file:/run/secrets/db_url\n", true, NULL },
        { "store=redis://127.0.0.1:6379/0\nschema=attune\n", false, "PostgreSQL store only" },
        { "store=redis://127.0.0.1:6379/0\nstore_sslmode=require\n", false, "PostgreSQL" },
        { "store=host=db\nstore_sslmode=verify-full\nstore_sslrootcert=/ca.crt\n"
          "store_sslcert=/c.crt\nstore_sslkey=/c.key\n", true, NULL },
        { "store=host=db\nstore_sslmode=verify_full\n", false, "unknown store_sslmode" },
        { "store=host=db\nstore_sslmode=disable\n", true, NULL },
        { "store=host=db\nschema=attune_alt\n", true, NULL },
        { "store=host=db\nschema=Tenant-42$\n", true, NULL },
        { "store=host=db\nschema=a\"b\n", false, "bad schema name" },
        { "store=host=db\nschema=a;drop\n", false, "bad schema name" },
        { "store=host=db\nschema=a b\n", false, "bad schema name" },
        { "store=host=db\nschema=" "0123456789012345678901234567890123456789012345678901234567890123"
          "\n", false, "bad schema name" },
        { "store=host=db\nschema=" "012345678901234567890123456789012345678901234567890123456789012"
          "\n", true, NULL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t n = strlen(cases[i].body) + 80;
        char *t = malloc(n);
        snprintf(t, n, "[system \"s\"]\nprofile=attune\n%s", cases[i].body);
        rd_config c;
        rd_diags d = { 0 };
        bool ok = config_parse("a", t, &c, &d);
        CHECK_MSG(ok == cases[i].ok, cases[i].body);
        if (cases[i].needle)
            CHECK_MSG(d.n == 1 && strstr(d.msgs[0], cases[i].needle), cases[i].body);
        for (size_t k = 0; k < d.n; k++)
            CHECK_MSG(!strstr(d.msgs[k], "hunter2"), "a message repeats the password");
        config_free(&c);
        diags_free(&d);
        free(t);
    }
    rd_config c;
    rd_diags d = { 0 };
    CHECK(config_parse("a", "[system \"s\"]\nprofile=attune\nstore=env:U\nstore_user=ops\n"
                       "store_password=file:/p\nstore_sslmode=verify-full\n"
                       "store_sslrootcert=/ca\nschema=att\n", &c, &d));
    CHECK(c.n == 1);
    if (c.n == 1) {
        CHECK_STR(c.systems[0].store.url, "env:U");
        CHECK_STR(c.systems[0].store.user, "ops");
        CHECK_STR(c.systems[0].store.password, "file:/p");
        CHECK_STR(c.systems[0].store.ssl.mode, "verify-full");
        CHECK_STR(c.systems[0].store.ssl.rootcert, "/ca");
        CHECK(c.systems[0].store.ssl.cert == NULL);
        CHECK_STR(c.systems[0].store.schema, "att");
    }
    config_free(&c);
    diags_free(&d);
}

static void test_helpers(void)
{
    static const struct { const char *s; bool ok; double v; } durs[] = {
        { "2s", true, 2 }, { "500ms", true, 0.5 }, { "5m", true, 300 }, { "2h", true, 7200 },
        { "1d", true, 86400 }, { "30", true, 30 }, { "1.5s", true, 1.5 }, { "0", true, 0 },
        { "", false, 0 }, { "s", false, 0 }, { "-1s", false, 0 }, { "2x", false, 0 },
        { "inf", false, 0 }, { "nan", false, 0 }, { "2 s", false, 0 }, { NULL, false, 0 },
    };
    for (size_t i = 0; i < sizeof durs / sizeof *durs; i++) {
        double v = -1;
        CHECK_MSG(parse_duration(durs[i].s, &v) == durs[i].ok, durs[i].s ? durs[i].s : "NULL");
        if (durs[i].ok)
            CHECK_NEAR(v, durs[i].v);
    }
    bool b;
    CHECK(parse_bool("TRUE", &b) && b);
    CHECK(parse_bool("off", &b) && !b);
    CHECK(parse_bool("0", &b) && !b);
    CHECK(!parse_bool("2", &b));
    CHECK(!parse_bool(NULL, &b));
    CHECK(secret_is_ref("env:X") && secret_is_ref("file:/x") && secret_is_ref("cmd:pass x"));
    CHECK(!secret_is_ref("env:") && !secret_is_ref("hunter2") && !secret_is_ref(NULL));
}

static void test_default_path(void)
{
    setenv("XDG_CONFIG_HOME", "/tmp/xdg", 1);
    char *p = config_default_path();
    CHECK_STR(p, "/tmp/xdg/redrive/config");
    free(p);
    unsetenv("XDG_CONFIG_HOME");
    setenv("HOME", "/home/op", 1);
    p = config_default_path();
    CHECK_STR(p, "/home/op/.config/redrive/config");
    free(p);
    setenv("XDG_CONFIG_HOME", "", 1);
    p = config_default_path();
    CHECK_STR(p, "/home/op/.config/redrive/config");
    free(p);
}

static void test_load(void)
{
    rd_config c;
    rd_diags d = { 0 };
    CHECK(!config_load("/nonexistent/redrive.conf", &c, &d));
    CHECK(d.n == 1 && strstr(d.msgs[0], "/nonexistent/redrive.conf: cannot read"));
    config_free(&c);
    diags_free(&d);
}

/* A NUL byte no longer ends the file: it is an error on its line, and the rest
 * of the file is still read. */
static void test_nul(void)
{
    static const char t[] = "[system \"a\"]\n"          /* 1 */
                            "profile = attune\n"          /* 2 */
                            "store = s\n"                 /* 3 */
                            "banner = x\0y\n"             /* 4 NUL: system a dropped */
                            "[system \"b\"]\n"            /* 5 */
                            "profile = tasker\n"          /* 6 */
                            "store = t\n"                 /* 7 */
                            "\0\n"                        /* 8 NUL: system b dropped */
                            "[system \"c\"]\n"            /* 9 */
                            "profile = tasker\n"          /* 10 */
                            "store = \"u\"\n";            /* 11 */
    rd_config c;
    rd_diags d = { 0 };
    CHECK(!config_parse_len("nul.conf", t, sizeof t - 1, &c, &d));
    CHECK(d.n == 2);
    if (d.n == 2) {
        CHECK_STR(d.msgs[0], "nul.conf:4: NUL byte");
        CHECK_STR(d.msgs[1], "nul.conf:8: NUL byte");
    }
    CHECK(c.n == 1 && config_find(&c, "c") && !strcmp(config_find(&c, "c")->store.url, "u"));
    config_free(&c);
    diags_free(&d);

    /* the C-string entry point still ends at the first NUL */
    CHECK(config_parse("nul.conf", t, &c, &d));
    CHECK(c.n == 1 && d.n == 0);
    config_free(&c);

    /* the same through the file reader */
    char path[] = "/tmp/rd_cfg_nul_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    FILE *f = fdopen(fd, "wb");
    CHECK(f && fwrite(t, 1, sizeof t - 1, f) == sizeof t - 1);
    if (f)
        fclose(f);
    CHECK(!config_load(path, &c, &d));
    CHECK(d.n == 2 && c.n == 1);
    char want[64];
    snprintf(want, sizeof want, "%s:4: NUL byte", path);
    CHECK_STR(d.n ? d.msgs[0] : NULL, want);
    config_free(&c);
    diags_free(&d);
    unlink(path);
}

/* A secret that fails at run time names where it was configured (issue 11). */
static void test_key_where(void)
{
    static const char text[] =
        "# c\n"
        "[system \"a\"]\n"
        "profile = attune\n"
        "store = postgresql://h/db\n"
        "\n"
        "store_password = cmd:get-token\n"
        "auth = token-command\n"
        "token_command = mint\n"
        "core = http://127.0.0.1:1\n";
    rd_config c;
    rd_diags d = {0};
    CHECK(config_parse("/etc/rd.conf", text, &c, &d));
    static const struct { const char *key, *want; } cases[] = {
        { "store_password", "/etc/rd.conf:6: store_password" },
        { "token_command", "/etc/rd.conf:8: token_command" },
        { "broker_password", "/etc/rd.conf:2: broker_password" },   /* not set: the section */
        { "no_such_key", "/etc/rd.conf:2: no_such_key" },
    };
    for (size_t i = 0; c.n == 1 && i < sizeof cases / sizeof *cases; i++) {
        char out[128];
        config_key_where(&c.systems[0], cases[i].key, out, sizeof out);
        CHECK_STR(out, cases[i].want);
    }
    rd_system_cfg bare = {0};       /* not from a file */
    char out[64];
    config_key_where(&bare, "token", out, sizeof out);
    CHECK_STR(out, "token");
    config_free(&c);
    diags_free(&d);
}

/* Every key lands in its own field of the sub-structs: the text is written from the same
 * list that names each key's field, one distinct value per key. */
typedef struct key_case {
    const char *key, *val;
    size_t off;              /* of the char * field in rd_system_cfg */
} key_case;

#define F(m) offsetof(rd_system_cfg, m)
static const key_case redis_keys[] = {
    { "profile", "alakai", F(profile) },
    { "store", "rediss://127.0.0.1:6380/0", F(store.url) },
    { "store_user", "su", F(store.user) },
    { "store_password", "env:SP", F(store.password) },
    { "store_cacert", "/sca", F(store.tls.cacert) },
    { "store_cert", "/scert", F(store.tls.cert) },
    { "store_key", "/skey", F(store.tls.key) },
    { "broker", "https://broker.example", F(broker.url) },
    { "broker_user", "bu", F(broker.user) },
    { "broker_password", "env:BP", F(broker.password) },
    { "broker_vhost", "bv", F(broker.vhost) },
    { "dlq", "bd", F(broker.dlq) },
    { "queues", "bq", F(broker.queues) },
    { "sqs_queue_url", "https://sqs.eu-west-1.amazonaws.com/1/q", F(sqs.queue_url) },
    { "sqs_region", "eu-west-1", F(sqs.region) },
    { "sqs_endpoint", "https://sqs.example", F(sqs.endpoint) },
    { "sqs_dlq", "sd", F(sqs.dlq) },
    { "aws_profile", "ap", F(sqs.aws_profile) },
    { "core", "https://core.example", F(core.url) },
    { "auth", "api-key", F(core.auth) },
    { "token", "env:CT", F(core.token) },
    { "token_command", "ctc", F(core.token_command) },
    { "login", "cl", F(core.login) },
    { "password", "env:CP", F(core.password) },
    { "api_key_header", "X-Ck", F(core.api_key_header) },
    { "dev_user", "cdu", F(core.dev_user) },
    { "cacert", "/hca", F(http.cacert) },
    { "banner", "ub", F(ui.banner) },
    { "theme", "ut", F(ui.theme) },
    { "keymap", "uk", F(ui.keymap) },
    { "clipboard", "osc52", F(ui.clipboard) },
    { "prefix", "ap-x", F(alakai.prefix) },
    { "workers", "https://w.example", F(workers) },
    { "journal_syslog", "/nonexistent/redrive-log", F(journal_syslog) },
};
static const key_case pg_keys[] = {
    { "profile", "attune", F(profile) },
    { "store", "postgresql://h/db", F(store.url) },
    { "store_sslmode", "verify-ca", F(store.ssl.mode) },
    { "store_sslrootcert", "/pr", F(store.ssl.rootcert) },
    { "store_sslcert", "/pc", F(store.ssl.cert) },
    { "store_sslkey", "/pk", F(store.ssl.key) },
    { "schema", "ps", F(store.schema) },
};
#undef F

/* One system with keys k and then `tail`; checks each string key's field. */
static rd_system_cfg *parse_cases(const key_case *k, size_t n, const char *tail, rd_config *c)
{
    char text[4096];
    size_t len = (size_t)snprintf(text, sizeof text, "[system \"k\"]\n");
    for (size_t i = 0; i < n && len < sizeof text; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "%s = %s\n", k[i].key, k[i].val);
    if (len < sizeof text)
        snprintf(text + len, sizeof text - len, "%s", tail);
    rd_diags d = {0};
    CHECK(config_parse("keys", text, c, &d));
    for (size_t i = 0; i < d.n; i++)
        fprintf(stderr, "unexpected: %s\n", d.msgs[i]);
    diags_free(&d);
    CHECK(c->n == 1);
    if (c->n != 1)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        const char *got = *(char *const *)(void *)((char *)&c->systems[0] + k[i].off);
        CHECK_MSG(got && strcmp(got, k[i].val) == 0, k[i].key);
    }
    return &c->systems[0];
}

static void test_every_key(void)
{
    static const char tail[] =
        "store_insecure = yes\ninsecure = yes\ncore_probe = 5s\npage_size = 7\n"
        "confirm_over = 3\nconfirm_quit = no\nmax_retries = 4\norphan_after = 1h\n"
        "read_only = yes\nlocal = yes\npoll = 3s\nrate_limit = 1.5\nexecution_timeout = 10m\n";
    rd_config c;
    rd_system_cfg *s = parse_cases(redis_keys, sizeof redis_keys / sizeof *redis_keys, tail, &c);
    if (s) {
        CHECK(s->store.tls.insecure && s->http.insecure && s->read_only && s->local);
        CHECK(!s->ui.confirm_quit);
        CHECK(s->ui.page_size == 7 && s->ui.confirm_over == 3 && s->alakai.max_retries == 4);
        CHECK_NEAR(s->core.probe_s, 5);
        CHECK_NEAR(s->alakai.orphan_after_s, 3600);
        CHECK_NEAR(s->poll_s, 3);
        CHECK_NEAR(s->rate_limit, 1.5);
        CHECK_NEAR(s->execution_timeout_s, 600);
    }
    config_free(&c);
    parse_cases(pg_keys, sizeof pg_keys / sizeof *pg_keys, "", &c);
    config_free(&c);
}

/* push and push_min_interval are the store's (store.push, store.push_min_interval_s). */
static void test_push_keys(void)
{
    const char *text = "[system \"a\"]\nprofile = attune\nstore = host=db dbname=a\n"
                       "[system \"b\"]\nprofile = attune\nstore = host=db dbname=b\npush = no\n"
                       "push_min_interval = 2s\n";
    rd_config c;
    rd_diags d = { 0 };
    CHECK(config_parse("p.ini", text, &c, &d) && c.n == 2);
    if (c.n == 2) {
        CHECK(c.systems[0].store.push && !c.systems[1].store.push);
        CHECK_NEAR(c.systems[0].store.push_min_interval_s, 0.25);
        CHECK_NEAR(c.systems[1].store.push_min_interval_s, 2);
    }
    config_free(&c);
    diags_free(&d);
}

int main(void)
{
    test_push_keys();
    test_sweep_budget();
    test_batch_guards();
    test_pg_keys();
    test_good();
    test_bad();
    test_mixed();
    test_auth_rules();
    test_url_rules();
    test_helpers();
    test_default_path();
    test_load();
    test_nul();
    test_key_where();
    test_every_key();
    return check_done("test_config");
}
