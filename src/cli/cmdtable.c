#include "cmdtable.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "../core/datafile.h"
#include "../core/sanitize.h"
#include "../core/suggest.h"
#include "../core/views.h"
#include "../actions/batchrec.h"
#include "../session/session.h"

typedef struct cli_cmd {
    const char *name;
    unsigned cmd;
    const char *verb;       /* the one word that must follow (config init), or NULL */
    const char *args;       /* operands for the usage line, or NULL */
    const char *help;
} cli_cmd;

static const cli_cmd commands[] = {
    { "snapshot", CMD_SNAPSHOT, NULL, NULL, "print the model once (text or JSON)" },
    { "check", CMD_CHECK, NULL, NULL, "is the setup right?" },
    { "retry", CMD_RETRY, NULL, "ID...", "retry executions" },
    { "drain", CMD_WORKER, NULL, "WORKER...", "drain (cordon) a worker" },
    { "undrain", CMD_WORKER, NULL, "WORKER...", "undrain (uncordon) a worker" },
    { "deactivate", CMD_WORKER, NULL, "WORKER...", "mark a worker inactive" },
    { "activate", CMD_WORKER, NULL, "WORKER...", "mark a worker active" },
    { "resolve", CMD_RESOLVE, NULL, "ENTRY...", "resolve DLQ entries (Tasker's tasks_dlq, through the core)" },
    { "config", CMD_CONFIG, "init", "[PATH]", "write a commented config template" },
    { "batch", CMD_BATCH, NULL, "list|show ID|resume ID|abandon ID", "resumable batches: list, show, resume, abandon" },
};

/* The words that follow a command when it takes several (config's one is its `verb`):
 * completed in the shells; batch.c reads the same words. */
static const struct { unsigned cmd; const char *name, *help; } verbs[] = {
    { CMD_BATCH, "list", "the resumable batches of every system" },
    { CMD_BATCH, "show", "ID: the batch, its items and what became of their retries" },
    { CMD_BATCH, "resume", "ID: send what the batch has left" },
    { CMD_BATCH, "abandon", "ID: give up the batch's unsent items" },
};

enum { ACT = CMD_RETRY | CMD_WORKER | CMD_RESOLVE, DLQ_SET = CMD_RETRY | CMD_RESOLVE,
       CMD_ANY = 255 };

