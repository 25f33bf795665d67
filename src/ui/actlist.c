#include "actlist.h"

#include <string.h>

static const ui_action_info action_table[UA__COUNT] = {
#define UI_X(id, name, label, help, keys, flags) {name, label, help, keys, flags},
    UI_ACTION_LIST(UI_X)
#undef UI_X
};

const ui_action_info *actlist_info(ui_action a)
{
    if ((int)a < 0 || a >= UA__COUNT)
        return NULL;
    return &action_table[a];
}

ui_action actlist_find(const char *name)
{
    for (int i = 0; i < UA__COUNT; i++)
        if (strcmp(action_table[i].name, name) == 0)
            return (ui_action)i;
    return UA_NONE;
}
