/*
 * Two things a refresh batch may carry besides the profile's queries (pg_batch.c builds
 * the batch, this file the SQL, the probe's memory and the reading of the answers):
 *
 * The change probe. A profile's `[query changes]` returns rows (query name, state): a
 * cheap text that changes whenever that query's answer may have (table counters, WAL
 * position on a standby). The batch starts with one statement that runs it, compares each
 * state with the one this console saw last time (sent as $1) and records in a session
 * setting (`redrive.skip`) which queries are unchanged; every later query of the same batch
 * is wrapped in a one-time filter on that setting, so the server skips the unchanged ones
 * (planned, never executed) — still one round trip. A forced run keeps one sync per query;
 * in the steady state the probe and the guarded queries share one sync (one transaction),
 * and where the role's errors are not logged the probe fails on purpose when none of them
 * changed, so the server skips them unbound (PROBE_TAIL below). The setting carries a nonce
 * of this console, so a pooled server connection that holds another console's list runs
 * the query rather than skipping it. Guarded results of skipped queries are ignored (the
 * model keeps what it has).
 *
 * Also here: pg_sql_inline, a statement's parameters written in as literals (the first
 * executions page as a parameterless named statement).
 *
 * The index check: lines `-- uses index: table (col, col)` in a query's SQL name the index
 * it relies on; once per connection one statement asks pg_index which of them the store
 * lacks (an index whose leading columns are those, in that order), and each missing one
 * becomes a note on the source (`redrive check` shows it as a warning).
 */
#include "pg_changes.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/config.h"
#include "../core/xalloc.h"
#include "../io/clock.h"
#include "pg_rows.h"

/* $1 states "name=state\n...", $2 force ('on'/'off'), $3 nonce, $4 the queries sharing
 * the probe's sync ("counts,workers"; may be empty). The states come back so the next
 * probe compares against them; skip is "nonce:,name,name,". A query is skipped when its
 * line "name=state" is one of $1's lines (a string search, no split and join: the probe
 * runs on every refresh of every console). When every query of $4 is unchanged, and the
 * server does not log errors of this session (log_min_messages fatal or panic: set for
 * the console's role by the database's owners, docs/profiles.md), the probe fails on
 * purpose (invalid input for integer: UNCHANGED): the server then skips the rest of that
 * sync group without even binding those statements, and the console knows the states are
 * the ones it sent. Elsewhere the group still shares one transaction. */
#define UNCHANGED "redrive-unchanged"
static const char PROBE_HEAD[] =
    "WITH p AS (SELECT c.name::text AS name, c.state::text AS state FROM (\n";
static const char PROBE_TAIL[] =
    "\n) c(name, state)),\n"
    "s AS (SELECT COALESCE(string_agg(p.name || ',', '') FILTER (\n"
    "                WHERE NOT $2::bool AND p.state IS NOT NULL AND strpos(p.state, E'\\n') = 0\n"
    "                  AND strpos(E'\\n' || COALESCE($1::text, '') || E'\\n',\n"
    "                             E'\\n' || p.name || '=' || p.state || E'\\n') > 0), '') AS skip,\n"
    "              string_agg(p.name || '=' || p.state, E'\\n')\n"
    "                FILTER (WHERE p.state IS NOT NULL AND strpos(p.state, E'\\n') = 0) AS states\n"
    "         FROM p)\n"
    "SELECT set_config('redrive.skip', $3::text || ':,' || s.skip, false) AS skip, s.states,\n"
    "       (CASE WHEN COALESCE($4::text, '') <> ''\n"
    "              AND current_setting('log_min_messages') IN ('fatal', 'panic')\n"
    "              AND NOT EXISTS (\n"
    "                  SELECT 1 FROM unnest(string_to_array($4::text, ',')) n\n"
    "                   WHERE strpos(',' || s.skip, ',' || n || ',') = 0)\n"
    "             THEN 'redrive-unchanged' ELSE '0' END)::int AS unchanged";
static const char PROBE_FROM[] = "\n  FROM s";

