/* The one RFC 3339 reader: one row per boundary. */
#include "rfc3339.h"

#include <math.h>
#include <stdio.h>

#include "check.h"

#define BAD(s) { s, false, 0 }
#define OK(s, v) { s, true, v }

static void test_table(void)
{
    static const struct { const char *s; bool ok; double want; } cases[] = {
        /* the epoch, separators: T, t and PostgreSQL's space */
        OK("1970-01-01T00:00:00Z", 0),
        OK("2026-05-01T12:00:00Z", 1777636800),
        OK("2026-05-01t12:00:00z", 1777636800),
        OK("2026-05-01 12:00:00", 1777636800),            /* no zone: UTC */
        OK("2026-05-01 12:00", 1777636800),               /* seconds optional */
        BAD("2026-05-01_12:00:00Z"),
        BAD("2026-05-0112:00:00Z"),
        BAD("2026-05-01"),
        /* fractions, '.' or ',', any number of digits */
        OK("2026-05-01T12:00:00.5Z", 1777636800.5),
        OK("2026-05-01T12:00:00,25Z", 1777636800.25),
        OK("2026-05-01 12:00:00.123456+00", 1777636800.123456),   /* PostgreSQL */
        OK("2026-05-01T12:00:00.000000001Z", 1777636800.000000001),
        BAD("2026-05-01T12:00:00.Z"),
        BAD("2026-05-01T12:00:00."),
        BAD("2026-05-01T12:00:00.5.5Z"),
        /* offsets: +HH, +HHMM, +HH:MM, PostgreSQL's +HH:MM:SS; - behind UTC */
        OK("2026-05-01T14:00:00+02:00", 1777636800),
        OK("2026-05-01T14:00:00+0200", 1777636800),
        OK("2026-05-01T14:00:00+02", 1777636800),
        OK("2026-05-01T06:30:00-05:30", 1777636800),
        OK("2026-05-01T12:00:00-00:00", 1777636800),
        OK("2026-05-01T12:00:00+23:59", 1777636800 - 86340),
        OK("1900-01-01 00:00:00+00:53:28", -2208988800.0 - 3208),
        BAD("2026-05-01T12:00:00+24:00"),
        BAD("2026-05-01T12:00:00+02:60"),
        BAD("2026-05-01T12:00:00+2"),
        BAD("2026-05-01T12:00:00+02:"),
        BAD("2026-05-01T12:00:00+02:0"),
        BAD("2026-05-01T12:00:00+020"),
        BAD("2026-05-01T12:00:00+0200:00"),
        BAD("2026-05-01T12:00:00+02:00:60"),
        BAD("2026-05-01T12:00:00 +02:00"),
        BAD("2026-05-01T12:00:00UTC"),
        BAD("2026-05-01T12:00:00ZZ"),
        /* calendar: leap days, month lengths, field ranges */
        OK("2024-02-29T12:00:00Z", 1709208000),
        OK("2000-02-29T00:00:00Z", 951782400),            /* divisible by 400 */
        BAD("2023-02-29T00:00:00Z"),
        BAD("1900-02-29T00:00:00Z"),                      /* divisible by 100 */
        BAD("2024-02-30T00:00:00Z"),
        OK("2023-12-31T23:59:59Z", 1704067199),
        OK("2023-12-31T23:59:60Z", 1704067200),           /* leap second */
        BAD("2023-12-31T23:59:61Z"),
        BAD("2023-04-31T00:00:00Z"),
        OK("2023-01-31T00:00:00Z", 1675123200),
        BAD("2023-00-10T00:00:00Z"),
        BAD("2023-13-10T00:00:00Z"),
        BAD("2023-01-00T00:00:00Z"),
        BAD("2023-01-32T00:00:00Z"),
        BAD("2023-01-01T24:00:00Z"),
        BAD("2023-01-01T23:60:00Z"),
        OK("1969-12-31T23:59:59Z", -1),
        OK("9999-12-31T23:59:59Z", 253402300799.0),
        /* shape: exact digit counts, no signs or blanks, nothing after */
        BAD("26-05-01T12:00:00Z"),
        BAD("20260-05-01T12:00:00Z"),
        BAD("2026-5-01T12:00:00Z"),
        BAD("2026-05-1T12:00:00Z"),
        BAD("2026-05-01T1:00:00Z"),
        BAD("2026-05-01T12:0:00Z"),
        BAD("2026-05-01T12:00:0Z"),
        BAD(" 2026-05-01T12:00:00Z"),
        BAD("+2026-05-01T12:00:00Z"),
        BAD("2026-05-01T12:00:00Z "),
        BAD("2026-05-01T12:00:00Zjunk"),
        BAD("2026-05-01T12:00:00 BC"),
        BAD("2026-05-01T12:00:00+00 BC"),
        BAD("infinity"),
        BAD(""),
        BAD(NULL),
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        double v = -12345;
        bool ok = rfc3339_parse(cases[i].s, &v);
        CHECK_MSG(ok == cases[i].ok, cases[i].s ? cases[i].s : "NULL");
        if (cases[i].ok && ok) {
            /* absolute: a relative tolerance would hide the fraction */
            char got[96];
            snprintf(got, sizeof got, "%s: got %.9f want %.9f", cases[i].s, v, cases[i].want);
            CHECK_MSG(fabs(v - cases[i].want) < 1e-6, got);
        }
        if (!cases[i].ok)
            CHECK_MSG(v == -12345, "untouched on failure");
    }
}

int main(void)
{
    test_table();
    return check_done("rfc3339");
}
