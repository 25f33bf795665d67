/* The profile parser on arbitrary text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstr(data, size);
    rd_profile p;
    rd_diags d = { 0 };
    bool ok = profile_parse("fuzz.profile", text, &p, &d);
    FUZZ_ASSERT(ok == (d.n == 0));
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
    free(text);
    return 0;
}