struct pg_changes {
    char *states;                 /* "name=state\n...": what the probe returned last time */
    char *prev;                   /* the states before the last answer (pg_changes_moved) */
    char *forget;                 /* queries the next probe runs anyway (pg_changes_forget) */
    char *skip;                   /* ",counts,workers," — guarded results to ignore */
    bool left[Q_N];               /* left out of the batch in flight (not on screen): it
                                   * keeps the state of its last run */
    bool broken;                  /* the probe failed on this connection: no guards */
    bool force;                   /* next batch runs everything (user refresh, reconnect) */
    double full_at;               /* when everything last ran */
    char nonce[20];               /* marks this console's skip list in the session */
    char group[160];              /* the probe's $4: queries sharing its sync ("counts,...") */
    bool split;                   /* a grouped query failed on this connection: a sync each */
    bool grouped;                 /* the batch in flight has a group */
    bool indexes_checked;         /* the index check ran on this connection */
    unsigned long skipped, batches;   /* counters (debug/bench) */
};

static bool each_name(const char *names, bool (*fn)(void *c, const char *n, size_t len),
                      void *c);
static bool forget_one(void *ctx, const char *name, size_t len);

pg_changes *pg_changes_new(void)
{
    pg_changes *c = xcalloc(1, sizeof *c);
    /* this console's mark on its skip list in the session */
    snprintf(c->nonce, sizeof c->nonce, "%08lx%06lx",
             (unsigned long)((uintptr_t)c ^ (uintptr_t)clock_wall() * 2654435761u) & 0xffffffffUL,
             (unsigned long)getpid() & 0xffffffUL);
    return c;
}

void pg_changes_free(pg_changes *c)
{
    if (!c)
        return;
    free(c->states);
    free(c->prev);
    free(c->forget);
    free(c->skip);
    free(c);
}

void pg_changes_reconnect(pg_changes *c)
{
    c->indexes_checked = c->broken = false;
    c->force = true;
    c->split = c->grouped = false;
    c->group[0] = '\0';
    free(c->skip);
    c->skip = NULL;
}

void pg_changes_force(pg_changes *c) { c->force = true; }

bool pg_changes_index_due(pg_changes *c)
{
    if (c->indexes_checked)
        return false;
    c->indexes_checked = true;
    return true;
}

bool pg_changes_begin(pg_changes *c, const char *body, const char *max_age_v,
                      const char *p[4], bool *forced)
{
    if (!body || c->broken)
        return false;
    double max_age = 30;
    if (max_age_v && !(parse_duration(max_age_v, &max_age) && max_age > 0))
        max_age = 30;
    if (c->forget) {
        each_name(c->forget, forget_one, c);
        free(c->forget);
        c->forget = NULL;
    }
    bool force = c->force || !c->states || clock_wall() - c->full_at >= max_age;
    c->force = false;
    /* $4, the queries sharing the probe's sync: filled in by pg_changes_group() */
    c->group[0] = '\0';
    p[0] = c->states;
    p[1] = force ? "on" : "off";
    p[2] = c->nonce;
    p[3] = c->group;
    *forced = force;
    return true;
}

void pg_changes_leave_out(pg_changes *c, qkind k, bool left) { c->left[k] = left; }

/* The steady state: when every guarded query of the batch follows the probe, they share
 * its sync, so when none of them changed the probe's deliberate error makes the server skip
 * them unbound. Not for a forced run (everything runs: each query its own sync, one failure
 * does not abort the others), nor on a connection where a query of a group failed. */
bool pg_changes_group(pg_changes *c, bool forced, const qkind *k, size_t n)
{
    c->grouped = false;
    if (forced || c->split)
        return false;
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = pg_qnames[k[i]];
        if (len + strlen(name) + 2 > sizeof c->group) {
            c->group[0] = '\0';
            return false;
        }
        len += (size_t)snprintf(c->group + len, sizeof c->group - len, "%s%s",
                                len ? "," : "", name);
    }
    c->grouped = len > 0;
    return c->grouped;
}

void pg_changes_query_failed(pg_changes *c, bool aborted)
{
    if (aborted || c->grouped)
        c->split = true;
}

char *pg_changes_sql(const char *body)
{
    size_t n = strlen(body);
    while (n > 0 && (isspace((unsigned char)body[n - 1]) || body[n - 1] == ';'))
        n--;
    /* the replica's lag rides along in the probe's one row (pg_replica.c) */
    return xasprintf("%s%.*s%s%s%s", PROBE_HEAD, (int)n, body, PROBE_TAIL, PG_REPLICA_COLUMNS,
                     PROBE_FROM);
}

