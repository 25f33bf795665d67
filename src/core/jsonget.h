#pragma once
/*
 * The one set of cJSON field getters: o[k] of one type, or "absent". Outside JSON is
 * hostile: a missing key, a NULL object, a field of another type, NaN/Inf and numbers out
 * of range all read as absent (the default), never as a crash or a wrapped integer.
 * Keys are matched case-sensitively.
 */
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

/* The string o[k] (borrowed), NULL when absent or not a string. */
const char *json_str(const cJSON *o, const char *k);
/* The same, newly allocated and capped at max bytes; NULL when absent. */
char *json_strdup(const cJSON *o, const char *k, size_t max);
/* The finite number o[k], def otherwise. */
double json_num(const cJSON *o, const char *k, double def);
/* The number o[k] as an integer when it is finite and in [0, max] (truncated), def
 * otherwise (null, missing, negative, absurd). */
long json_long(const cJSON *o, const char *k, long def, long max);
/* o[k] is JSON true. */
bool json_true(const cJSON *o, const char *k);
/* The object o[k] (borrowed), NULL when absent or not an object. */
const cJSON *json_obj(const cJSON *o, const char *k);
/* The first of o[keys[0..n)] that is a non-empty string (borrowed), NULL when none is. */
const char *json_first_str(const cJSON *o, const char *const *keys, size_t n);
