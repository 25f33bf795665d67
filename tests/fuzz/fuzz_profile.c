/* The profile parser on arbitrary bytes (NULs too), through the shared tokenizer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rd_profile p;
    rd_diags d = { 0 };
    /* the exact bytes, no terminating NUL: the parser must go by the length */
    bool ok = profile_parse_len("fuzz.profile", (const char *)data, size, &p, &d);
    FUZZ_ASSERT(ok == (d.n == 0));
    /* a NUL byte is always reported */
    if (memchr(data, 0, size))
        FUZZ_ASSERT(!ok);
    for (size_t i = 0; i < p.n_queries; i++) {
        FUZZ_ASSERT(p.queries[i].value != NULL);
        FUZZ_ASSERT(profile_query(&p, p.queries[i].key) != NULL);
    }
    for (size_t i = 0; i < p.n_actions; i++)
        FUZZ_ASSERT(profile_action(&p, p.actions[i].name) == &p.actions[i]);
    for (size_t i = 0; i < p.n_settings; i++)
        FUZZ_ASSERT(profile_get(&p, p.settings[i].key) != NULL);
    if (ok)
        FUZZ_ASSERT(p.name && p.store && p.semantics);
    profile_free(&p);
    diags_free(&d);
    return 0;
}