static const cli_option options[] = {
    { "--config", NULL, OV_FILE, "FILE", CMD_GLOBAL | ACT | CMD_BATCH,
      "configuration file (default $XDG_CONFIG_HOME/redrive/config)" },
    { "--system", NULL, OV_SYSTEM, "NAME", CMD_GLOBAL | CMD_CHECK | ACT | CMD_BATCH,
      "system section to use (default: the first)" },
    { "--theme", NULL, OV_TEXT, "NAME", CMD_GLOBAL, "theme name or file" },
    { "--keymap", NULL, OV_TEXT, "NAME", CMD_GLOBAL, "keymap name or file" },
    { "--read-only", NULL, OV_FLAG, NULL, CMD_GLOBAL | ACT, "hide and refuse every action" },
    { "--ascii", NULL, OV_FLAG, NULL, CMD_GLOBAL | CMD_CHECK, "ASCII-only drawing (terminals without UTF-8)" },
    { "--no-mouse", NULL, OV_FLAG, NULL, CMD_GLOBAL, "do not capture the mouse" },
    { "--yes", "-y", OV_FLAG, NULL, CMD_GLOBAL | ACT | CMD_BATCH, "do not ask for confirmation (CLI actions)" },
    { "--help", "-h", OV_FLAG, NULL, CMD_ANY, "this text; after a command, its usage" },
    { "--version", "-V", OV_FLAG, NULL, CMD_GLOBAL, "the version" },
    { "--json", NULL, OV_FLAG, NULL, CMD_SNAPSHOT | CMD_CHECK | CMD_BATCH, "JSON output" },
    { "--view", NULL, OV_VIEW, "VIEW", CMD_SNAPSHOT, "the view to print (views below)" },
    { "--status", NULL, OV_TEXT, "STATUS", CMD_SNAPSHOT | CMD_RETRY, "only executions of this status (retry: every page of the store)" },
    { "--filter", NULL, OV_TEXT, "TEXT", CMD_SNAPSHOT | DLQ_SET, "only executions matching the text (--dlq: entries)" },
    { "--dlq", NULL, OV_FLAG, NULL, DLQ_SET, "the store's DLQ entries (every page): retry their executions, or resolve them" },
    { "--dlq-reason", NULL, OV_TEXT, "REASON", DLQ_SET, "with --dlq: only the entries of this reason" },
    { "--dlq-queue", NULL, OV_TEXT, "QUEUE", DLQ_SET, "with --dlq: only the entries of this queue" },
    { "--group", NULL, OV_TEXT, "ID|FINGERPRINT", CMD_RETRY | CMD_SNAPSHOT, "the error group with this id (groups view's ID, a prefix) or fingerprint: retry it (every page of the store); snapshot --view executions: its members, from the store" },
    { "--since", NULL, OV_TEXT, "DUR", CMD_RETRY | CMD_SNAPSHOT, "retry: only executions created in this window (30m, 1h, 2d); snapshot --view groups: the window of failures (default 1h)" },
    { "--limit", NULL, OV_TEXT, "N", DLQ_SET, "select at most N executions (default 100000)" },
    { "--select-only", NULL, OV_FLAG, NULL, DLQ_SET, "with --status/--group/--dlq: select and stage the batch record, send nothing; JSON lines on stdout (the console's whole-set actions)" },
    { "--rate", NULL, OV_TEXT, "N", DLQ_SET | CMD_BATCH, "requests per second (default: the system's rate_limit)" },
    { "--concurrency", NULL, OV_TEXT, "N", DLQ_SET | CMD_BATCH, "requests in flight at once, 1 to 64 (default: the system's batch_concurrency, 8)" },
    { "--verbose", "-v", OV_FLAG, NULL, DLQ_SET | CMD_BATCH, "name each target held back (default: counts by reason)" },
    { "--canary", NULL, OV_TEXT, "N", CMD_RETRY | CMD_BATCH, "send N first, wait for their outcome in the store, go on only if at most --max-refail fail again (default: the system's batch_canary, 0: none)" },
    { "--canary-wait", NULL, OV_TEXT, "DUR", CMD_RETRY | CMD_BATCH, "how long the canary's outcome is waited for (default: batch_canary_wait, 5m)" },
    { "--max-refail", NULL, OV_TEXT, "PCT", CMD_RETRY | CMD_BATCH, "the share failing again (same error group) above which the canary and the breaker pause the batch (default: batch_max_refail, 50%)" },
    { "--resend-unknown", NULL, OV_FLAG, NULL, CMD_BATCH, "resume: re-send exactly the items that may have reached the core, with their keys" },
    { "--for", NULL, OV_TEXT, "SECONDS", CMD_SNAPSHOT, "keep polling this long first (trends; 0 to 600)" },
    { "--history", NULL, OV_FLAG, NULL, CMD_SNAPSHOT, "with --json: the last hour the console recorded, as \"history\"" },
    { "--reason", NULL, OV_TEXT, "TEXT", ACT, "why, for the audit journal and the core" },
    { "--idempotency-key", NULL, OV_TEXT, "KEY", ACT, "re-send one earlier request with the same key" },
    { "--override-loop", NULL, OV_FLAG, NULL, CMD_RETRY,
      "retry even a retry loop (a manual retry that failed the same way)" },
    { "--force", NULL, OV_FLAG, NULL, ACT | CMD_BATCH,
      "send what the guards hold back: ineligible executions, loop retries, a drain with warnings; batch resume: a record older than batch_max_age" },
    { "--profile", NULL, OV_PROFILE, "NAME", CMD_CONFIG, "the template's profile (default attune)" },
    { "--system", NULL, OV_TEXT, "NAME", CMD_CONFIG, "the template's system name (default: the profile's)" },
};

#define COUNT(a) (sizeof (a) / sizeof *(a))

static const char *const kinds[] = { "flag", "file", "system", "view", "profile", "text" };

unsigned cli_command(const char *name)
{
    for (size_t i = 0; name && i < COUNT(commands); i++)
        if (strcmp(name, commands[i].name) == 0)
            return commands[i].cmd;
    return 0;
}

static bool option_is(const cli_option *o, const char *arg)
{
    size_t n = strlen(o->name);
    if (strncmp(arg, o->name, n) == 0 && (arg[n] == '\0' || (arg[n] == '=' && o->value != OV_FLAG)))
        return true;
    return o->alias && strcmp(arg, o->alias) == 0;
}

const cli_option *cli_option_find(unsigned cmd, const char *arg)
{
    for (size_t i = 0; arg && i < COUNT(options); i++)
        if ((options[i].cmds & cmd) && option_is(&options[i], arg))
            return &options[i];
    return NULL;
}

bool cli_option_unknown(unsigned cmd, const char *arg, const char *prefix)
{
    if (arg[0] != '-' || !arg[1] || cli_option_find(cmd, arg))
        return false;
    char *clean = sanitize_str(arg, 0), name[SUGGEST_NAME], hint[256];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(clean, "="), clean);
    suggest s;
    suggest_init(&s, name);
    for (size_t i = 0; i < COUNT(options); i++)
        if (options[i].cmds & cmd)
            suggest_add(&s, options[i].name);
    fprintf(stderr, "%s: unknown argument '%.100s'%s\n", prefix, clean, suggest_text(&s, hint, sizeof hint));
    free(clean);
    return true;
}

