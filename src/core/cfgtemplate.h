#pragma once
/*
 * `redrive config init`: the commented config template of one profile. Every key the
 * profile's store, DLQ source and semantics use, with what it means; the keys a system
 * needs are set (the store as a secret reference to an environment variable, which
 * `redrive check` reports as not set until it is), the rest commented out with an example.
 * Secrets appear only as references (env:NAME), never as values.
 */
#include "profile.h"

/* The template for a [system "system"] section of profile p (loaded as profile_name).
 * Newly allocated. */
char *cfgtemplate_render(const rd_profile *p, const char *profile_name, const char *system);
/* The environment variable prefix of a system: REDRIVE_ and the name upper-cased, every
 * character but A-Z and 0-9 made '_' (into buf). */
void cfgtemplate_env_prefix(const char *system, char *buf, size_t cap);