char *pg_changes_guard(const pg_changes *c, qkind k, const char *sql)
{
    /* strip trailing blanks and semicolons: the SQL becomes a subquery */
    size_t n = strlen(sql);
    while (n > 0 && (isspace((unsigned char)sql[n - 1]) || sql[n - 1] == ';'))
        n--;
    return xasprintf("SELECT * FROM (\n%.*s\n) rd_q\n"
                     "WHERE strpos(COALESCE(current_setting('redrive.skip', true), ''), '%s:') <> 1\n"
                     "   OR strpos(current_setting('redrive.skip', true), ',%s,') = 0",
                     (int)n, sql, c->nonce, pg_qnames[k]);
}

bool pg_changes_unchanged(const PGresult *r)
{
    if (!r || PQresultStatus(r) != PGRES_FATAL_ERROR)
        return false;
    const char *st = PQresultErrorField(r, PG_DIAG_SQLSTATE),
               *m = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
    return st && strcmp(st, "22P02") == 0 && m && strstr(m, "\"" UNCHANGED "\"");
}

/* The line "name=state" of states for qname (NULL when none), its length in *len. */
static const char *state_line(const char *states, const char *qname, size_t *len)
{
    size_t n = strlen(qname);
    for (const char *line = states; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t l = end ? (size_t)(end - line) : strlen(line);
        if (l > n && line[n] == '=' && strncmp(line, qname, n) == 0) {
            *len = l;
            return line;
        }
        line += l + (end ? 1 : 0);
    }
    return NULL;
}

/* The states to compare with next time. A query this batch left out (its list not on
 * screen) keeps the state it had when it last ran, the state of the data the console
 * holds: when the list comes back, the probe lets the server skip it only if nothing
 * changed since (none when it never ran: it runs). */
static char *states_kept(const pg_changes *c, const char *states, const char *before)
{
    if (!states)
        return NULL;
    size_t cap = strlen(states) + (before ? strlen(before) : 0) + 2;
    char *out = xcalloc(1, cap), *w = out;
    for (int k = 0; k < Q_N; k++) {
        size_t len = 0;
        const char *line = state_line(c->left[k] ? before : states, pg_qnames[k], &len);
        if (!line)
            continue;
        if (w != out)
            *w++ = '\n';
        memcpy(w, line, len);
        w += len;
    }
    *w = '\0';
    return out;
}

void pg_changes_apply(pg_changes *c, pg_replica *rep, const PGresult *r, bool ok)
{
    c->batches++;
    if (!ok && c->group[0] && pg_changes_unchanged(r)) {
        /* every query of the group unchanged: skipped, the states are the ones sent */
        free(c->skip);
        c->skip = xasprintf(",%s,", c->group);
        free(c->prev);
        c->prev = c->states ? xstrdup(c->states) : NULL;   /* nothing moved */
        return;
    }
    if (!ok) {
        /* the session holds some earlier list: whatever the guarded queries of this batch
         * answered is ignored (the model keeps what it has); no guards from now on */
        c->broken = true;
        free(c->states);
        c->states = NULL;
        free(c->skip);
        c->skip = xstrdup(",counts,workers,queues,dlq_count,failing,executions,");
        return;
    }
    pg_replica_apply(rep, r);
    const char *skip = pg_text(r, 0, "skip"), *states = pg_text(r, 0, "states");
    const char *list = skip ? strchr(skip, ':') : NULL;
    free(c->skip);
    c->skip = xstrdup(list ? list + 1 : ",");
    char *kept = states_kept(c, states, c->states);
    free(c->prev);
    c->prev = c->states;
    c->states = kept;
    if (strcmp(c->skip, ",") == 0)
        c->full_at = clock_wall();
}

/* Calls fn for each query name of the list "counts executions" (blanks or commas). */
static bool each_name(const char *names, bool (*fn)(void *c, const char *n, size_t len),
                      void *c)
{
    bool any = false;
    for (const char *p = names; p && *p;) {
        p += strspn(p, " ,\t");
        size_t len = strcspn(p, " ,\t");
        if (len > 0)
            any |= fn(c, p, len);
        p += len;
    }
    return any;
}

/* The state line of the query name[0..len) in states (NULL when none), its length. */
static const char *state_of(const char *states, const char *name, size_t len, size_t *l)
{
    char q[40];
    snprintf(q, sizeof q, "%.*s", (int)(len < sizeof q ? len : sizeof q - 1), name);
    return state_line(states, q, l);
}