const char *cli_command_suggest(const char *word, char *buf, size_t cap)
{
    suggest s;
    suggest_init(&s, word);
    for (size_t i = 0; i < COUNT(commands); i++)
        suggest_add(&s, commands[i].name);
    return suggest_text(&s, buf, cap);
}

bool cli_help_wanted(unsigned cmd, int argc, char **argv)
{
    for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return true;
        const cli_option *o = cli_option_find(cmd, argv[i]);
        if (o && o->value != OV_FLAG && !strchr(argv[i], '='))
            i++;                           /* its value, even "--help" */
    }
    return false;
}

/* " [--json] [--view VIEW] ..." of the options cmd takes after its name, wrapped under
 * column 100 (col: the line's length so far). */
static void usage_options(FILE *out, unsigned cmd, int col)
{
    for (size_t i = 0; i < COUNT(options); i++) {
        const cli_option *o = &options[i];
        if (!(o->cmds & cmd))
            continue;
        char item[64];
        int n = snprintf(item, sizeof item, " [%s%s%s]", o->name, o->metavar ? " " : "",
                         o->metavar ? o->metavar : "");
        if (col + n > 100) {
            fputs("\n          ", out);
            col = 10;
        }
        fputs(item, out);
        col += n;
    }
}

static void option_line(FILE *out, const cli_option *o, bool where)
{
    char left[64];
    snprintf(left, sizeof left, "%s%s%s%s%s", o->name, o->alias ? ", " : "", o->alias ? o->alias : "",
             o->metavar ? " " : "", o->metavar ? o->metavar : "");
    fprintf(out, "  %-22s %s", left, o->help);
    if (where) {
        fputs(" (", out);
        const char *sep = "";
        for (size_t i = 0; i < COUNT(commands); i++)
            if ((o->cmds & commands[i].cmd) && (i == 0 || commands[i - 1].cmd != commands[i].cmd)) {
                fprintf(out, "%s%s", sep, commands[i].cmd == CMD_WORKER ? "drain etc." : commands[i].name);
                sep = ", ";
            }
        fputc(')', out);
    }
    fputc('\n', out);
}

/* "redrive [options] NAME VERB ARGS" of commands[i], its length. */
static int usage_head(FILE *out, const cli_cmd *c)
{
    int col = fprintf(out, "%s%s", c->cmd == CMD_CONFIG ? "redrive " : "redrive [options] ", c->name);
    if (c->verb)
        col += fprintf(out, " %s", c->verb);
    if (c->args)
        col += fprintf(out, " %s", c->args);
    return col;
}

int cli_usage_print(FILE *out, const char *name)
{
    for (size_t i = 0; i < COUNT(commands); i++) {
        const cli_cmd *c = &commands[i];
        if (strcmp(c->name, name) != 0)
            continue;
        fputs("usage: ", out);
        usage_options(out, c->cmd, 7 + usage_head(out, c));
        fprintf(out, "\n\n%s\n\noptions:\n", c->help);
        for (size_t k = 0; k < COUNT(options); k++)
            if (options[k].cmds & c->cmd)
                option_line(out, &options[k], false);
        fputs("\nOptions before the command are the global ones (redrive --help). See redrive(1).\n", out);
        return fflush(out) == 0 ? 0 : 1;
    }
    return 2;
}

static void usage_lines(FILE *out)
{
    fputs("usage: redrive [options]                 the console\n", out);
    for (size_t i = 0; i < COUNT(commands); i++) {
        const cli_cmd *c = &commands[i];
        if (i > 0 && commands[i - 1].cmd == c->cmd)
            continue;                      /* printed with the first of its group */
        int col = fprintf(out, "%s", c->cmd == CMD_CONFIG ? "       redrive " : "       redrive [options] ");
        for (size_t k = i; k < COUNT(commands) && commands[k].cmd == c->cmd; k++)
            col += fprintf(out, "%s%s", k > i ? "|" : "", commands[k].name);
        if (c->verb)
            col += fprintf(out, " %s", c->verb);
        if (c->args)
            col += fprintf(out, " %s", c->args);
        usage_options(out, c->cmd, col);
        fputc('\n', out);
    }
}

static const char *name_id(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s ID", name);
    return buf;
}

