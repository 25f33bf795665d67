#pragma once
/* The command-line subcommands. The global options (rd_opts) and the exit codes live in
 * the session (session.h); the console is ui_main (ui/ui.h). */
#include "../session/session.h"

/* argv[0] is the subcommand name. Return the process exit code. */
int cli_snapshot(const rd_opts *opts, int argc, char **argv);   /* cli/snapshot.c */
int cli_action(const rd_opts *opts, int argc, char **argv);     /* cli/act.c */
int cli_check(const rd_opts *opts, int argc, char **argv);      /* cli/check.c */
int cli_version(void);                                          /* cli/version.c */
int cli_batch(const rd_opts *opts, int argc, char **argv);      /* cli/batch.c */
int cli_config(const rd_opts *opts, int argc, char **argv);     /* cli/config_init.c */
