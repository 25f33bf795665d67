#pragma once
/*
 * One field table per record of the model (docs/architecture.md "Adding a field"): each
 * member of rd_execution, rd_worker, rd_queue, rd_dlq_entry, rd_count, rd_core_status and
 * rd_source_status
 * is named once here with its offset, its kind and its snapshot name (model_fields.h).
 * The JSON writer and reader, the text snapshot, the CSV export and the *_clear functions
 * walk these tables; a member missing from its table is caught by tools/structs.py --check.
 */
#include <stdbool.h>
#include <stddef.h>

#include "model.h"

typedef enum {
    FK_STR,     /* char *, NULL unknown; owned unless FF_BORROWED */
    FK_BUF,     /* char[size], "" unknown */
    FK_INT,     /* int, < 0 unknown (read: 0..1e9, def otherwise) */
    FK_LONG,    /* long, < 0 unknown (read: 0..2^50, def otherwise) */
    FK_RATE,    /* double, < 0 unknown */
    FK_TIME,    /* double epoch seconds, 0 unknown (written in ms precision) */
    FK_BOOL,    /* bool */
    FK_FLAG,    /* the bit `size` of an unsigned */
    FK_NAME,    /* an enum written as name(rec), read back by parse(rec, s) */
    FK_TEST,    /* derived bool test(rec), read back by set(rec, b) */
    FK_AGE,     /* derived: seconds since the FK_TIME at off (written only) */
    FK_STRUCT,  /* written by the record's own code: a nested object or array named key
                 * (FF_NOJSON: a member of the object before it, or not written) */
} rd_fkind;

enum {
    FF_BORROWED = 1u << 0,  /* FK_STR not owned: not freed, not read (set by the merge) */
    FF_NOREAD   = 1u << 1,  /* written, not read back (an alias or a derived value) */
    FF_NOJSON   = 1u << 2,  /* not in the snapshot (computed on load, or internal) */
    FF_RAW      = 1u << 3,  /* FK_INT/LONG written as is, even < 0 */
    FF_POSITIVE = 1u << 4,  /* FK_INT/LONG: 0 unknown too (written null unless > 0) */
    FF_EMPTY_NULL = 1u << 5, /* FK_BUF: "" written as null */
    FF_MS       = 1u << 6,  /* FK_AGE: in whole milliseconds, never < 0 */
};

typedef struct rd_field {
    const char *key;        /* MF_* (model_fields.h) */
    const char *member;     /* the C member's name (tools/structs.py checks coverage) */
    size_t off;             /* offsetof the member in the record */
    rd_fkind kind;
    size_t size;            /* FK_BUF: capacity; FK_FLAG: the bit */
    long def;               /* FK_INT/LONG: read when absent or out of range */
    unsigned flags;         /* FF_* */
    bool (*when)(const void *rec);          /* written only when true (NULL: always) */
    const char *(*name)(const void *rec);   /* FK_NAME; FK_STR: the value written */
    void (*parse)(void *rec, const char *s); /* FK_NAME: s read back (NULL when absent) */
    bool (*test)(const void *rec);          /* FK_TEST */
    void (*set)(void *rec, bool b);         /* FK_TEST: a JSON bool read back */
} rd_field;

typedef struct rd_record {
    const char *name;       /* "execution" */
    size_t size;            /* sizeof the record */
    const rd_field *fields;
    size_t n;
} rd_record;

extern const rd_record exec_record, worker_record, queue_record, dlq_record, count_record,
    core_record, source_record;

/* The field named key (first match), NULL when none. */
const rd_field *record_field(const rd_record *r, const char *key);
/* Member access of f in rec. */
const char *field_str(const rd_field *f, const void *rec);   /* FK_STR/BUF/NAME; NULL unknown */
long field_long(const rd_field *f, const void *rec);         /* FK_INT/LONG/BOOL/FLAG */
double field_num(const rd_field *f, const void *rec);        /* FK_RATE/TIME/AGE base */
/* A deep copy of from into to: the owned strings duplicated, the borrowed ones NULL (the
 * merge sets them again). */
void record_copy(const rd_record *r, void *to, const void *from);
/* Frees the owned strings of rec and zeroes it. */
void record_clear(const rd_record *r, void *rec);
