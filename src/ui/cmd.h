#pragma once
/* Command mode (':'): the one list of commands, used by the parser and the help screen. */
#include <stdbool.h>
#include <stddef.h>

/* X(ID, "name", "alias or NULL", "usage", "help", takes an argument) */
#define UI_COMMAND_LIST(X) \
    X(OVERVIEW, "overview", "o", "overview", "per-source state, counts, health", false) \
    X(EXECS, "executions", "execs", "executions", "the executions list", false) \
    X(WORKERS, "workers", "w", "workers", "workers by health", false) \
    X(QUEUES, "queues", NULL, "queues", "queue depths and consumers", false) \
    X(DLQ, "dlq", NULL, "dlq", "peek the DLQ (RabbitMQ requeues peeked messages)", false) \
    X(JOURNAL, "journal", NULL, "journal", "your actions from the audit journal", false) \
    X(FLEET, "fleet", NULL, "fleet", "every configured system, worst first", false) \
    X(GROUPS, "groups", "errors", "groups [DURATION]", "error groups: the store's failures of the last hour (or DURATION) by error fingerprint", false) \
    X(HISTORY, "history", NULL, "history", "the last hour as charts", false) \
    X(HELP, "help", "h", "help", "keys and commands", false) \
    X(CHAIN, "chain", NULL, "chain ID", "the retry chain of an execution", true) \
    X(DETAIL, "detail", NULL, "detail ID", "one execution in full: error, backtrace, parameters, result", true) \
    X(JUMP, "jump", NULL, "jump ID", "executions page starting at ID", true) \
    X(FILTER, "filter", "f", "filter status=S text=T error=FP", "filter executions (no argument: clear)", false) \
    X(SYSTEM, "system", NULL, "system NAME", "switch to another configured system", true) \
    X(THEME, "theme", NULL, "theme NAME", "load a theme", true) \
    X(KEYMAP, "keymap", NULL, "keymap NAME", "load a keymap", true) \
    X(RETRY_ALL, "retry-all", NULL, "retry-all [DURATION]", "retry everything the executions filter matches, every page of the store (in the last DURATION)", false) \
    X(BATCH, "batch", NULL, "batch", "the batch put away (escape while it runs), on screen again; none: :batches", false) \
    X(BATCHES, "batches", NULL, "batches", "every batch of every system: progress, rate, state; resume, pause, abort, rate", false) \
    X(REFRESH, "refresh", NULL, "refresh", "poll the sources now", false) \
    X(COCKPIT, "cockpit", NULL, "cockpit WORKER", "the drain cockpit of a worker", true) \
    X(EXPORT, "export", NULL, "export [csv|json] [PATH]", "the current view's data to a file (never overwrites; no PATH: under the data directory)", false) \
    X(EXPORT_FORCE, "export!", NULL, "export! [csv|json] [PATH]", "the same, overwriting PATH", false) \
    X(QUIT, "quit", "q", "q", "quit", false)

typedef enum {
#define UI_X(id, name, alias, usage, help, arg) CMD_##id,
    UI_COMMAND_LIST(UI_X)
#undef UI_X
    CMD__COUNT,
    CMD_NONE = -1,
} ui_cmd_id;

typedef struct ui_command {
    const char *name, *alias, *usage, *help;
    bool needs_arg;
} ui_command;

const ui_command *cmd_info(int i);        /* NULL past the end */
/* "chain 123" → CMD_CHAIN, arg "123". Error text in err when unknown or missing arg. */
ui_cmd_id cmd_parse(const char *line, char *arg, size_t argcap, char *err, size_t errcap);
/* Tab in command mode: the command names starting with the first word of line (only while
 * the line has just that word). out = the line completed as far as every match agrees
 * (one match: the name and a blank); list = the matches, blank-separated. Returns how many
 * matched. */
size_t cmd_complete(const char *line, char *out, size_t outcap, char *list, size_t listcap);
