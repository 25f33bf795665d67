/* The one table of views (core/views.h): names, parts, and that the JSON, text and export
 * writers all follow it. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "export.h"
#include "model_json.h"
#include "views.h"

static void test_table(void)
{
    char names[200];
    view_names(names, sizeof names, false);
    CHECK_STR(names, "overview, executions, chain, execution, workers, queues, dlq, groups, fleet, history");
    view_names(names, sizeof names, true);
    CHECK_STR(names, "executions, chain, workers, queues, dlq, groups");
    const rd_view *v;
    for (size_t i = 0; (v = view_at(i)); i++) {
        CHECK(view_find(v->name) == v);
        CHECK_MSG(!v->listed || (v->help && *v->help), v->name);
    }
    CHECK(view_find("chain")->needs_id && !view_find("dlq")->needs_id);
    CHECK(view_find("execution")->needs_id && view_find("execution")->mask == (VPART_SOURCES | VPART_DETAIL));
    CHECK(view_find("fleet")->mask == 0);              /* every system, not one model */
    CHECK(view_find("history")->mask == VPART_HISTORY && !view_find("history")->exportable);
    CHECK(!view_find("all")->listed && !view_find("cache")->listed);
    CHECK(view_find("nope") == NULL && view_find(NULL) == NULL);
    view_names(names, 12, false);                      /* truncated at a whole name */
    CHECK_STR(names, "overview");
}

/* Each part of a view's mask is one table in the text and one array in the JSON. */
static void test_writers_follow_the_mask(void)
{
    rd_model *m = model_new();
    static const struct { const char *view, *text, *json; } cases[] = {
        { "executions", "EXECUTIONS", "\"executions\":" }, { "workers", "WORKERS", "\"workers\":" },
        { "queues", "QUEUES", "\"queues\":" },             { "groups", "ERROR GROUPS", "\"groups\":" },
        { "chain", "RETRY CHAIN", "\"chain\":" },        { "execution", "EXECUTION", "\"execution\":" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *t = model_to_text(m, cases[i].view, 0);
        char *j = model_to_json_at(m, cases[i].view, 0);
        CHECK_MSG(t && strstr(t, cases[i].text), cases[i].view);
        CHECK_MSG(j && strstr(j, cases[i].json), cases[i].view);
        /* the overview's own tables are not in a one-part view */
        CHECK_MSG(t && !strstr(t, "COUNTS"), cases[i].view);
        free(t);
        free(j);
    }
    char *t = model_to_text(m, "overview", 0);
    CHECK(t && strstr(t, "COUNTS") && strstr(t, "EXECUTIONS") && strstr(t, "WORKERS") && strstr(t, "QUEUES"));
    CHECK(t && strstr(t, "COUNTS") < strstr(t, "EXECUTIONS") && strstr(t, "WORKERS") < strstr(t, "QUEUES"));
    free(t);
    char err[200];
    CHECK(export_render(m, "fleet", EXPORT_CSV, 0, err, sizeof err) == NULL);
    CHECK_STR(err, "nothing to export in the fleet view (executions, chain, workers, queues, dlq, groups)");
    model_free(m);
}

int main(void)
{
    test_table();
    test_writers_follow_the_mask();
    return check_done("views");
}
