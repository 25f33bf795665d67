/*
 * rd-rows-model: store rows in, model JSON out, through the PostgreSQL source's own row
 * code (src/sources/pg_rows.c). tests/tui/make_fixtures.py writes only what a store holds
 * (status, retry_count, error, heartbeat, ...); retry eligibility, the next retry, error
 * fingerprints and worker health come from here, so a screen fixture cannot show a state
 * the code never produces.
 *
 *   rd-rows-model < rows.json > model.json
 *   rows.json: {"now": EPOCH, "semantics": "attune",
 *               "executions": [ROW...], "chain_id": "ID", "chain": [ROW...],
 *               "workers": [ROW...]}
 *   ROW: {"column": "text value" | null, ...} with the standard column names of
 *   docs/profiles.md, every value as text (as libpq hands it over).
 * Output: the model as `redrive snapshot --json --view all` writes it.
 */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/core/health.h"
#include "src/core/model_json.h"
#include "src/core/retry.h"
#include "src/core/xalloc.h"
#include "src/sources/pg_rows.h"

/* The rows of array `key` as a PGresult of text columns (the union of the rows' keys). */
static PGresult *rows_result(const cJSON *root, const char *key, char *err, size_t errcap)
{
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!cJSON_IsArray(rows)) {
        snprintf(err, errcap, "\"%s\" is not an array of rows", key);
        return NULL;
    }
    const char *cols[64];
    int ncols = 0;
    const cJSON *row, *cell;
    cJSON_ArrayForEach(row, rows) {
        if (!cJSON_IsObject(row)) {
            snprintf(err, errcap, "\"%s\": a row is not an object", key);
            return NULL;
        }
        cJSON_ArrayForEach(cell, row) {
            int k = 0;
            while (k < ncols && strcmp(cols[k], cell->string) != 0)
                k++;
            if (k == ncols) {
                if (ncols == (int)(sizeof cols / sizeof *cols)) {
                    snprintf(err, errcap, "\"%s\": too many columns", key);
                    return NULL;
                }
                cols[ncols++] = cell->string;
            }
            if (!cJSON_IsString(cell) && !cJSON_IsNull(cell)) {
                snprintf(err, errcap, "\"%s\".%s: values are text or null", key, cell->string);
                return NULL;
            }
        }
    }
    PGresult *r = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
    PGresAttDesc att[64];
    memset(att, 0, sizeof att);
    for (int k = 0; k < ncols; k++) {
        att[k].name = (char *)(uintptr_t)cols[k];   /* libpq copies it */
        att[k].typid = 25;                          /* text */
        att[k].typlen = -1;
        att[k].atttypmod = -1;
    }
    if (!r || !PQsetResultAttrs(r, ncols, att))
        abort();
    int i = 0;
    cJSON_ArrayForEach(row, rows) {
        for (int k = 0; k < ncols; k++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, cols[k]);
            const char *s = cJSON_IsString(v) ? v->valuestring : NULL;
            if (!PQsetvalue(r, i, k, (char *)(uintptr_t)s, s ? (int)strlen(s) : -1))
                abort();
        }
        i++;
    }
    return r;
}

static char *read_all(FILE *f)
{
    size_t n = 0, cap = 0;
    char *buf = NULL;
    for (;;) {
        xgrow(&buf, &cap, n + 4097, 1);
        size_t got = fread(buf + n, 1, 4096, f);
        n += got;
        if (got == 0)
            break;
    }
    buf[n] = '\0';
    return buf;
}

int main(void)
{
    char err[256] = "";
    char *text = read_all(stdin);
    cJSON *root = cJSON_Parse(text);
    free(text);
    const cJSON *now = cJSON_GetObjectItemCaseSensitive(root, "now");
    const cJSON *sem = cJSON_GetObjectItemCaseSensitive(root, "semantics");
    if (!cJSON_IsNumber(now) || !cJSON_IsString(sem)) {
        fprintf(stderr, "rd-rows-model: want an object with \"now\" and \"semantics\"\n");
        cJSON_Delete(root);
        return 2;
    }
    /* as the PostgreSQL source sets it up (pg_apply.c row_ctx) with the default config */
    pg_row_ctx x = { .now = now->valuedouble, .sem = pg_semantics_parse(sem->valuestring) };
    health_defaults(&x.health);
    attune_backoff_defaults(&x.backoff);
    rd_model *m = model_new();
    PGresult *ex = rows_result(root, "executions", err, sizeof err);
    PGresult *ch = ex ? rows_result(root, "chain", err, sizeof err) : NULL;
    PGresult *wk = ch ? rows_result(root, "workers", err, sizeof err) : NULL;
    int rc = 0;
    if (!wk) {
        fprintf(stderr, "rd-rows-model: %s\n", err);
        rc = 2;
    } else {
        rd_execution *e;
        size_t n = pg_rows_execs(ex, &x, &e);
        model_set_execs(m, e, n, false);
        n = pg_rows_execs(ch, &x, &e);
        const cJSON *cid = cJSON_GetObjectItemCaseSensitive(root, "chain_id");
        model_set_chain(m, cJSON_IsString(cid) ? cid->valuestring : NULL, e, n);
        rd_worker *w;
        n = pg_rows_workers(wk, &x, &w);
        model_set_workers(m, w, n);
        char *json = model_to_json_at(m, "all", x.now);
        fputs(json, stdout);
        fputc('\n', stdout);
        free(json);
    }
    PQclear(ex);
    PQclear(ch);
    PQclear(wk);
    model_free(m);
    cJSON_Delete(root);
    return rc;
}
