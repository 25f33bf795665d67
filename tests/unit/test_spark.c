/* Sparklines and charts (core/spark.h): gaps, zeros, scaling, resampling, ASCII. */
#include "spark.h"

#include <math.h>

#include "check.h"

int main(void)
{
    char buf[256];
    float v[8] = {0, 1, 2, 4, 8, NAN, 8, 0};
    CHECK_NEAR(spark_line(v, 8, 8, false, buf, sizeof buf), 8);
    CHECK_STR(buf, "▁▂▂▄█ █▁");
    spark_line(v, 8, 8, true, buf, sizeof buf);
    CHECK_STR(buf, "_..:# #_");
    /* resampled to 4 cells: each the highest of two */
    spark_line(v, 8, 4, false, buf, sizeof buf);
    CHECK_STR(buf, "▂▄██");
    /* stretched to 16 cells */
    spark_line(v, 8, 16, true, buf, sizeof buf);
    CHECK_STR(buf, "__....::##  ##__");
    /* all gaps: blanks; all zeros: the lowest mark */
    float gaps[3] = {NAN, NAN, NAN}, zeros[3] = {0, 0, 0};
    CHECK_NEAR(spark_line(gaps, 3, 3, false, buf, sizeof buf), 0);
    CHECK_STR(buf, "   ");
    spark_line(zeros, 3, 3, false, buf, sizeof buf);
    CHECK_STR(buf, "▁▁▁");
    /* too small a buffer: cut at a whole cell, still terminated */
    char small[8];
    spark_line(v, 8, 8, false, small, sizeof small);
    CHECK_STR(small, "▁▂");
    /* a chart of 2 rows: 16 eighths */
    char top[64], bottom[64];
    char *rows[2] = {top, bottom};
    float c[4] = {0, 4, 8, NAN};
    CHECK_NEAR(spark_chart(c, 4, 4, 2, false, rows, 64), 8);
    CHECK_STR(top, "  █ ");
    CHECK_STR(bottom, "▁██ ");
    spark_chart(c, 4, 4, 2, true, rows, 64);
    CHECK_STR(top, "  # ");
    CHECK_STR(bottom, "_## ");
    /* width 0: an empty line */
    spark_line(v, 8, 0, false, buf, sizeof buf);
    CHECK_STR(buf, "");
    return check_done("spark");
}
