#pragma once
/*
 * An error group's short id: the first GROUPID_LEN hex digits of the FNV-1a 64-bit hash of
 * its fingerprint's text (fingerprint.h). FNV-1a has no seed and no platform dependence, so
 * an id is the same on every build, run and machine for the same fingerprint. Accepted
 * wherever a fingerprint is (`retry --group`, `:filter error=`, `snapshot --group`): a
 * prefix of GROUPID_MIN to 16 hex digits names the one group of a list whose hash starts
 * with it; resolving uses the store's groups (storegroups.h), never the loaded page.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "groups.h"

enum { GROUPID_LEN = 6, GROUPID_MIN = 3, GROUPID_MAX = 16 };

uint64_t groupid_hash(const char *fp);                  /* FNV-1a 64 of the text ("" for NULL) */
void groupid_make(const char *fp, char out[GROUPID_LEN + 1]);
/* GROUPID_MIN..GROUPID_MAX hex digits (either case): can be an id (prefix). */
bool groupid_shaped(const char *text);

typedef enum {
    GROUPID_FP,       /* not an id and not a listed group's fingerprint: a fingerprint as given */
    GROUPID_FOUND,    /* *at: the group named (by its fingerprint or an id prefix) */
    GROUPID_NONE,     /* an id that names no listed group (why says so, with did-you-mean) */
    GROUPID_MANY,     /* an id prefix of several groups (why names them) */
} groupid_result;

/* Resolves text among the n groups g (the store's): a listed fingerprint or an id prefix. */
groupid_result groupid_resolve(const rd_group *g, size_t n, const char *text, size_t *at, char *why,
                               size_t cap);
