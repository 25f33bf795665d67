/* pg_sql_inline (src/sources/pg_changes.c): a statement's parameters written in as
 * literals, outside quotes, comments and dollar-quoted strings only. */
#include <stdlib.h>
#include <string.h>

#include "../../src/sources/pg_changes.h"
#include "check.h"

int main(void)
{
    static const char *const p[] = { NULL, "101", "it's", NULL, NULL, NULL, NULL, NULL, NULL,
                                     NULL, "ten" };
    static const struct { const char *sql, *want; int np; } cases[] = {
        { "SELECT $1::text, $2::int", "SELECT NULL::text, '101'::int", 2 },
        { "x = $3", "x = 'it''s'", 3 },                          /* a quote doubled */
        { "LIMIT $2", "LIMIT '101'", 2 },
        { "$11 + $1", "'ten' + NULL", 11 },                       /* two digits, not $1 + 1 */
        { "'$1' || $2", "'$1' || '101'", 2 },                     /* inside a string: kept */
        { "'it''s $1' || $2", "'it''s $1' || '101'", 2 },
        { "E'\\' $1' || $2", "E'\\' $1' || '101'", 2 },           /* E'' escapes a quote */
        { "\"a$1\" = $2", "\"a$1\" = '101'", 2 },                  /* a quoted identifier */
        { "-- $1 here\n$2", "-- $1 here\n'101'", 2 },             /* a comment */
        { "/* $1 */ $2", "/* $1 */ '101'", 2 },
        { "$$ $1 $$ || $tag$ $2 $tag$ || $2", "$$ $1 $$ || $tag$ $2 $tag$ || '101'", 2 },
        { "a$1 + $2", "a$1 + '101'", 2 },                          /* an identifier's $ */
        { "no parameters", "no parameters", 0 },
        /* what cannot be read is refused: the caller runs the statement with parameters */
        { "SELECT $3", NULL, 2 },                                  /* beyond np */
        { "SELECT $0", NULL, 2 },
        { "SELECT 'open $1", NULL, 2 },
        { "SELECT /* open $1", NULL, 2 },
        { "SELECT $q$ open", NULL, 2 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *got = pg_sql_inline(cases[i].sql, cases[i].np, p);
        CHECK_STR(got, cases[i].want);
        free(got);
    }
    return check_done("pg_inline");
}
