/* The ':' command line: one row per case, with the exact argument or error. */
#include "cmd.h"

#include <stdio.h>
#include <string.h>

#include "check.h"

static void test_table(void)
{
    static const struct {
        const char *line;
        ui_cmd_id id;
        const char *arg, *err;    /* err only checked when id is CMD_NONE */
    } cases[] = {
        { "q", CMD_QUIT, "", NULL },
        { "quit", CMD_QUIT, "", NULL },
        { ":q", CMD_QUIT, "", NULL },
        { " : :quit  ", CMD_QUIT, "", NULL },
        { "o", CMD_OVERVIEW, "", NULL },
        { "execs", CMD_EXECS, "", NULL },
        { "executions", CMD_EXECS, "", NULL },
        { "w", CMD_WORKERS, "", NULL },
        { "chain 123", CMD_CHAIN, "123", NULL },
        { "chain\t 42 \t", CMD_CHAIN, "42", NULL },
        { "jump a b  c", CMD_JUMP, "a b  c", NULL },
        { "f status=failed text=a b", CMD_FILTER, "status=failed text=a b", NULL },
        { "filter", CMD_FILTER, "", NULL },             /* no argument: clear */
        { "system prod", CMD_SYSTEM, "prod", NULL },
        { "theme light", CMD_THEME, "light", NULL },
        { "keymap safe", CMD_KEYMAP, "safe", NULL },
        { "refresh now", CMD_REFRESH, "now", NULL },    /* extra words are the caller's */
        { "", CMD_NONE, "", "empty command" },
        { ":", CMD_NONE, "", "empty command" },
        { "   ", CMD_NONE, "", "empty command" },
        { "chain", CMD_NONE, "", "usage: :chain ID" },
        { "chain   ", CMD_NONE, "", "usage: :chain ID" },
        { "jump", CMD_NONE, "", "usage: :jump ID" },
        { "system", CMD_NONE, "", "usage: :system NAME" },
        { "theme", CMD_NONE, "", "usage: :theme NAME" },
        { "keymap", CMD_NONE, "", "usage: :keymap NAME" },
        { "frob", CMD_NONE, "", "unknown command 'frob' (see ? for the list)" },
        { "frob x", CMD_NONE, "x", "unknown command 'frob' (see ? for the list)" },
        { "Quit", CMD_NONE, "", "unknown command 'Quit' (did you mean quit?) (see ? for the list)" },
        { "qu", CMD_NONE, "", "unknown command 'qu' (did you mean queues or quit?) (see ? for the list)" },
        { "quitx", CMD_NONE, "", "unknown command 'quitx' (did you mean quit?) (see ? for the list)" },
        { "wokers", CMD_NONE, "", "unknown command 'wokers' (did you mean workers?) (see ? for the list)" },
        { "x123456789012345678901234567890123456789012345",
          CMD_NONE, "", "unknown command 'x123456789012345678901234567890123456789' "
          "(see ? for the list)" },              /* the name is cut at 40 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char arg[64] = "untouched", err[128] = "";
        ui_cmd_id id = cmd_parse(cases[i].line, arg, sizeof arg, err, sizeof err);
        CHECK_MSG(id == cases[i].id, cases[i].line);
        CHECK_STR(arg, cases[i].arg);
        if (cases[i].id == CMD_NONE)
            CHECK_STR(err, cases[i].err);
    }
    /* the argument is cut to its buffer */
    char arg[4], err[8];
    CHECK(cmd_parse("jump 123456", arg, sizeof arg, err, sizeof err) == CMD_JUMP);
    CHECK_STR(arg, "123");
}

/* Tab in command mode: one row per case, the completed line and the matches. */
static void test_complete(void)
{
    static const struct {
        const char *line, *out, *list;
        size_t n;
    } cases[] = {
        { "ex", "ex", "executions export export!", 3 },
        { "exp", "export", "export export!", 2 },
        { "export!", "export! ", "export!", 1 },
        { "sys", "system ", "system", 1 },
        { ":wo", ":workers ", "workers", 1 },
        { "  ch", "  chain ", "chain", 1 },
        { "", "", "overview executions workers queues dlq journal fleet groups history help chain detail jump "
              "filter system theme keymap retry-all batch batches refresh cockpit export export! quit", 25 },
        { "batc", "batch", "batch batches", 2 },
        { "zz", "zz", "", 0 },
        { "chain 12", "chain 12", "", 0 },      /* past the name: nothing to complete */
        { "w", "workers ", "workers", 1 },       /* names only: the alias "w" is not offered */
        { "ret", "retry-all ", "retry-all", 1 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char out[64], list[256];
        size_t n = cmd_complete(cases[i].line, out, sizeof out, list, sizeof list);
        CHECK_MSG(n == cases[i].n, cases[i].line);
        CHECK_STR(list, cases[i].list);
        CHECK_STR(out, cases[i].out);
    }
}

/* Every command in the one list parses by name and by alias. */
static void test_list(void)
{
    for (int i = 0; i < CMD__COUNT; i++) {
        const ui_command *c = cmd_info(i);
        CHECK(c != NULL);
        char line[64], arg[16], err[64];
        snprintf(line, sizeof line, "%s%s", c->name, c->needs_arg ? " 7" : "");
        CHECK_MSG(cmd_parse(line, arg, sizeof arg, err, sizeof err) == (ui_cmd_id)i, line);
        if (c->alias) {
            snprintf(line, sizeof line, "%s%s", c->alias, c->needs_arg ? " 7" : "");
            CHECK_MSG(cmd_parse(line, arg, sizeof arg, err, sizeof err) == (ui_cmd_id)i, line);
        }
    }
    CHECK(cmd_info(-1) == NULL && cmd_info(CMD__COUNT) == NULL);
}

int main(void)
{
    test_table();
    test_list();
    test_complete();
    return check_done("cmd");
}
