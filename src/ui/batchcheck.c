/* The guard at send time for a batch the console runs (batchcheck.h): a child a part. */
#include "batchcheck.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/jsonget.h"
#include "../core/xalloc.h"
#include "../io/proc.h"

static const double CHECK_TIMEOUT_S = 60;   /* a part's check: a start, a connection, a query */

struct ui_batchcheck {
    ui_app *app;
    char id[17];
    rd_batchrun *run;          /* the run waiting for the answer, NULL none */
    rd_proc *proc;             /* the part's check running, NULL none */
    size_t n;                  /* the part's size */
    const size_t *items;       /* its item numbers (the run's, valid until answered) */
    char **why;                /* n reasons read so far, NULL sends */
    bool ok;                   /* its {"checked"} line came */
    char err[320];
};

static void check_clear(ui_batchcheck *c)
{
    for (size_t i = 0; c->why && i < c->n; i++)
        free(c->why[i]);
    free(c->why);
    c->why = NULL;
    c->n = 0;
    c->items = NULL;
    c->run = NULL;
    c->ok = false;
    c->err[0] = 0;
}

ui_batchcheck *batchcheck_new(ui_app *app, const char *batch_id)
{
    ui_batchcheck *c = xcalloc(1, sizeof *c);
    c->app = app;
    snprintf(c->id, sizeof c->id, "%s", batch_id);
    return c;
}

static void on_line(const char *line, void *ud)
{
    ui_batchcheck *c = ud;
    cJSON *o = line[0] == '{' ? cJSON_Parse(line) : NULL;
    if (!o) {                  /* a diagnostic: the reason if it fails */
        if (line[0])
            snprintf(c->err, sizeof c->err, "%s", line);
        return;
    }
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, "item");
    char *why = json_strdup(o, "why", 200), *err = json_strdup(o, "error", 300);
    if (err)
        snprintf(c->err, sizeof c->err, "%s", err);
    else if (cJSON_GetObjectItemCaseSensitive(o, "checked"))
        c->ok = true;
    for (size_t i = 0; why && cJSON_IsNumber(it) && i < c->n; i++)
        if ((double)c->items[i] == it->valuedouble && !c->why[i]) {
            c->why[i] = why;
            why = NULL;
        }
    free(why);
    free(err);
    cJSON_Delete(o);
}

static void on_done(bool ok, const char *out, size_t len, const char *why, void *ud)
{
    ui_batchcheck *c = ud;
    (void)out, (void)len;
    c->proc = NULL;
    rd_batchrun *r = c->run;
    if (ok && c->ok) {
        batchrun_checked(r, (const char *const *)c->why);
    } else {
        char err[400];
        snprintf(err, sizeof err, "%s", c->err[0] ? c->err : why ? why : "no answer");
        batchrun_check_failed(r, err);
    }
    check_clear(c);
    app_request_paint(c->app);
}

void batchcheck_ask(ui_batchcheck *c, rd_batchrun *r, const size_t *items, size_t n)
{
    char exe[PATH_MAX];
    check_clear(c);
    if (!realpath("/proc/self/exe", exe)) {
        batchrun_check_failed(r, "cannot find the redrive binary to check with");
        return;
    }
    char **argv = xcalloc(n + 8, sizeof *argv);
    size_t a = 0;
    argv[a++] = xstrdup(exe);
    argv[a++] = xstrdup("batch");
    argv[a++] = xstrdup("check");
    if (app_config_path(c->app))
        argv[a++] = xasprintf("--config=%s", app_config_path(c->app));
    argv[a++] = xstrdup(c->id);
    for (size_t i = 0; i < n; i++)
        argv[a++] = xasprintf("%zu", items[i]);
    c->run = r;
    c->n = n;
    c->items = items;
    c->why = xcalloc(n ? n : 1, sizeof *c->why);
    c->proc = proc_run_argv(app_base(c->app), argv, CHECK_TIMEOUT_S, on_line, on_done, c);
    for (size_t i = 0; i < a; i++)
        free(argv[i]);
    free(argv);
    if (!c->proc) {
        check_clear(c);
        batchrun_check_failed(r, "cannot start the check");
    }
}

void batchcheck_free(ui_batchcheck *c)
{
    if (!c)
        return;
    proc_cancel(c->proc);
    check_clear(c);
    free(c);
}
