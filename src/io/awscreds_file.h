#pragma once
/*
 * The shared-file reader of awscreds.c on text already read (~/.aws/credentials,
 * ~/.aws/config): one profile's keys. Internal to io/awscreds.c; exposed for the fuzz
 * harness (tests/fuzz/fuzz_awscreds.c).
 */
#include <stdbool.h>
#include <stddef.h>

typedef struct prof_vals {
    char *ak, *sk, *tok, *process, *region;     /* NULL when absent; the first one wins */
} prof_vals;

/* Adds profile `name`'s keys from INI text (text[0..len)) to v; path
 * names the file in the reader's messages. config: the config file, whose sections are
 * "profile NAME" (except "default"). */
void awscreds_profile_parse(const char *path, const char *text, size_t len, const char *name,
                            bool config, prof_vals *v);
/* Frees v's members (secrets wiped) and zeroes it. */
void prof_vals_free(prof_vals *v);
