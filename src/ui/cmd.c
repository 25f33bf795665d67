#include "cmd.h"

#include <stdio.h>
#include <string.h>

#include "../core/suggest.h"

static const ui_command command_table[CMD__COUNT] = {
#define UI_X(id, name, alias, usage, help, arg) {name, alias, usage, help, arg},
    UI_COMMAND_LIST(UI_X)
#undef UI_X
};

const ui_command *cmd_info(int i)
{
    return i >= 0 && i < CMD__COUNT ? &command_table[i] : NULL;
}

size_t cmd_complete(const char *line, char *out, size_t outcap, char *list, size_t listcap)
{
    snprintf(out, outcap, "%s", line);
    if (listcap)
        list[0] = 0;
    const char *word = line;
    while (*word == ' ' || *word == ':')
        word++;
    if (strpbrk(word, " \t"))
        return 0;
    size_t lead = (size_t)(word - line), wl = strlen(word), n = 0, common = 0, used = 0;
    const char *first = NULL;
    for (int i = 0; i < CMD__COUNT; i++) {
        const char *name = command_table[i].name;
        if (strncmp(name, word, wl) != 0)
            continue;
        if (!first) {
            first = name;
            common = strlen(name);
        }
        while (common && strncmp(first, name, common) != 0)
            common--;
        if (used < listcap)
            used += (size_t)snprintf(list + used, listcap - used, "%s%s", n ? " " : "", name);
        n++;
    }
    if (n)
        snprintf(out, outcap, "%.*s%.*s%s", (int)lead, line, (int)common, first, n == 1 ? " " : "");
    return n;
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
    char word[SUGGEST_NAME], hint[200];
    snprintf(word, sizeof word, "%.*s", (int)(n < sizeof word ? n : sizeof word - 1), line);
    suggest sg;
    suggest_init(&sg, word);
    for (int i = 0; i < CMD__COUNT; i++)
        suggest_add(&sg, command_table[i].name);
    snprintf(err, errcap, "unknown command '%.*s'%s (see ? for the list)", (int)(n > 40 ? 40 : n), line,
             suggest_text(&sg, hint, sizeof hint));
    return CMD_NONE;
}
