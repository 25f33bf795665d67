/* Theme files through the shared line tokenizer, on arbitrary bytes (NULs too).
 * Includes are looked up like any theme: the fuzzer only finds real files by luck. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "theme.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ui_theme *t = theme_new();
    rd_diags d = { 0 };
    /* the exact bytes, no terminating NUL: the parser must go by the length */
    bool ok = theme_parse_len(t, "fuzz.theme", (const char *)data, size, &d);
    FUZZ_ASSERT(ok == (d.n == 0));
    bool includes = memmem(data, size, "include", 7) != NULL;
    size_t lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    for (size_t i = 0; i < d.n && !includes; i++) {
        int line = 0;
        FUZZ_ASSERT(sscanf(d.msgs[i], "fuzz.theme:%d: ", &line) == 1);
        FUZZ_ASSERT(line >= 1 && (size_t)line <= lines);
    }
    theme_apply(t, false);   /* without colours: no terminal needed */
    for (int s = 0; s < TS__COUNT; s++)
        (void)theme_attr(t, (ui_slot)s);
    diags_free(&d);
    theme_free(t);
    return 0;
}
