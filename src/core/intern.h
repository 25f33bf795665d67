#pragma once
/*
 * A reference-counted set of byte strings: one copy of each distinct text, however many
 * holders it has (the Redis task index keeps one error text for the thousands of tasks that
 * failed the same way). Ids are small integers from 1, reused once their last holder drops
 * them, so a table under churn stays the size of what is held (the texts in one arena:
 * ~len + 1 bytes a text, dropped ones reclaimed when it would grow). Pure data structure.
 */
#include <stddef.h>
#include <stdint.h>

typedef struct intern intern;

intern *intern_new(void);
void intern_free(intern *in);

/* The id of s[0..len) (len bytes, NUL bytes allowed), one more reference to it; added when
 * new. Never 0. */
uint32_t intern_add(intern *in, const char *s, size_t len);
/* The id of s[0..len) when held, else 0; takes no reference. */
uint32_t intern_find(const intern *in, const char *s, size_t len);
/* One reference less; the text is freed with the last one. id 0 is ignored. */
void intern_drop(intern *in, uint32_t id);
/* The text of a held id (NUL-terminated after its len bytes; valid until the next
 * intern_add: the texts share one arena, which may move), and its length. */
const char *intern_str(const intern *in, uint32_t id);
size_t intern_len(const intern *in, uint32_t id);
uint32_t intern_refs(const intern *in, uint32_t id);
size_t intern_count(const intern *in);            /* distinct texts held */
/* Bytes the table holds: texts (with a fixed allowance per allocation), entries, hash slots.
 * Computed from sizes, not from malloc: the same on every machine. */
size_t intern_bytes(const intern *in);
