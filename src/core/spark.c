/* Sparklines and charts (spark.h). */
#include "spark.h"

#include <math.h>
#include <string.h>

static const char *const BLOCKS[9] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
static const char ASCII_LINE[9] = " _.-:=+*#";
static const char ASCII_FILL[9] = " _..::++#";

float spark_cells(const float *v, int n, int width, float *cells)
{
    float top = 0;
    for (int c = 0; c < width; c++) {
        int a = n > 0 ? (int)((long)c * n / width) : 0;
        int b = n > 0 ? (int)((long)(c + 1) * n / width) : 0;
        if (b <= a)
            b = a + 1;
        float best = NAN;
        for (int i = a; i < b && i < n; i++)
            if (!isnan(v[i]) && (isnan(best) || v[i] > best))
                best = v[i];
        cells[c] = best;
        if (!isnan(best) && best > top)
            top = best;
    }
    return top;
}

/* eighths of a cell of height rows for x against top: a zero is 1 eighth, anything above
 * zero at least 2, so the two never look the same */
static int eighths(float x, float top, int rows)
{
    if (isnan(x))
        return 0;
    int full = rows * 8;
    if (x <= 0 || top <= 0)
        return 1;
    int u = (int)lroundf(x / top * (float)full);
    return u < 2 ? 2 : u > full ? full : u;
}

/* appends one cell; false (nothing written) when it does not fit with the NUL */
static bool put_cell(char *out, size_t *at, size_t cap, int fill, bool ascii, bool line)
{
    const char *s = ascii ? NULL : BLOCKS[fill];
    char one[2] = {ascii ? (line ? ASCII_LINE : ASCII_FILL)[fill] : 0, 0};
    if (ascii)
        s = one;
    size_t len = strlen(s);
    if (*at + len + 1 > cap)
        return false;
    memcpy(out + *at, s, len);
    *at += len;
    return true;
}

float spark_line(const float *v, int n, int width, bool ascii, char *out, size_t cap)
{
    return spark_chart(v, n, width, 1, ascii, &out, cap);
}

enum { SPARK_MAX_W = 1024 };

float spark_chart(const float *v, int n, int width, int height, bool ascii, char **lines,
                  size_t cap)
{
    float cells[SPARK_MAX_W];
    if (width > SPARK_MAX_W)
        width = SPARK_MAX_W;
    if (width < 0)
        width = 0;
    float top = spark_cells(v, n, width, cells);
    for (int r = 0; r < height; r++) {
        size_t at = 0;
        int base = (height - 1 - r) * 8;           /* eighths below this row */
        for (int c = 0; c < width; c++) {
            int u = eighths(cells[c], top, height) - base;
            int fill = u <= 0 ? 0 : u > 8 ? 8 : u;
            if (!put_cell(lines[r], &at, cap, fill, ascii, height == 1))
                break;
        }
        if (cap)
            lines[r][at] = '\0';
    }
    return top;
}
