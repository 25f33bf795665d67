/* Model JSON decoder, encoder and text renderer on arbitrary JSON. The encoder's
 * output must be valid JSON and stable under a second round trip. */
#include <cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "model_json.h"

#define NOW 1700000000.0

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    char *text = fuzz_cstr(data, size);
    rd_model *m = model_new();
    char err[128];
    if (model_from_json(m, text, err, sizeof err)) {
        char *j1 = model_to_json_at(m, "all", NOW);
        cJSON *chk = cJSON_Parse(j1);
        FUZZ_ASSERT(chk != NULL);
        cJSON_Delete(chk);
        rd_model *m2 = model_new();
        FUZZ_ASSERT(model_from_json(m2, j1, err, sizeof err));
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
