/*
 * Two things a refresh batch may carry besides the profile's queries (pg_source.c builds
 * the batch, this file the SQL and the reading of the answers):
 *
 * The change probe. A profile's `[query changes]` returns rows (query name, state): a
 * cheap text that changes whenever that query's answer may have (table counters, WAL
 * position on a standby). The batch starts with one statement that runs it, compares each
 * state with the one this console saw last time (sent as $1) and records in a session
 * setting (`redrive.skip`) which queries are unchanged; every later query of the same batch
 * is wrapped in a one-time filter on that setting, so the server skips the unchanged ones
 * (planned, never executed) — still one round trip, and the pipeline keeps one sync per
 * query. The setting carries a nonce of this console, so a pooled server connection that
 * holds another console's list runs the query rather than skipping it. Guarded results of
 * skipped queries are ignored (the model keeps what it has).
 *
 * The index check: lines `-- uses index: table (col, col)` in a query's SQL name the index
 * it relies on; once per connection one statement asks pg_index which of them the store
 * lacks (an index whose leading columns are those, in that order), and each missing one
 * becomes a note on the source (`redrive check` shows it as a warning).
 */
#include "pg_priv.h"

#include <ctype.h>

#include "../core/xalloc.h"
#include "pg_rows.h"

/* $1 states "name=state\n...", $2 force ('on'/'off'), $3 nonce. The states come back so
 * the next probe compares against them; skip is "nonce:,name,name,". */
static const char PROBE_HEAD[] =
    "WITH p AS (SELECT c.name::text AS name, c.state::text AS state FROM (\n";
static const char PROBE_TAIL[] =
    "\n) c(name, state)),\n"
    "o AS (SELECT split_part(l, '=', 1) AS name, substr(l, strpos(l, '=') + 1) AS state\n"
    "        FROM regexp_split_to_table(COALESCE($1::text, ''), E'\\n') l WHERE l <> '')\n"
    "SELECT set_config('redrive.skip', $3::text || ':,' || COALESCE((SELECT string_agg(p.name || ',', '')\n"
    "         FROM p JOIN o ON o.name = p.name\n"
    "        WHERE NOT $2::bool AND p.state IS NOT NULL AND p.state = o.state), ''),\n"
    "       false) AS skip,\n"
    "       (SELECT string_agg(p.name || '=' || p.state, E'\\n') FROM p\n"
    "         WHERE p.state IS NOT NULL AND strpos(p.state, E'\\n') = 0) AS states";

bool pg_changes_guardable(qkind k)
{
    return k == Q_COUNTS || k == Q_WORKERS || k == Q_QUEUES || k == Q_DLQ_COUNT ||
           k == Q_FAILING || k == Q_EXECS;
}

char *pg_changes_sql(const pg_src *s)
{
    const char *body = query(s, Q_CHANGES);
    if (!body || s->chg_broken)
        return NULL;
    size_t n = strlen(body);
    while (n > 0 && (isspace((unsigned char)body[n - 1]) || body[n - 1] == ';'))
        n--;
    /* the replica's lag rides along in the probe's one row (pg_replica.c) */
    return xasprintf("%s%.*s%s%s", PROBE_HEAD, (int)n, body, PROBE_TAIL, PG_REPLICA_COLUMNS);
}

char *pg_changes_guard(const pg_src *s, qkind k, const char *sql)
{
    /* strip trailing blanks and semicolons: the SQL becomes a subquery */
    size_t n = strlen(sql);
    while (n > 0 && (isspace((unsigned char)sql[n - 1]) || sql[n - 1] == ';'))
        n--;
    return xasprintf("SELECT * FROM (\n%.*s\n) rd_q\n"
                     "WHERE strpos(COALESCE(current_setting('redrive.skip', true), ''), '%s:') <> 1\n"
                     "   OR strpos(current_setting('redrive.skip', true), ',%s,') = 0",
                     (int)n, sql, s->chg_nonce, pg_qnames[k]);
}

void pg_changes_apply(pg_src *s, const PGresult *r, bool ok)
{
    s->chg_batches++;
    if (!ok) {
        /* the session still holds the previous list: those were skipped this time */
        s->chg_broken = true;
        free(s->chg_states);
        s->chg_states = NULL;
        return;
    }
    pg_replica_apply(s, r);
    const char *skip = pg_text(r, 0, "skip"), *states = pg_text(r, 0, "states");
    const char *list = skip ? strchr(skip, ':') : NULL;
    free(s->chg_skip);
    s->chg_skip = xstrdup(list ? list + 1 : ",");
    free(s->chg_states);
    s->chg_states = states ? xstrdup(states) : NULL;
    if (strcmp(s->chg_skip, ",") == 0)
        s->chg_full_at = now_s();
}

bool pg_changes_skipped(const pg_src *s, qkind k)
{
    if (!s->chg_skip)
        return false;
    char pat[40];
    snprintf(pat, sizeof pat, ",%s,", pg_qnames[k]);
    return strstr(s->chg_skip, pat) != NULL;
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

const char *pg_indexes_sql(const pg_src *s, char **param)
{
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (int k = 0; k < Q_N; k++) {
        if (k == Q_INDEXES || k == Q_CHANGES)
            continue;
        const char *sql = query(s, (qkind)k);
        if (sql)
            index_lines(pg_qnames[k], sql, &buf, &len, &cap);
    }
    *param = buf;
    return buf ? INDEX_SQL : NULL;
}

void pg_indexes_apply(pg_src *s, const PGresult *r)
{
    free(s->notes[Q_INDEXES]);
    s->notes[Q_INDEXES] = NULL;
    int n = PQntuples(r);
    if (n <= 0)
        return;
    char msg[400];
    size_t o = (size_t)snprintf(msg, sizeof msg, "missing index:");
    for (int i = 0; i < n && o < sizeof msg; i++) {
        const char *q = pg_text(r, i, "query"), *t = pg_text(r, i, "relation"),
                   *c = pg_text(r, i, "columns");
        o += (size_t)snprintf(msg + o, sizeof msg - o, "%s %s (%s) for %s", i ? ";" : "",
                              t ? t : "?", c ? c : "?", q ? q : "?");
    }
    s->notes[Q_INDEXES] = xstrdup(msg);
}
