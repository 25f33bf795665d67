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

/* auth_check's verdict for cfg: "ok" or its message. */
static const char *verdict(rd_loop *l, const rd_system_cfg *cfg)
{
    static char why[512];
    rd_auth *a = auth_new(l, NULL, cfg);
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
    rd_system_cfg c;
    memset(&c, 0, sizeof c);
    char empty[] = "", some[] = "x", loop_url[] = "http://127.0.0.1:1",
         far_url[] = "https://core.example";
    char bearer[] = "bearer", key[] = "api-key", cmd[] = "token-command", jwt[] = "jwt-login",
         dev[] = "dev-user", none[] = "none", bogus[] = "Bogus";
    c.core.url = loop_url;

    c.core.auth = bearer;
    CHECK_STR(verdict(l, &c), "auth = bearer needs token = env:NAME, file:PATH or cmd:COMMAND");
    c.core.token = empty;
    CHECK_STR(verdict(l, &c), "ok");
    c.core.auth = key;
    c.core.token = NULL;
    CHECK_STR(verdict(l, &c), "auth = api-key needs token = env:NAME, file:PATH or cmd:COMMAND");
    c.core.token = some;
    CHECK_STR(verdict(l, &c), "ok");

    c.core.auth = cmd;
    CHECK_STR(verdict(l, &c), "auth = token-command needs token_command");
    c.core.token_command = empty;
    CHECK_STR(verdict(l, &c), "auth = token-command needs token_command");
    c.core.token_command = some;
    CHECK_STR(verdict(l, &c), "ok");

    c.core.auth = jwt;
    CHECK_STR(verdict(l, &c), "auth = jwt-login needs login");
    c.core.login = empty;
    CHECK_STR(verdict(l, &c), "auth = jwt-login needs login");
    c.core.login = some;
    CHECK_STR(verdict(l, &c), "ok");

    c.core.auth = dev;
    CHECK_STR(verdict(l, &c), "auth = dev-user needs dev_user");
    c.core.dev_user = empty;
    CHECK_STR(verdict(l, &c), "auth = dev-user needs dev_user");
    c.core.dev_user = some;
    CHECK_STR(verdict(l, &c), "dev-user is refused: only for a loopback core URL on a system "
              "marked local = true");
    c.local = true;
    CHECK_STR(verdict(l, &c), "ok");
    c.core.url = far_url;
    CHECK_STR(verdict(l, &c), "dev-user is refused: only for a loopback core URL on a system "
              "marked local = true");

    c.core.auth = none;
    CHECK_STR(verdict(l, &c), "ok");
    c.core.auth = bogus;
    CHECK_STR(verdict(l, &c), "unknown auth mode 'Bogus' (bearer, token-command, jwt-login, "
              "api-key, dev-user or none)");
    loop_free(l);
    return check_done("auth_check");
}
