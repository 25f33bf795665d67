#pragma once
/*
 * Decoding of one Alakai ExecutionRecord (the JSON value of one attempt field):
 * {status, attempt, errorCode, errorMessage, taskSnapshot, dispatchedAt, resolvedAt}.
 * Defensive: anything malformed is reported in `why`, never a crash. Pure (fuzzable).
 */
#include <stdbool.h>
#include <stddef.h>

enum { RD_REC_ERROR_CAP = 1024, RD_REC_NAME_CAP = 96 };

typedef struct rd_alakai_rec {
    char status[32];         /* lower-cased; "" when missing/invalid */
    int attempt;             /* record's own attempt number, -1 missing */
    char code[64];           /* errorCode, "" none */
    char *error;             /* errorMessage (capped), NULL none; caller frees */
    char *name;              /* a name from taskSnapshot (name/type/taskType), NULL none */
    double dispatched_at;    /* epoch s, 0 unknown */
    double resolved_at;
    char why[112];           /* "" when valid, else why the record is malformed */
} rd_alakai_rec;

/* Decodes data[0..len) (not NUL-terminated). false when malformed (out->why says why;
 * the fields that could be read are still filled). Always call alakai_rec_clear. */
bool alakai_rec_decode(const char *data, size_t len, rd_alakai_rec *out);
/* The two readers alakai_rec_decode chooses between (for the fuzzer, which compares them):
 * the scanner reads the usual record without building a tree and returns false when it
 * declines (out untouched; *valid set otherwise); the tree reader (cJSON) reads anything. */
bool alakai_rec_scan(const char *data, size_t len, rd_alakai_rec *out, bool *valid);
bool alakai_rec_decode_tree(const char *data, size_t len, rd_alakai_rec *out);
void alakai_rec_clear(rd_alakai_rec *r);
/* One task in full (core/detail.h) from its newest attempt's record data[0..len) (NULL:
 * not fetched, too large): the decoded fields, taskSnapshot as the parameters, the whole
 * record as the result; attempts = the task's attempt count; malloc'd JSON. */
char *alakai_rec_detail(const char *id, const char *data, size_t len, int attempts, int max_attempts);
/* Epoch seconds from a JSON-ish timestamp: RFC 3339 text, or a number / numeric text
 * in seconds or milliseconds (values > 1e11 are read as ms). false when unreadable. */
bool alakai_parse_time(const char *s, double *out);
/* An attempt field name: decimal 1..999999 without sign/leading zeros → value, else -1. */
int alakai_field_num(const char *s, size_t len);
