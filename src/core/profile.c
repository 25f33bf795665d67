#include "profile.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "datafile.h"
#include "ini.h"
#include "sanitize.h"
#include "suggest.h"
#include "textutil.h"
#include "xalloc.h"

#define PROFILE_MAX_BYTES (1u << 20)
enum { PROFILE_MAX_DEPTH = 4 };   /* actions_from chains */

static const rd_profile_action *own_action(const rd_profile *p, const char *name);

typedef enum { SEC_NONE, SEC_PROFILE, SEC_QUERY, SEC_ACTION, SEC_BAD } sec_kind;

typedef struct pparser {
    ini_reader r;             /* the tokenizer; all messages go through it */
    rd_profile *p;
    sec_kind sec;
    int profile_line;         /* line of [profile], 0 = none yet */
    size_t settings_cap, queries_cap, actions_cap;
    char *qbuf;               /* body of the current query */
    size_t qlen, qcap;
} pparser;

static bool valid_name(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.')
            return false;
    return true;
}

/* Ends the current query: trims blank lines around the body and stores it. */
static void query_finish(pparser *pp)
{
    if (pp->sec != SEC_QUERY)
        return;
    rd_kv *q = &pp->p->queries[pp->p->n_queries - 1];
    const char *body = pp->qbuf ? pp->qbuf : "";
    while (*body == '\n')
        body++;
    size_t n = strlen(body);
    while (n && isspace((unsigned char)body[n - 1]))
        n--;
    q->value = xstrndup(body, n);
    if (!n)
        ini_error(&pp->r, q->line, "query '%s' is empty", q->key);
    free(pp->qbuf);
    pp->qbuf = NULL;
    pp->qlen = pp->qcap = 0;
}

static void query_append(pparser *pp, const char *line)
{
    size_t n = strlen(line);
    xgrow(&pp->qbuf, &pp->qcap, pp->qlen + n + 2, 1);
    memcpy(pp->qbuf + pp->qlen, line, n);
    pp->qlen += n;
    pp->qbuf[pp->qlen++] = '\n';
    pp->qbuf[pp->qlen] = '\0';
}

static void open_query(pparser *pp, const char *name, bool optional, int line)
{
    rd_profile *p = pp->p;
    for (size_t i = 0; i < p->n_queries; i++)
        if (strcmp(p->queries[i].key, name) == 0) {
            ini_error(&pp->r, line, "duplicate query '%s' (first on line %d)", name,
                          p->queries[i].line);
            pp->sec = SEC_BAD;
            return;
        }
    xgrow(&p->queries, &pp->queries_cap, p->n_queries + 1, sizeof *p->queries);
    p->queries[p->n_queries++] = (rd_kv){ xstrdup(name), NULL, line, optional };
    pp->sec = SEC_QUERY;
}

static void open_action(pparser *pp, const char *name, int line)
{
    rd_profile *p = pp->p;
    if (own_action(p, name)) {
        ini_error(&pp->r, line, "duplicate action '%s'", name);
        pp->sec = SEC_BAD;
        return;
    }
    xgrow(&p->actions, &pp->actions_cap, p->n_actions + 1, sizeof *p->actions);
    rd_profile_action *a = &p->actions[p->n_actions++];
    memset(a, 0, sizeof *a);
    a->name = xstrdup(name);
    a->line = line;
    pp->sec = SEC_ACTION;
}

/* [query NAME] or [query NAME optional|required] */
static void open_query_header(pparser *pp, const char *arg, int line)
{
    size_t n = strcspn(arg, " \t");
    const char *flag = arg + n + strspn(arg + n, " \t");
    char *name = xstrndup(arg, n);
    if (!valid_name(name))
        ini_error(&pp->r, line, "[query] needs a name ([query NAME] or [query NAME optional])");
    else if (*flag && strcmp(flag, "optional") != 0 && strcmp(flag, "required") != 0)
        ini_error(&pp->r, line, "[query %s]: unknown flag '%s' (optional or required)", name, flag);
    else
        open_query(pp, name, strcmp(flag, "optional") == 0, line);
    free(name);
}