static bool forget_one(void *ctx, const char *name, size_t len)
{
    pg_changes *c = ctx;
    size_t l = 0;
    const char *line = state_of(c->states, name, len, &l);
    if (!line)
        return false;
    /* cut the line (and its newline) out: the probe then runs that query */
    char *at = c->states + (line - c->states);
    size_t cut = l + (at[l] == '\n');
    memmove(at, at + cut, strlen(at + cut) + 1);
    return true;
}

void pg_changes_forget(pg_changes *c, const char *names)
{
    if (!names) {
        c->force = true;
        return;
    }
    /* applied when the next probe is built: a batch in flight would bring the states back */
    if (c->forget && strstr(c->forget, names))
        return;
    char *both = c->forget ? xasprintf("%s %s", c->forget, names) : xstrdup(names);
    free(c->forget);
    c->forget = both;
}

static bool moved_one(void *ctx, const char *name, size_t len)
{
    const pg_changes *c = ctx;
    size_t a = 0, b = 0;
    const char *now = state_of(c->states, name, len, &a), *was = state_of(c->prev, name, len, &b);
    return now && (!was || a != b || memcmp(now, was, a) != 0);
}

bool pg_changes_moved(pg_changes *c, const char *names)
{
    if (!c->prev)
        return false;
    return each_name(names, moved_one, c);
}

bool pg_changes_skipped(pg_changes *c, qkind k)
{
    if (!c->skip)
        return false;
    char pat[40];
    snprintf(pat, sizeof pat, ",%s,", pg_qnames[k]);
    if (!strstr(c->skip, pat))
        return false;
    c->skipped++;
    return true;
}

/* ---- parameters written in ---- */

/* Length of the quoted token at p (', ", E'...'), 0 when it does not end. */
static size_t quoted_len(const char *p, bool backslash)
{
    char q = *p;
    for (size_t i = 1; p[i]; i++) {
        if (backslash && p[i] == '\\' && p[i + 1]) {
            i++;
            continue;
        }
        if (p[i] == q) {
            if (p[i + 1] == q) {          /* a doubled quote stays inside */
                i++;
                continue;
            }
            return i + 1;
        }
    }
    return 0;
}

/* Length of the comment or dollar-quoted string at p, 0 when none starts there; -1 when
 * it does not end. */
static long skip_len(const char *p)
{
    if (p[0] == '-' && p[1] == '-') {
        const char *e = strchr(p, '\n');
        return e ? (long)(e - p) : (long)strlen(p);
    }
    if (p[0] == '/' && p[1] == '*') {
        const char *e = strstr(p + 2, "*/");
        return e ? (long)(e + 2 - p) : -1;
    }
    if (p[0] == '$' && (p[1] == '$' || isalpha((unsigned char)p[1]) || p[1] == '_')) {
        size_t t = 1;
        while (isalnum((unsigned char)p[t]) || p[t] == '_')
            t++;
        if (p[t] != '$')
            return 0;                     /* an identifier's $, not a quote */
        char tag[64];
        if (t + 1 >= sizeof tag)
            return -1;
        memcpy(tag, p, t + 1);
        tag[t + 1] = '\0';
        const char *e = strstr(p + t + 1, tag);
        return e ? (long)(e + t + 1 - p) : -1;
    }
    return 0;
}

char *pg_sql_inline(const char *sql, int np, const char *const p[])
{
    size_t cap = strlen(sql) + 64, n = 0;
    char *out = xmalloc(cap);
    for (const char *c = sql; *c;) {
        size_t take = 1;
        const char *val = NULL;
        bool is_param = false;
        long sk = skip_len(c);
        bool ident = c > sql && (isalnum((unsigned char)c[-1]) || c[-1] == '_' || c[-1] == '$');
        if (sk < 0)
            goto fail;
        if (sk > 0) {
            take = (size_t)sk;
        } else if (*c == '\'' || *c == '"') {
            bool e = *c == '\'' && c > sql && (c[-1] == 'E' || c[-1] == 'e') &&
                     !(c - 1 > sql && (isalnum((unsigned char)c[-2]) || c[-2] == '_'));
            take = quoted_len(c, e);
            if (!take)
                goto fail;
        } else if (*c == '$' && isdigit((unsigned char)c[1]) && !ident) {
            char *end;
            long k = strtol(c + 1, &end, 10);
            if (k < 1 || k > np)
                goto fail;
            take = (size_t)(end - c);
            val = p[k - 1];
            is_param = true;
        }
        /* a literal doubles its quotes: at most twice as long, plus the quotes */
        size_t need = is_param ? (val ? 2 * strlen(val) + 2 : 4) : take;
        if (n + need + 1 > cap)
            xgrow(&out, &cap, n + need + 1, 1);
        if (!is_param) {
            memcpy(out + n, c, take);
            n += take;
        } else if (!val) {
            memcpy(out + n, "NULL", 4);
            n += 4;
        } else {
            out[n++] = '\'';
            for (const char *v = val; *v; v++) {
                if (*v == '\'')
                    out[n++] = '\'';
                out[n++] = *v;
            }
            out[n++] = '\'';
        }
        c += take;
    }
    out[n] = '\0';
    return out;
fail:
    free(out);
    return NULL;
}

