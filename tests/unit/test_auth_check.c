/* auth_check (actions/auth.h), the static check of a system's auth settings: each mode's
 * missing setting named in one message ("auth = MODE needs WHAT"), an empty token
 * accepted (only unset is missing), the others refused when empty too. The config parser
 * refuses most of these first; this pins the check itself. */
#include "../../src/actions/auth.h"
#include "../../src/core/config.h"
#include "../../src/io/loop.h"

#include <stdio.h>
#include <string.h>

#include "check.h"

#define TOKEN_REF "token = env:NAME, file:PATH or cmd:COMMAND"
#define DEV_REFUSED "dev-user is refused: only for a loopback core URL on a system marked " \
    "local = true"
#define LOOP "http://127.0.0.1:1"

/* One system's settings (NULL: unset) and auth_check's verdict: "ok" or its message. */
typedef struct {
    const char *auth, *token, *token_command, *login, *dev_user, *url;
    bool local;
    const char *want;
} auth_case;

static const auth_case cases[] = {
    { "bearer", NULL, NULL, NULL, NULL, LOOP, false, "auth = bearer needs " TOKEN_REF },
    { "bearer", "", NULL, NULL, NULL, LOOP, false, "ok" },
    { "api-key", NULL, NULL, NULL, NULL, LOOP, false, "auth = api-key needs " TOKEN_REF },
    { "api-key", "x", NULL, NULL, NULL, LOOP, false, "ok" },
    { "token-command", NULL, NULL, NULL, NULL, LOOP, false,
      "auth = token-command needs token_command" },
    { "token-command", NULL, "", NULL, NULL, LOOP, false,
      "auth = token-command needs token_command" },
    { "token-command", NULL, "x", NULL, NULL, LOOP, false, "ok" },
    { "jwt-login", NULL, NULL, NULL, NULL, LOOP, false, "auth = jwt-login needs login" },
    { "jwt-login", NULL, NULL, "", NULL, LOOP, false, "auth = jwt-login needs login" },
    { "jwt-login", NULL, NULL, "x", NULL, LOOP, false, "ok" },
    { "dev-user", NULL, NULL, NULL, NULL, LOOP, true, "auth = dev-user needs dev_user" },
    { "dev-user", NULL, NULL, NULL, "", LOOP, true, "auth = dev-user needs dev_user" },
    { "dev-user", NULL, NULL, NULL, "x", LOOP, false, DEV_REFUSED },
    { "dev-user", NULL, NULL, NULL, "x", "https://core.example", true, DEV_REFUSED },
    { "dev-user", NULL, NULL, NULL, "x", LOOP, true, "ok" },
    { "none", NULL, NULL, NULL, NULL, LOOP, false, "ok" },
    { "Bogus", NULL, NULL, NULL, NULL, LOOP, false,
      "unknown auth mode 'Bogus' (bearer, token-command, jwt-login, api-key, dev-user or none)" },
};

/* auth_check's verdict for one case: "ok" or its message. */
static const char *verdict(rd_loop *l, const auth_case *k)
{
    static char why[512];
    char auth[32], token[8], cmd[8], login[8], dev[8], url[64];
    rd_system_cfg c;
    memset(&c, 0, sizeof c);
    c.core.auth = k->auth ? strcpy(auth, k->auth) : NULL;
    c.core.token = k->token ? strcpy(token, k->token) : NULL;
    c.core.token_command = k->token_command ? strcpy(cmd, k->token_command) : NULL;
    c.core.login = k->login ? strcpy(login, k->login) : NULL;
    c.core.dev_user = k->dev_user ? strcpy(dev, k->dev_user) : NULL;
    c.core.url = strcpy(url, k->url);
    c.local = k->local;
    rd_auth *a = auth_new(l, NULL, &c);
    why[0] = '\0';
    if (auth_check(a, why, sizeof why))
        snprintf(why, sizeof why, "ok");
    auth_free(a);
    return why;
}

int main(void)
{
    rd_loop *l = loop_new();
    CHECK(l != NULL);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        CHECK_STR(verdict(l, &cases[i]), cases[i].want);
    loop_free(l);
    return check_done("auth_check");
}