static void open_section(pparser *pp, const ini_line *l)
{
    query_finish(pp);
    pp->sec = SEC_BAD;
    if (!l->name)
        return;   /* malformed header: reported by the reader */
    const char *body = l->name, *arg = l->value;
    if (strcmp(body, "profile") == 0 && !*arg) {
        if (pp->profile_line)
            ini_error(&pp->r, l->line, "duplicate [profile] section (first on line %d)",
                          pp->profile_line);
        else
            pp->profile_line = l->line;
        pp->sec = SEC_PROFILE;
    } else if (strcmp(body, "query") == 0) {
        open_query_header(pp, arg, l->line);
    } else if (strcmp(body, "action") == 0) {
        if (!valid_name(arg))
            ini_error(&pp->r, l->line, "[action] needs a name ([action NAME])");
        else
            open_action(pp, arg, l->line);
    } else {
        ini_error(&pp->r, l->line, "unknown section [%s%s%s] (expected [profile], [query NAME] or "
                      "[action NAME])", body, *arg ? " " : "", arg);
    }
}

static void set_setting(pparser *pp, const char *key, const char *val, int line)
{
    rd_profile *p = pp->p;
    for (size_t i = 0; i < p->n_settings; i++)
        if (strcmp(p->settings[i].key, key) == 0) {
            ini_error(&pp->r, line, "duplicate key '%s' (first on line %d)", key,
                          p->settings[i].line);
            return;
        }
    xgrow(&p->settings, &pp->settings_cap, p->n_settings + 1, sizeof *p->settings);
    p->settings[p->n_settings++] = (rd_kv){ xstrdup(key), xstrdup(val), line, false };
    char **field = strcmp(key, "name") == 0        ? &p->name
                   : strcmp(key, "store") == 0     ? &p->store
                   : strcmp(key, "semantics") == 0 ? &p->semantics
                                                   : NULL;
    if (field)
        *field = xstrdup(val);
}

static void set_action_key(pparser *pp, const char *key, const char *val, int line)
{
    rd_profile_action *a = &pp->p->actions[pp->p->n_actions - 1];
    char **field = strcmp(key, "method") == 0 ? &a->method
                   : strcmp(key, "path") == 0 ? &a->path
                   : strcmp(key, "body") == 0 ? &a->body
                                              : NULL;
    if (!field) {
        ini_error(&pp->r, line, "unknown key '%s' in [action %s] (method, path, body)", key,
                  a->name);
        return;
    }
    if (*field) {
        ini_error(&pp->r, line, "duplicate key '%s' in [action %s]", key, a->name);
        return;
    }
    *field = xstrdup(val);
}

static void parse_line(pparser *pp, const ini_line *l)
{
    switch (l->kind) {
    case INI_BAD:
        return;   /* reported by the reader */
    case INI_SECTION:
        open_section(pp, l);
        ini_set_raw(&pp->r, pp->sec == SEC_QUERY);   /* SQL bodies are raw lines */
        return;
    case INI_RAW:
        query_append(pp, l->text);
        return;
    case INI_TEXT:
    case INI_PAIR:
        break;
    }
    if (pp->sec == SEC_BAD)
        return;
    if (pp->sec == SEC_NONE) {
        ini_error(&pp->r, l->line, "text outside a section (start with [profile])");
        pp->sec = SEC_BAD;
        return;
    }
    if (l->kind == INI_TEXT) {
        ini_error(&pp->r, l->line, "missing '=' (expected key = value)");
        return;
    }
    if (!*l->name) {
        ini_error(&pp->r, l->line, "missing key before '='");
        return;
    }
    if (pp->sec == SEC_PROFILE)
        set_setting(pp, l->name, l->value, l->line);
    else
        set_action_key(pp, l->name, l->value, l->line);
}

static bool in_list(const char *v, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(v, *list) == 0)
            return true;
    return false;
}

static void validate(pparser *pp)
{
    static const char *const stores[] = { "postgresql", "redis", NULL };
    static const char *const sems[] = { "attune", "tasker", "alakai", "openagents", NULL };
    static const char *const methods[] = { "GET", "POST", "PUT", "PATCH", "DELETE", NULL };
    rd_profile *p = pp->p;
    int l = pp->profile_line ? pp->profile_line : 1;
    if (!pp->profile_line)
        ini_error(&pp->r, 1, "missing [profile] section");
    if (!p->name || !*p->name)
        ini_error(&pp->r, l, "[profile] is missing 'name'");
    if (!p->store || !*p->store)
        ini_error(&pp->r, l, "[profile] is missing 'store'");
    else if (!in_list(p->store, stores))
        ini_error(&pp->r, l, "unknown store '%s' (postgresql or redis)", p->store);
    if (!p->semantics || !*p->semantics)
        ini_error(&pp->r, l, "[profile] is missing 'semantics'");
    else if (!in_list(p->semantics, sems))
        ini_error(&pp->r, l, "unknown semantics '%s' (attune, tasker, alakai or openagents)",
                      p->semantics);
    for (size_t i = 0; i < p->n_actions; i++) {
        rd_profile_action *a = &p->actions[i];
        if (!a->method || !*a->method)
            ini_error(&pp->r, a->line, "[action %s] is missing 'method'", a->name);
        else if (!in_list(a->method, methods))
            ini_error(&pp->r, a->line, "[action %s]: unknown method '%s'", a->name, a->method);
        if (!a->path || !*a->path)
            ini_error(&pp->r, a->line, "[action %s] is missing 'path'", a->name);
        else if (a->path[0] != '/')
            ini_error(&pp->r, a->line, "[action %s]: path must start with '/'", a->name);
    }
}

