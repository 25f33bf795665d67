#include "cmd.h"

#include <stdio.h>
#include <string.h>

static const ui_command command_table[CMD__COUNT] = {
#define UI_X(id, name, alias, usage, help, arg) {name, alias, usage, help, arg},
    UI_COMMAND_LIST(UI_X)
#undef UI_X
};

const ui_command *cmd_info(int i)
{
    return i >= 0 && i < CMD__COUNT ? &command_table[i] : NULL;
}

ui_cmd_id cmd_parse(const char *line, char *arg, size_t argcap, char *err, size_t errcap)
{
    while (*line == ' ' || *line == ':')
        line++;
    size_t n = strcspn(line, " \t");
    const char *rest = line + n;
    while (*rest == ' ' || *rest == '\t')
        rest++;
    snprintf(arg, argcap, "%s", rest);
    for (size_t l = strlen(arg); l && (arg[l - 1] == ' ' || arg[l - 1] == '\t');)
        arg[--l] = 0;
    if (n == 0) {
        snprintf(err, errcap, "empty command");
        return CMD_NONE;
    }
    for (int i = 0; i < CMD__COUNT; i++) {
        const ui_command *c = &command_table[i];
        bool hit = (strlen(c->name) == n && strncmp(line, c->name, n) == 0) ||
                   (c->alias && strlen(c->alias) == n && strncmp(line, c->alias, n) == 0);
        if (!hit)
            continue;
        if (c->needs_arg && !arg[0]) {
            snprintf(err, errcap, "usage: :%s", c->usage);
            return CMD_NONE;
        }
        return (ui_cmd_id)i;
    }
    snprintf(err, errcap, "unknown command '%.*s' (see ? for the list)", (int)(n > 40 ? 40 : n), line);
    return CMD_NONE;
}