/* ---- the index check ---- */

static const char INDEX_SQL[] =
    "WITH want AS (SELECT split_part(l, E'\\t', 1) AS q, split_part(l, E'\\t', 2) AS t,\n"
    "                     string_to_array(split_part(l, E'\\t', 3), ',') AS cols\n"
    "                FROM regexp_split_to_table($1::text, E'\\n') l WHERE l <> '')\n"
    "SELECT w.q AS query, w.t AS relation, array_to_string(w.cols, ', ') AS columns\n"
    "  FROM want w\n"
    " WHERE NOT EXISTS (\n"
    "   SELECT 1 FROM pg_index i\n"
    "    WHERE i.indrelid = to_regclass(w.t) AND i.indisvalid\n"
    "      AND (SELECT array_agg(a.attname::text ORDER BY k.o)\n"
    "             FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(att, o)\n"
    "             JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.att\n"
    "            WHERE k.o <= cardinality(w.cols)) = w.cols)";

/* Appends "query\ttable\tcol,col\n" for each `-- uses index: table (col, col)` line. */
static void index_lines(const char *qname, const char *sql, char **buf, size_t *len,
                        size_t *cap)
{
    static const char TAG[] = "-- uses index:";
    for (const char *p = strstr(sql, TAG); p; p = strstr(p + 1, TAG)) {
        const char *t = p + sizeof TAG - 1, *eol = strchr(t, '\n');
        if (!eol)
            eol = t + strlen(t);
        char line[300], out[400];
        size_t ln = (size_t)(eol - t) < sizeof line - 1 ? (size_t)(eol - t) : sizeof line - 1;
        memcpy(line, t, ln);
        line[ln] = '\0';
        size_t o = (size_t)snprintf(out, sizeof out, "%s\t", qname);
        bool cols = false, ok = false;
        for (const char *c = line; *c && o < sizeof out - 2; c++) {
            if (isspace((unsigned char)*c))
                continue;
            if (*c == '(' && !cols) { out[o++] = '\t'; cols = true; continue; }
            if (*c == ')' && cols) { ok = true; break; }
            if (!isalnum((unsigned char)*c) && *c != '_' && *c != '.' && *c != ',')
                break;                    /* names only: the line is data for a query */
            out[o++] = *c;
        }
        if (!ok)
            continue;
        out[o++] = '\n';
        if (*len + o + 1 > *cap)
            xgrow(buf, cap, *len + o + 1, 1);
        memcpy(*buf + *len, out, o);
        *len += o;
        (*buf)[*len] = '\0';
    }
}

const char *pg_indexes_sql(const char *const sqls[Q_N], char **param)
{
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (int k = 0; k < Q_N; k++) {
        if (k == Q_INDEXES || k == Q_CHANGES)
            continue;
        const char *sql = sqls[k];
        if (sql)
            index_lines(pg_qnames[k], sql, &buf, &len, &cap);
    }
    *param = buf;
    return buf ? INDEX_SQL : NULL;
}

char *pg_indexes_note(const PGresult *r)
{
    int n = PQntuples(r);
    if (n <= 0)
        return NULL;
    char msg[400];
    size_t o = (size_t)snprintf(msg, sizeof msg, "missing index:");
    for (int i = 0; i < n && o < sizeof msg; i++) {
        const char *q = pg_text(r, i, "query"), *t = pg_text(r, i, "relation"),
                   *c = pg_text(r, i, "columns");
        o += (size_t)snprintf(msg + o, sizeof msg - o, "%s %s (%s) for %s", i ? ";" : "",
                              t ? t : "?", c ? c : "?", q ? q : "?");
    }
    return xstrdup(msg);
}
