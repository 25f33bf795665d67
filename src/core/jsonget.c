#include "jsonget.h"

#include <limits.h>
#include <math.h>

#include "xalloc.h"

static const cJSON *field(const cJSON *o, const char *k)
{
    return o && k ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

const char *json_str(const cJSON *o, const char *k)
{
    const cJSON *v = field(o, k);
    return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

char *json_strdup(const cJSON *o, const char *k, size_t max)
{
    const char *s = json_str(o, k);
    return s ? xstrndup(s, max) : NULL;
}

double json_num(const cJSON *o, const char *k, double def)
{
    const cJSON *v = field(o, k);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : def;
}

long json_long(const cJSON *o, const char *k, long def, long max)
{
    double d = json_num(o, k, -1);
    /* (double)LONG_MAX + 1 is a power of two, exact: below it the cast is defined even
     * when max is LONG_MAX (which rounds up to that power as a double) */
    return d >= 0 && d <= (double)max && d < (double)LONG_MAX + 1.0 ? (long)d : def;
}

bool json_true(const cJSON *o, const char *k)
{
    return cJSON_IsTrue(field(o, k));
}

const cJSON *json_obj(const cJSON *o, const char *k)
{
    const cJSON *v = field(o, k);
    return cJSON_IsObject(v) ? v : NULL;
}

const char *json_first_str(const cJSON *o, const char *const *keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *s = json_str(o, keys[i]);
        if (s && *s)
            return s;
    }
    return NULL;
}
