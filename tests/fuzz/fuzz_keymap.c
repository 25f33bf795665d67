/* Keymap files through the shared line tokenizer, on arbitrary bytes (NULs too). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "keymap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ui_keymap *km = keymap_new();
    rd_diags d = { 0 };
    /* the exact bytes, no terminating NUL: the parser must go by the length */
    bool ok = keymap_parse_len(km, "fuzz.keymap", (const char *)data, size, &d);
    FUZZ_ASSERT(ok == (d.n == 0));
    size_t lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    for (size_t i = 0; i < d.n; i++) {
        int line = 0;
        FUZZ_ASSERT(sscanf(d.msgs[i], "fuzz.keymap:%d: ", &line) == 1);
        FUZZ_ASSERT(line >= 1 && (size_t)line <= lines);
    }
    char buf[512];
    /* an eighth of the actions per input, which eighth chosen by the input: listing every
     * action's keys each time was most of a run */
    for (int a = size ? data[0] % 8 : 0; a < UA__COUNT; a += 8) {
        keymap_first(km, (ui_action)a, buf, sizeof buf);
        keymap_all(km, (ui_action)a, buf, sizeof buf);
    }
    /* whatever got bound, every binding still resolves to one action */
    ui_key seq[KM_SEQ_MAX];
    for (size_t i = 0; i + 1 < size && i < 8; i += 2) {
        seq[0] = data[i];
        seq[1] = data[i + 1];
        ui_action act;
        static const unsigned scopes[] = {0, UA_DIALOG, UA_HSCROLL};
        for (size_t k = 0; k < sizeof scopes / sizeof *scopes; k++) {
            km_match m1 = keymap_match(km, seq, 1, scopes[k], &act);
            if (m1 == KM_ACTION)
                FUZZ_ASSERT(act >= 0 && act < UA__COUNT);
            keymap_match(km, seq, 2, scopes[k], &act);
        }
    }
    diags_free(&d);
    keymap_free(km);
    return 0;
}
