#pragma once
/*
 * The one table of subcommands and options. `--help`, the shell completions
 * (`redrive --complete ...`, read by the scripts in completions/ at completion time) and
 * the check every option parser makes first (cli_option_unknown: an option not in the
 * table for its command is refused as unknown) come from it; the parsers themselves
 * (act.c, snapshot.c) still spell the options they take. The view names come from the
 * view table (core/views.h).
 */
#include <stdbool.h>
#include <stdio.h>

/* Where an option is accepted: before any subcommand, or after one of these. */
enum {
    CMD_GLOBAL = 1, CMD_SNAPSHOT = 2, CMD_CHECK = 4, CMD_RETRY = 8,
    CMD_WORKER = 16,        /* drain, undrain, deactivate, activate */
    CMD_CONFIG = 32,        /* config init */
    CMD_BATCH = 64,         /* batch list|resume|abandon */
    CMD_RESOLVE = 128,      /* resolve a store's DLQ entries (Tasker's dlq_update) */
};

/* What an option's value is, for the completions. */
typedef enum { OV_FLAG, OV_FILE, OV_SYSTEM, OV_VIEW, OV_PROFILE, OV_TEXT } cli_optval;

typedef struct cli_option {
    const char *name;       /* "--view" */
    const char *alias;      /* "-y", or NULL */
    cli_optval value;
    const char *metavar;    /* "VIEW" (NULL for a flag) */
    unsigned cmds;          /* CMD_* where it is accepted */
    const char *help;
} cli_option;

/* The command (CMD_*) a subcommand name belongs to; 0 when it is none. */
unsigned cli_command(const char *name);
/* The option arg (exactly "--name" or "--name=VALUE", or its alias) for command cmd;
 * NULL when cmd does not take it. */
const cli_option *cli_option_find(unsigned cmd, const char *arg);
/* true when arg looks like an option ("-x", "--x", "--"; not "-") that cmd does not
 * take; then "PREFIX: unknown argument 'ARG'" (sanitized, with the closest options cmd
 * takes) is printed to stderr. */
bool cli_option_unknown(unsigned cmd, const char *arg, const char *prefix);
/* " (did you mean snapshot?)" for an unknown command name, or "". */
const char *cli_command_suggest(const char *word, char *buf, size_t cap);
/* true when the arguments after command cmd's name hold -h or --help (not as the value of
 * an option, not after "--"). */
bool cli_help_wanted(unsigned cmd, int argc, char **argv);
/* Command name's usage line and options, from the tables; the exit code (2: no such
 * command). */
int cli_usage_print(FILE *out, const char *name);
/* The usage and option list, all from the tables. */
void cli_help_print(FILE *out);
/* `redrive --complete WHAT [COMMAND]`: commands, verbs CMD, views, options [CMD],
 * profiles. Lines NAME<TAB>HELP (options: NAME<TAB>KIND<TAB>HELP). Returns the exit code. */
int cli_complete(int argc, char **argv);
