#include "rfc3339.h"

#include <stddef.h>

/* Exactly n decimal digits at *p; -1 otherwise. */
static int digits(const char **p, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        char c = (*p)[i];
        if (c < '0' || c > '9')
            return -1;
        v = v * 10 + (c - '0');
    }
    *p += n;
    return v;
}

static bool leap(long y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int month_days(long y, int m)
{
    static const int days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    return m == 2 && leap(y) ? 29 : days[m - 1];
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static long days_from_civil(long y, int m, int d)
{
    y -= m <= 2;
    long era = (y >= 0 ? y : y - 399) / 400;
    long yoe = y - era * 400;
    long doy = (153L * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* Zone suffix: "", Z, z, +HH, +HHMM, +HH:MM, +HH:MM:SS (PostgreSQL's historic LMT). */
static bool parse_zone(const char *p, long *off)
{
    *off = 0;
    if (*p == '\0')
        return true;
    if (*p == 'Z' || *p == 'z')
        return p[1] == '\0';
    if (*p != '+' && *p != '-')
        return false;
    int sign = *p++ == '-' ? -1 : 1;
    int hh = digits(&p, 2), mm = 0, ss = 0;
    bool colon = *p == ':';
    if (colon)
        p++;
    if (hh >= 0 && (*p || colon))
        mm = digits(&p, 2);
    if (hh >= 0 && mm >= 0 && *p == ':' && colon) {
        p++;
        ss = digits(&p, 2);
    }
    if (hh < 0 || mm < 0 || ss < 0 || hh > 23 || mm > 59 || ss > 59 || *p)
        return false;
    *off = sign * (hh * 3600L + mm * 60L + ss);
    return true;
}

bool rfc3339_parse(const char *s, double *out)
{
    if (!s)
        return false;
    const char *p = s;
    int y = digits(&p, 4);
    if (y < 0 || *p++ != '-')
        return false;
    int mo = digits(&p, 2);
    if (mo < 1 || mo > 12 || *p++ != '-')
        return false;
    int d = digits(&p, 2);
    if (d < 1 || d > month_days(y, mo) || (*p != 'T' && *p != 't' && *p != ' '))
        return false;
    p++;
    int h = digits(&p, 2);
    if (h < 0 || h > 23 || *p++ != ':')
        return false;
    int mi = digits(&p, 2);
    if (mi < 0 || mi > 59)
        return false;
    int sec = 0;
    if (*p == ':') {
        p++;
        sec = digits(&p, 2);
        if (sec < 0 || sec > 60)
            return false;
    }
    double frac = 0, scale = 0.1;
    if (*p == '.' || *p == ',') {
        p++;
        if (*p < '0' || *p > '9')
            return false;
        for (; *p >= '0' && *p <= '9'; p++, scale /= 10)
            frac += (*p - '0') * scale;
    }
    long off;
    if (!parse_zone(p, &off))
        return false;
    /* in double: a long may be 32 bits, and the years go to 9999 */
    *out = (double)days_from_civil(y, mo, d) * 86400.0 +
           (double)(h * 3600L + mi * 60L + sec - off) + frac;
    return true;
}