void cli_help_print(FILE *out)
{
    usage_lines(out);
    fputs("\ncommands:\n", out);
    for (size_t i = 0; i < COUNT(commands); i++)
        fprintf(out, "  %-22s %s\n", commands[i].verb ? "config init" : commands[i].name, commands[i].help);
    fputs("\nviews (snapshot --view VIEW):\n", out);
    const rd_view *v;
    char name[40];
    for (size_t i = 0; (v = view_at(i)); i++)
        if (v->listed)
            fprintf(out, "  %-22s %s\n", v->needs_id ? name_id(name, sizeof name, v->name) : v->name,
                    v->help);
    fputs("\noptions (before the command; some also after it):\n", out);
    for (size_t i = 0; i < COUNT(options); i++)
        if (options[i].cmds & CMD_GLOBAL)
            option_line(out, &options[i], false);
    fputs("\ncommand options (after the command):\n", out);
    for (size_t i = 0; i < COUNT(options); i++)
        if (!(options[i].cmds & CMD_GLOBAL))
            option_line(out, &options[i], true);
    fputs("\nNO_COLOR in the environment turns colours off. See redrive(1).\n", out);
}

/* Profile names (NAME.profile) in the directories datafile_find() searches, each once.
 * Only the names a profile can be asked for by (datafile_plain_name): a file name is
 * outside text, and one holding a control byte (an escape sequence, a tab or a newline that
 * would break the NAME<TAB>help lines) or a blank never reaches the shell. */
static void complete_profiles(void)
{
    char *dirs[DATAFILE_MAX_DIRS + 1];
    datafile_dirs(DATA_PROFILES, dirs);
    char seen[2048] = "\n";
    for (size_t d = 0; dirs[d]; d++) {
        DIR *dir = opendir(dirs[d]);
        for (struct dirent *e; dir && (e = readdir(dir));) {
            size_t n = strlen(e->d_name);
            char stem[256], key[300];
            if (n <= 8 || n > 250 || strcmp(e->d_name + n - 8, ".profile") != 0)
                continue;
            snprintf(stem, sizeof stem, "%.*s", (int)(n - 8), e->d_name);
            snprintf(key, sizeof key, "\n%s\n", stem);
            if (!datafile_plain_name(stem) || strstr(seen, key) ||
                strlen(seen) + strlen(key) >= sizeof seen)
                continue;
            strcat(seen, key + 1);
            printf("%s\tprofile\n", stem);
        }
        if (dir)
            closedir(dir);
    }
    datafile_dirs_free(dirs);
}

static const char complete_usage[] =
    "usage: redrive --complete commands|verbs CMD|views|options [CMD]|profiles|batches\n";

/* The batches `batch resume` / `abandon` take, newest last: ID<TAB>system action state.
 * Read from the state directory (no config); a damaged record is left out. */
static void complete_batches(void)
{
    char *jpath = session_journal_path(), why[256];
    rd_batch_info *v = NULL;
    size_t n = 0;
    batchrec_list(jpath, &v, &n, why, sizeof why);
    free(jpath);
    for (size_t i = 0; i < n; i++)
        if (!v[i].damaged) {
            char *s = sanitize_str(v[i].system, 0), *act = sanitize_str(v[i].action, 0);
            printf("%s\t%s %s %s\n", v[i].id, s, act, batch_info_state(&v[i]));
            free(s);
            free(act);
        }
    batch_infos_free(v, n);
}

int cli_complete(int argc, char **argv)
{
    const char *what = argc > 0 ? argv[0] : "", *of = argc > 1 ? argv[1] : NULL;
    unsigned cmd = of ? cli_command(of) : CMD_GLOBAL;
    if (argc > 2 || !cmd) {
        fputs(complete_usage, stderr);
        return 2;
    }
    const rd_view *v;
    if (strcmp(what, "commands") == 0 && !of) {
        for (size_t i = 0; i < COUNT(commands); i++)
            printf("%s\t%s\n", commands[i].name, commands[i].help);
    } else if (strcmp(what, "verbs") == 0 && of) {
        for (size_t i = 0; i < COUNT(commands); i++)
            if (commands[i].verb && strcmp(commands[i].name, of) == 0)
                printf("%s\t%s\n", commands[i].verb, commands[i].help);
        for (size_t i = 0; i < COUNT(verbs); i++)
            if (verbs[i].cmd == cmd)
                printf("%s\t%s\n", verbs[i].name, verbs[i].help);
    } else if (strcmp(what, "views") == 0 && !of) {
        for (size_t i = 0; (v = view_at(i)); i++)
            if (v->listed)
                printf("%s\t%s\n", v->name, v->help);
    } else if (strcmp(what, "options") == 0) {
        for (size_t i = 0; i < COUNT(options); i++)
            if (options[i].cmds & cmd)
                printf("%s\t%s\t%s\n", options[i].name, kinds[options[i].value], options[i].help);
    } else if (strcmp(what, "profiles") == 0 && !of) {
        complete_profiles();
    } else if (strcmp(what, "batches") == 0 && !of) {
        complete_batches();
    } else {
        fputs(complete_usage, stderr);
        return 2;
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