static const ini_format profile_format = {
    INI_SECTIONS | INI_HEADER_COL0 | INI_COMMENTS, NULL,
};

bool profile_parse_len(const char *path, const char *text, size_t len, rd_profile *out,
                       rd_diags *d)
{
    memset(out, 0, sizeof *out);
    out->path = xstrdup(path);
    pparser pp = { .p = out };
    ini_open(&pp.r, path ? path : "profile", text, len, &profile_format, d);
    ini_line l;
    while (ini_next(&pp.r, &l))
        parse_line(&pp, &l);
    ini_close(&pp.r);
    query_finish(&pp);
    validate(&pp);
    return pp.r.errors == 0;
}

bool profile_parse(const char *path, const char *text, rd_profile *out, rd_diags *d)
{
    return profile_parse_len(path, text, text ? strlen(text) : 0, out, d);
}

static bool load_depth(const char *name, const char *near, rd_profile *out, rd_diags *d,
                       int depth);

static bool load_file(const char *file, rd_profile *out, rd_diags *d, int depth)
{
    char why[128];
    size_t len;
    char *text = text_read_file_len(file, PROFILE_MAX_BYTES, &len, why, sizeof why);
    if (!text) {
        memset(out, 0, sizeof *out);
        diags_add(d, file, 0, "%s", why);
        return false;
    }
    bool ok = profile_parse_len(file, text, len, out, d);
    free(text);
    const char *from = profile_get(out, "actions_from");
    if (!ok || !from)
        return ok;
    int line = 0;
    for (size_t i = 0; i < out->n_settings; i++)
        if (strcmp(out->settings[i].key, "actions_from") == 0)
            line = out->settings[i].line;
    if (depth >= PROFILE_MAX_DEPTH) {
        diags_add(d, file, line, "actions_from: chain deeper than %d profiles", PROFILE_MAX_DEPTH);
        return false;
    }
    rd_profile *parent = xcalloc(1, sizeof *parent);
    if (!load_depth(from, file, parent, d, depth + 1)) {
        diags_add(d, file, line, "actions_from: cannot load profile '%s'", from);
        profile_free(parent);
        free(parent);
        return false;
    }
    out->actions_from = parent;
    return true;
}

/* A name is looked for next to `near` (the file naming it) first, then where data
 * files live (datafile.h). */
static bool load_depth(const char *name, const char *near, rd_profile *out, rd_diags *d,
                       int depth)
{
    memset(out, 0, sizeof *out);
    if (!name || !*name) {
        diags_add(d, "profile", 0, "no profile given");
        return false;
    }
    if (datafile_is_path(DATA_PROFILES, name))
        return load_file(name, out, d, depth);
    if (!valid_name(name)) {
        diags_add(d, name, 0, "not a profile name or path");
        return false;
    }
    const char *slash = near ? strrchr(near, '/') : NULL;
    if (slash) {
        char *f = xasprintf("%.*s/%s.profile", (int)(slash - near), near, name);
        bool exists = access(f, R_OK) == 0;
        bool ok = exists && load_file(f, out, d, depth);
        free(f);
        if (exists)
            return ok;
    }
    char *file = datafile_locate(DATA_PROFILES, name, d);
    bool ok = file && load_file(file, out, d, depth);
    free(file);
    return ok;
}

bool profile_load(const char *name_or_path, rd_profile *out, rd_diags *d)
{
    return load_depth(name_or_path, NULL, out, d, 0);
}

bool profile_load_near(const char *name, const char *near, rd_profile *out, rd_diags *d)
{
    return load_depth(name, near, out, d, 0);
}

