#pragma once
/* One GET /auth/me with the actor's credentials (actions.h: actor_whoami), internal to
 * the action layer. */
#include "actions.h"
#include "auth.h"

typedef struct whoami_req whoami_req;

/* cb runs exactly once, later, from the loop, unless whoami_cancel() comes first; the
 * request frees itself after cb. auth NULL: without credentials (a reachability probe
 * that never prompts); NULL when that request could not be started. */
whoami_req *whoami_start(rd_auth *auth, rd_http *http, const rd_system_cfg *cfg,
                         rd_whoami_cb cb, void *ud);
void whoami_cancel(whoami_req *w);   /* no callback afterwards */
