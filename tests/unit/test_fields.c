/* The record tables (core/model_tables.c) serve every writer: a record whose every field
 * in its table is set reads back from the JSON snapshot equal, field by field; the CSV
 * headings are fields of the tables. (That every member of a struct has a row is
 * tools/structs.py --check, the test fields_cover.) */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "export.h"
#include "model.h"
#include "model_json.h"
#include "model_tables.h"
#include "xalloc.h"

static const double NOW = 1700000900;

/* Every field of rec set to a value of its own, none the default (i makes them distinct). */
static void populate(const rd_record *r, void *rec, const char *source)
{
    for (size_t i = 0; i < r->n; i++) {
        const rd_field *f = &r->fields[i];
        char *p = (char *)rec + f->off;
        if (f->flags & (FF_NOREAD | FF_NOJSON))
            continue;
        switch (f->kind) {
        case FK_STR:
            if (f->flags & FF_BORROWED)
                *(const char **)p = source;
            else
                *(char **)p = xasprintf("v-%s", f->key);
            break;
        case FK_BUF: snprintf(p, f->size, "b-%s", f->key); break;
        case FK_INT: *(int *)p = (int)(10 + i); break;
        case FK_LONG: *(long *)p = (long)(100 + i); break;
        case FK_RATE: *(double *)p = 1.0 / (double)(i + 2); break;   /* a fraction: in (0, 1] */
        case FK_TIME: *(double *)p = 1700000000 + (double)i; break;
        case FK_BOOL: *(bool *)p = true; break;
        case FK_FLAG: *(unsigned *)p |= (unsigned)f->size; break;
        case FK_NAME: break;
        case FK_TEST: f->set(rec, true); break;
        case FK_AGE:
        case FK_STRUCT: break;
        }
    }
}

/* rec and back agree on every field the snapshot keeps. */
static void check_same(const rd_record *r, const void *rec, const void *back)
{
    for (size_t i = 0; i < r->n; i++) {
        const rd_field *f = &r->fields[i];
        char ctx[96];
        snprintf(ctx, sizeof ctx, "%s.%s", r->name, f->key);
        if (f->flags & (FF_NOJSON | FF_NOREAD))
            continue;               /* not in the snapshot, or not read back */
        switch (f->kind) {
        case FK_STR:
        case FK_BUF:
        case FK_NAME: {
            const char *a = field_str(f, rec), *b = field_str(f, back);
            CHECK_MSG(a && b && strcmp(a, b) == 0, ctx);
            break;
        }
        case FK_INT:
        case FK_LONG:
        case FK_BOOL:
        case FK_FLAG:
            CHECK_MSG(field_long(f, rec) == field_long(f, back) && field_long(f, rec) > 0, ctx);
            break;
        case FK_TEST:               /* derived from another field */
            CHECK_MSG(field_long(f, rec) == field_long(f, back), ctx);
            break;
        case FK_RATE:
        case FK_TIME:
        case FK_AGE:
            CHECK_MSG(field_num(f, rec) == field_num(f, back) && field_num(f, rec) > 0, ctx);
            break;
        case FK_STRUCT:
            break;
        }
    }
}

