/* The INI config parser on arbitrary bytes (NULs too), through the shared tokenizer; and
 * the first line as the value of each URL key: whatever is said about it never echoes a
 * user:password@ (its bytes made \1, which no message of ours holds). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzz.h"

static void check_url_keys(const uint8_t *data, size_t size)
{
    static const char *const keys[] = {"core", "broker", "workers", "sqs_endpoint",
                                       "sqs_queue_url", "sqs_dlq"};
    size_t n = 0;
    while (n < size && n < 300 && data[n] && data[n] != '\n' && data[n] != '\r')
        n++;
    char v[301];
    memcpy(v, data, n);
    v[n] = '\0';
    char *a = strstr(v, "://");
    if (!a || strchr(v, '\1'))
        return;
    a += 3;
    char *at = NULL;
    for (char *q = a; q < a + strcspn(a, "/?#"); q++)
        if (*q == '@')
            at = q;
    for (char *q = a; at && q < at; q++)
        *q = '\1';
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        char text[420];
        snprintf(text, sizeof text, "[system \"s\"]\nprofile=a\nstore=x\n%s = %s\n", keys[k],
                 v);
        rd_config c;
        rd_diags d = { 0 };
        config_parse("u.ini", text, &c, &d);
        for (size_t i = 0; i < d.n; i++)
            FUZZ_ASSERT(!strchr(d.msgs[i], '\1'));
        config_free(&c);
        diags_free(&d);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_url_keys(data, size);
    rd_config c;
    rd_diags d = { 0 };
    /* the exact bytes, no terminating NUL: the parser must go by the length */
    bool ok = config_parse_len("fuzz.ini", (const char *)data, size, &c, &d);
    FUZZ_ASSERT(ok == (d.n == 0));
    if (memchr(data, 0, size))
        FUZZ_ASSERT(!ok);   /* a NUL byte is always reported */
    char *text = fuzz_cstr(data, size);
    for (size_t i = 0; i < c.n; i++) {
        FUZZ_ASSERT(c.systems[i].name && c.systems[i].profile && c.systems[i].store.url);
        FUZZ_ASSERT(config_find(&c, c.systems[i].name) != NULL);
    }
    config_find(&c, NULL);
    double dur;
    bool b;
    parse_duration(text, &dur);
    parse_bool(text, &b);
    secret_is_ref(text);
    config_free(&c);
    diags_free(&d);
    free(text);
    return 0;
}
