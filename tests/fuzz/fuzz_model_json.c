/* Model JSON decoder, encoder and text renderer on arbitrary JSON. The encoder's
 * output must be valid JSON and stable under a second round trip. */
#include <cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "model_json.h"

#define NOW 1700000000.0

/* Printed JSON is valid UTF-8 without DEL, C1 or bidi controls (all escaped). */
static void assert_terminal_safe(const char *j)
{
    const unsigned char *u = (const unsigned char *)j;
    for (size_t i = 0; u[i];) {
        unsigned char c = u[i];
        FUZZ_ASSERT(c != 0x7F && c != 0xC0 && c != 0xC1 && c < 0xF5 && (c < 0x80 || c >= 0xC2));
        size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        unsigned long cp = len == 1 ? c : c & (0x7Fu >> len);
        for (size_t k = 1; k < len; k++) {
            FUZZ_ASSERT((u[i + k] & 0xC0) == 0x80);
            cp = cp << 6 | (u[i + k] & 0x3Fu);
        }
        FUZZ_ASSERT(!(cp >= 0x80 && cp <= 0x9F) && cp != 0x061C && cp != 0x200E &&
                    cp != 0x200F && !(cp >= 0x2028 && cp <= 0x202E) &&
                    !(cp >= 0x2066 && cp <= 0x2069));
        i += len;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    char *text = fuzz_cstr(data, size);
    rd_model *m = model_new();
    char err[128];
    if (model_from_json(m, text, NOW, err, sizeof err)) {
        char *j1 = model_to_json_at(m, "all", NOW);
        assert_terminal_safe(j1);
        cJSON *chk = cJSON_Parse(j1);
        FUZZ_ASSERT(chk != NULL);
        cJSON_Delete(chk);
        rd_model *m2 = model_new();
        FUZZ_ASSERT(model_from_json(m2, j1, NOW, err, sizeof err));
        char *j2 = model_to_json_at(m2, "all", NOW);
        FUZZ_ASSERT(strcmp(j1, j2) == 0);
        static const char *const views[] = { NULL, "executions", "chain", "workers",
                                             "queues", "dlq" };
        for (size_t i = 0; i < sizeof views / sizeof *views; i++) {
            char *t = model_to_text(m, views[i], NOW);
            for (const unsigned char *p = (const unsigned char *)t; *p; p++)
                FUZZ_ASSERT(*p >= 0x20 || *p == '\n');
            free(t);
            free(model_to_json_at(m, views[i], NOW));
        }
        free(j2);
        free(j1);
        model_free(m2);
    }
    model_free(m);
    free(text);
    return 0;
}