void profile_free(rd_profile *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_settings; i++) {
        free(p->settings[i].key);
        free(p->settings[i].value);
    }
    for (size_t i = 0; i < p->n_queries; i++) {
        free(p->queries[i].key);
        free(p->queries[i].value);
    }
    for (size_t i = 0; i < p->n_actions; i++) {
        free(p->actions[i].name);
        free(p->actions[i].method);
        free(p->actions[i].path);
        free(p->actions[i].body);
    }
    free(p->settings);
    free(p->queries);
    free(p->actions);
    free(p->path);
    free(p->name);
    free(p->store);
    free(p->semantics);
    if (p->actions_from) {
        profile_free(p->actions_from);
        free(p->actions_from);
    }
    memset(p, 0, sizeof *p);
}

const char *profile_get(const rd_profile *p, const char *key)
{
    for (size_t i = 0; p && i < p->n_settings; i++)
        if (strcmp(p->settings[i].key, key) == 0)
            return p->settings[i].value;
    return NULL;
}

bool profile_dlq_from(const rd_profile *p, const char *who)
{
    const char *v = profile_get(p, "dlq_source");
    size_t n = strlen(who);
    if (!v)
        return true;
    for (const char *w = v; *w;) {
        size_t k = strcspn(w, " ,\t");
        if (k == n && strncmp(w, who, n) == 0)
            return true;
        w += k;
        w += strspn(w, " ,\t");
    }
    return false;
}

const char *profile_query(const rd_profile *p, const char *name)
{
    for (size_t i = 0; p && i < p->n_queries; i++)
        if (strcmp(p->queries[i].key, name) == 0)
            return p->queries[i].value;
    return NULL;
}

bool profile_query_optional(const rd_profile *p, const char *name)
{
    for (size_t i = 0; p && i < p->n_queries; i++)
        if (strcmp(p->queries[i].key, name) == 0)
            return p->queries[i].optional;
    return false;
}

static const rd_profile_action *own_action(const rd_profile *p, const char *name)
{
    for (size_t i = 0; p && i < p->n_actions; i++)
        if (strcmp(p->actions[i].name, name) == 0)
            return &p->actions[i];
    return NULL;
}

const rd_profile_action *profile_action(const rd_profile *p, const char *name)
{
    for (; p; p = p->actions_from) {
        const rd_profile_action *a = own_action(p, name);
        if (a)
            return a;
    }
    return NULL;
}

bool profile_has_actions(const rd_profile *p)
{
    for (; p; p = p->actions_from)
        if (p->n_actions)
            return true;
    return false;
}

/* The execution statuses each semantics' store uses (the shared systems reference). */
static const struct { const char *semantics; const char *const *names; } status_sets[] = {
    { "attune", (const char *const[]){ "requested", "scheduling", "scheduled", "running",
        "completed", "failed", "canceling", "cancelled", "timeout", "abandoned", NULL } },
    { "tasker", (const char *const[]){ "pending", "enqueued", "in_progress",
        "enqueued_for_orchestration", "enqueued_as_error_for_orchestration", "waiting_for_retry",
        "complete", "error", "cancelled", "resolved_manually", NULL } },
    /* Alakai's own and the states the sweep finds (redis_view.c: a filter on them) */
    { "alakai", (const char *const[]){ "queued", "running", "succeeded", "failed", "lost",
        "orphan", "malformed", "oversized", "overlap", NULL } },
    { "openagents", (const char *const[]){ "created", "queued", "running", "paused", "completed",
        "failed", "cancelled", NULL } },
};

bool profile_status_known(const rd_profile *p, const char *status, char *why, size_t cap)
{
    why[0] = '\0';
    for (size_t i = 0; p && p->semantics && i < sizeof status_sets / sizeof *status_sets; i++) {
        if (strcmp(status_sets[i].semantics, p->semantics) != 0)
            continue;
        suggest s;
        suggest_init(&s, status);
        for (const char *const *n = status_sets[i].names; *n; n++) {
            if (strcasecmp(*n, status) == 0)
                return true;
            suggest_add(&s, *n);
        }
        char *clean = sanitize_str(status, 0), hint[400];
        if (!suggest_text(&s, hint, sizeof hint)[0]) {   /* nothing close: all of them */
            size_t used = (size_t)snprintf(hint, sizeof hint, " (one of");
            for (const char *const *n = status_sets[i].names; *n && used < sizeof hint; n++)
                used += (size_t)snprintf(hint + used, sizeof hint - used, "%s %s",
                                         n == status_sets[i].names ? "" : ",", *n);
            if (used < sizeof hint)
                snprintf(hint + used, sizeof hint - used, ")");
        }
        snprintf(why, cap, "no status '%.60s' in %s%s", clean, p->semantics, hint);
        free(clean);
        return false;
    }
    return true;                           /* a semantics without a list: the store decides */
}
