/* The INI config parser on arbitrary bytes (NULs too), through the shared tokenizer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rd_config c;
    rd_diags d = { 0 };
    /* the exact bytes, no terminating NUL: the parser must go by the length */
    bool ok = config_parse_len("fuzz.ini", (const char *)data, size, &c, &d);
    FUZZ_ASSERT(ok == (d.n == 0));
    if (memchr(data, 0, size))
        FUZZ_ASSERT(!ok);   /* a NUL byte is always reported */
    char *text = fuzz_cstr(data, size);
    for (size_t i = 0; i < c.n; i++) {
        FUZZ_ASSERT(c.systems[i].name && c.systems[i].profile && c.systems[i].store);
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
