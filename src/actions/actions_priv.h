#pragma once
/*
 * Between the actor (actions.c, which owns rd_actor) and its batches (actions_batch.c,
 * which owns rd_batch): each struct is opaque to the other file. Internal to the action
 * layer.
 */
#include "actions.h"

typedef struct rd_auth rd_auth;

/* ---- actions.c: what a batch reads of its actor ---- */
rd_loop *actor_base(const rd_actor *a);
rd_http *actor_http(const rd_actor *a);
rd_auth *actor_auth(const rd_actor *a);
const rd_system_cfg *actor_cfg(const rd_actor *a);
long actor_timeout_ms(const rd_actor *a);
const char *actor_journal_path(const rd_actor *a);   /* NULL: journal_default_path() */
/* The journal's writer (jwriter.h), NULL when the actor has no loop: write directly. */
struct rd_jwriter *actor_jwriter(const rd_actor *a);
/* The profile in use now (a schema era's variant, else the system's). */
const rd_profile *actor_profile(const rd_actor *a);
/* Who the journal names: the core's identity once known, else the local user. */
const char *actor_operator(const rd_actor *a);
/* The head of the actor's list of running batches (linked by actions_batch.c). */
rd_batch **actor_batches(rd_actor *a);
/* actions_batch.c links a batch: actor_free then calls detach on the list (each batch
 * stopped, what is in flight journaled as unknown, its actor forgotten, freed unless
 * inside a callback). The actor calls up into its batches only through this. */
void actor_keep_batches(rd_actor *a, void (*detach)(rd_batch **head));
/* A journal write failed: the console's status line, else stderr. */
void actor_journal_failed(rd_actor *a, const char *why);
/* true (with why, journaled as refused where an action was asked) when nothing of
 * targets[0..n) may be sent: actor_can_act, the profile's routes, empty ids, no journal. */
bool actor_refuses(rd_actor *a, rd_action kind, const rd_target *t, size_t n,
                   char *why, size_t whycap);
/* "PARENT/ID" or "ID", allocated: a target as the journal names it. */
char *action_target_text(const char *id, const char *parent);