static void test_round_trip(void)
{
    rd_model *m = model_new();
    rd_execution *e = xcalloc(1, sizeof *e);
    rd_worker *w = xcalloc(1, sizeof *w);
    rd_queue *q = xcalloc(1, sizeof *q);
    rd_dlq_entry *d = xcalloc(1, sizeof *d);
    rd_count *c = xcalloc(1, sizeof *c);
    populate(&exec_record, e, NULL);
    e->elig.verdict = RD_ELIG_CONFIG_ERROR;   /* the name wins over retry_eligible */
    populate(&worker_record, w, NULL);
    w->health = RD_HEALTH_DEGRADED;
    populate(&queue_record, q, "sqs");
    populate(&dlq_record, d, "sqs");
    populate(&count_record, c, NULL);
    populate(&core_record, &m->core, NULL);
    m->core.state = RD_CORE_ERROR;
    rd_source_status *src = model_source(m, "redis");
    populate(&source_record, src, NULL);
    src->state = RD_SRC_STALE;
    model_set_execs(m, e, 1, true);
    model_set_workers(m, w, 1);
    model_set_queues(m, "sqs", q, 1);
    model_dlq_set(m, "sqs", d, 1);
    model_set_counts(m, c, 1);

    char *json = model_to_json_at(m, "all", NOW), err[100];
    rd_model *back = model_new();
    CHECK(model_from_json(back, json, NOW, err, sizeof err));
    char *again = model_to_json_at(back, "all", NOW);
    CHECK_STR(again, json);
    CHECK(back->execs.n == 1 && back->workers.n == 1 && back->queues.n == 1 &&
          back->dlq.n == 1 && back->counts.n == 1 && back->sources.n == 1);
    if (back->execs.n && back->workers.n && back->queues.n && back->dlq.n && back->counts.n) {
        check_same(&exec_record, m->execs.items, back->execs.items);
        check_same(&worker_record, m->workers.items, back->workers.items);
        check_same(&queue_record, m->queues.items, back->queues.items);
        check_same(&dlq_record, m->dlq.items, back->dlq.items);
        check_same(&count_record, m->counts.items, back->counts.items);
        check_same(&core_record, &m->core, &back->core);
        if (back->sources.n)
            check_same(&source_record, m->sources.items, back->sources.items);
    }
    free(json);
    free(again);
    model_free(back);
    model_free(m);
}

/* record_copy duplicates every owned string of the table: equal values, other pointers. */
static void test_copy(void)
{
    rd_worker w = { 0 }, c;
    populate(&worker_record, &w, NULL);
    w.health = RD_HEALTH_HEALTHY;
    record_copy(&worker_record, &c, &w);
    check_same(&worker_record, &w, &c);
    for (size_t i = 0; i < worker_record.n; i++) {
        const rd_field *f = &worker_record.fields[i];
        if (f->kind == FK_STR)
            CHECK_MSG(field_str(f, &c) != field_str(f, &w), f->key);
    }
    worker_clear(&w);
    worker_clear(&c);
}

/* Each CSV heading is a field of the view's record table ("eligible" heads eligibility). */
static void test_csv_headers(void)
{
    static const struct { const char *view; const rd_record *r; size_t cols; } views[] = {
        { "executions", &exec_record, 14 }, { "chain", &exec_record, 14 },
        { "workers", &worker_record, 12 },  { "queues", &queue_record, 8 },
        { "dlq", &dlq_record, 10 },
    };
    rd_model *m = model_new();
    for (size_t v = 0; v < sizeof views / sizeof *views; v++) {
        char err[200];
        char *csv = export_render(m, views[v].view, EXPORT_CSV, NOW, err, sizeof err);
        CHECK_MSG(csv != NULL, views[v].view);
        if (!csv)
            continue;
        size_t n = 0;
        for (char *tok = strtok(csv, ",\r\n"); tok; tok = strtok(NULL, ",\r\n"), n++) {
            const char *key = strcmp(tok, "eligible") == 0 ? "eligibility" : tok;
            CHECK_MSG(record_field(views[v].r, key) != NULL, tok);
        }
        CHECK_MSG(n == views[v].cols, views[v].view);
        free(csv);
    }
    model_free(m);
}

/* The top-level values move the generation only through their setters, once per change. */
static void test_setters(void)
{
    rd_model *m = model_new();
    uint64_t g = m->generation;
    model_set_orphan_suspects(m, 3);
    CHECK(m->orphan_suspects == 3 && m->generation == g + 1);
    model_set_orphan_suspects(m, 3);
    CHECK(m->generation == g + 1);
    model_set_orphan_suspects(m, -7);
    CHECK(m->orphan_suspects == -1 && m->generation == g + 2);
    model_set_execs_window(m, 5000, true);
    CHECK(m->execs_searched == 5000 && m->execs_newer && m->generation == g + 3);
    model_set_execs_window(m, 5000, true);
    CHECK(m->generation == g + 3);
    model_set_execs_window(m, -1, false);
    CHECK(m->execs_searched == 0 && !m->execs_newer && m->generation == g + 4);
    model_free(m);
}

int main(void)
{
    test_round_trip();
    test_copy();
    test_csv_headers();
    test_setters();
    return check_done("fields");
}
