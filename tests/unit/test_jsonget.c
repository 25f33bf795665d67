/* The cJSON field getters (core/jsonget.h): one row per type and per hostile shape. */
#include "jsonget.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"

static const char doc[] =
    "{\"s\":\"text\",\"empty\":\"\",\"n\":42.9,\"neg\":-1,\"zero\":0,\"big\":1e300,"
    "\"huge\":1e999,\"nul\":null,\"t\":true,\"f\":false,\"o\":{\"rate\":2.5},\"a\":[1],"
    "\"num_s\":\"12\",\"Case\":\"upper\",\"long\":\"abcdefgh\"}";

static void test_str(void)
{
    cJSON *o = cJSON_Parse(doc);
    CHECK_STR(json_str(o, "s"), "text");
    CHECK_STR(json_str(o, "empty"), "");
    CHECK_STR(json_str(o, "n"), NULL);          /* a number is not a string */
    CHECK_STR(json_str(o, "nul"), NULL);
    CHECK_STR(json_str(o, "o"), NULL);
    CHECK_STR(json_str(o, "missing"), NULL);
    CHECK_STR(json_str(o, "case"), NULL);       /* keys are case-sensitive */
    CHECK_STR(json_str(NULL, "s"), NULL);
    CHECK_STR(json_str(o, NULL), NULL);
    CHECK_STR(json_str(cJSON_GetObjectItem(o, "a"), "s"), NULL);   /* not an object */
    char *d = json_strdup(o, "long", 3);
    CHECK_STR(d, "abc");
    free(d);
    d = json_strdup(o, "long", SIZE_MAX);
    CHECK_STR(d, "abcdefgh");
    free(d);
    CHECK(json_strdup(o, "t", 10) == NULL);
    cJSON_Delete(o);
}

static void test_num(void)
{
    cJSON *o = cJSON_Parse(doc);
    CHECK_NEAR(json_num(o, "n", -7), 42.9);
    CHECK_NEAR(json_num(o, "neg", -7), -1);
    CHECK_NEAR(json_num(o, "huge", -7), -7);    /* Inf is absent */
    CHECK_NEAR(json_num(o, "num_s", -7), -7);   /* a string is not a number */
    CHECK_NEAR(json_num(o, "nul", -7), -7);
    CHECK_NEAR(json_num(o, "t", -7), -7);
    CHECK_NEAR(json_num(NULL, "n", -7), -7);
    CHECK(json_long(o, "n", -1, 100) == 42);    /* truncated */
    CHECK(json_long(o, "n", -1, 42) == -1);     /* 42.9 > max */
    CHECK(json_long(o, "zero", -1, 100) == 0);
    CHECK(json_long(o, "neg", -5, 100) == -5);
    CHECK(json_long(o, "big", -5, 1L << 50) == -5);
    CHECK(json_long(o, "huge", -5, 1L << 50) == -5);
    CHECK(json_long(o, "s", -5, 100) == -5);
    CHECK(json_long(o, "missing", 9, 100) == 9);
    CHECK_NEAR(json_num(json_obj(o, "o"), "rate", -1), 2.5);
    cJSON_Delete(o);
}

/* A bound of LONG_MAX: 2^63 and above are beyond a long (the cast would be undefined,
 * LONG_MIN in practice), so absent; just below it an exact double is taken. */
static void test_long_bound(void)
{
    cJSON *o = cJSON_Parse("{\"p63\":9223372036854775808,\"big\":1e300,\"below\":"
                           "9223372036854774784,\"neg\":-1e300}");
    CHECK(json_long(o, "p63", -5, LONG_MAX) == -5);
    CHECK(json_long(o, "big", -5, LONG_MAX) == -5);
    CHECK(json_long(o, "neg", -5, LONG_MAX) == -5);
    CHECK(json_long(o, "below", -5, LONG_MAX) == 9223372036854774784L);
    cJSON_Delete(o);
}

static void test_bool_obj(void)
{
    cJSON *o = cJSON_Parse(doc);
    CHECK(json_true(o, "t"));
    CHECK(!json_true(o, "f"));
    CHECK(!json_true(o, "s"));
    CHECK(!json_true(o, "n"));                  /* 42.9 is not true */
    CHECK(!json_true(o, "missing"));
    CHECK(!json_true(NULL, "t"));
    CHECK(json_obj(o, "o") != NULL);
    CHECK(json_obj(o, "a") == NULL);            /* an array is not an object */
    CHECK(json_obj(o, "s") == NULL);
    CHECK(json_obj(NULL, "o") == NULL);
    CHECK(json_obj(json_obj(o, "missing"), "x") == NULL);
    static const char *const keys[] = { "missing", "empty", "n", "s", "Case" };
    CHECK_STR(json_first_str(o, keys, 5), "text");   /* "" and numbers are skipped */
    CHECK_STR(json_first_str(o, keys, 3), NULL);
    CHECK_STR(json_first_str(NULL, keys, 5), NULL);
    cJSON_Delete(o);
}

/* Hostile documents: duplicate keys (the first wins, as cJSON reads), deep nesting, a
 * NUL escaped inside a string (the string ends there). */
static void test_hostile(void)
{
    cJSON *o = cJSON_Parse("{\"k\":\"first\",\"k\":\"second\",\"z\":\"a\\u0000b\"}");
    CHECK_STR(json_str(o, "k"), "first");
    CHECK_STR(json_str(o, "z"), "a");
    cJSON_Delete(o);
    cJSON *root = cJSON_Parse("\"just a string\"");
    CHECK_STR(json_str(root, "x"), NULL);
    CHECK(json_long(root, "x", 3, 9) == 3);
    cJSON_Delete(root);
}

int main(void)
{
    test_str();
    test_num();
    test_long_bound();
    test_bool_obj();
    test_hostile();
    return check_done("jsonget");
}
