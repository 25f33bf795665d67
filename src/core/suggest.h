#pragma once
/*
 * "Did you mean": the known names closest to a misspelled one. Every place that looks a
 * name up (subcommands, systems, statuses, views, config keys, profiles, console
 * commands) feeds its known names to one collector and appends suggest_text() to its
 * refusal, so a typo is answered the same way on the command line and in the console.
 */
#include <stddef.h>

#define SUGGEST_MAX 3
#define SUGGEST_NAME 64     /* longer candidates are not offered */

typedef struct suggest {
    char word[SUGGEST_NAME];
    size_t n;
    size_t dist[SUGGEST_MAX];   /* all the same: the smallest */
    char best[SUGGEST_MAX][SUGGEST_NAME];
} suggest;

/* Optimal-string-alignment Damerau-Levenshtein distance, ASCII case folded. */
size_t suggest_distance(const char *a, const char *b);
void suggest_init(suggest *s, const char *word);
/* Offer one known name (copied). Kept are the first SUGGEST_MAX of the closest names
 * offered, when close enough: distance at most a third of the word's length (at least
 * 1); a name the word (2+ characters) is the start of counts as that far. */
void suggest_add(suggest *s, const char *name);
/* " (did you mean a, b or c?)", or "" when nothing is close; buf's size is cap. */
const char *suggest_text(const suggest *s, char *buf, size_t cap);
/* The same over an array of names. */
const char *suggest_among(const char *word, const char *const *names, size_t n, char *buf,
                          size_t cap);
