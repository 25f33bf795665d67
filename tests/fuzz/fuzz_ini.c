/* The shared line tokenizer of config, profiles, themes and keymaps, under every
 * format and raw-mode switching picked by byte 0. Lines are numbered upward, nothing
 * handed back holds a line end, pairs and text are trimmed, every message reads
 * "fuzz.ini:LINE: ..." and a NUL byte is always reported. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ini.h"

static void check_str(const char *s, bool trimmed)
{
    if (!s)
        return;
    FUZZ_ASSERT(!strchr(s, '\n'));
    size_t n = strlen(s);
    if (trimmed && n)
        FUZZ_ASSERT(s[0] != ' ' && s[0] != '\t' && s[n - 1] != ' ' && s[n - 1] != '\t' &&
                    s[n - 1] != '\r');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536)
        return 0;
    unsigned sel = data[0];
    ini_format fmt = { .flags = sel & 7, .header_usage = sel & 8 ? "[name]" : NULL };
    rd_diags d = { 0 };
    ini_reader r;
    const char *text = (const char *)data + 1;
    size_t len = size - 1, lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    ini_open(&r, "fuzz.ini", len ? text : NULL, len, &fmt, &d);
    ini_line l;
    int last = 0, bad = 0;
    while (ini_next(&r, &l)) {
        FUZZ_ASSERT(l.line > last && (size_t)l.line <= lines + 1);
        last = l.line;
        switch (l.kind) {
        case INI_SECTION:
            FUZZ_ASSERT(fmt.flags & INI_SECTIONS);
            if (l.name) {
                check_str(l.name, true);
                check_str(l.value, true);
                check_str(l.text, true);
                FUZZ_ASSERT(!strchr(l.name, ' ') && !strchr(l.name, '\t'));
            }
            if (sel & 16)
                ini_set_raw(&r, !r.raw);
            break;
        case INI_PAIR:
            FUZZ_ASSERT(l.name && l.value && !strchr(l.name, '='));
            check_str(l.name, true);
            check_str(l.value, true);
            break;
        case INI_TEXT:
            FUZZ_ASSERT(l.text && l.text[0] && !strchr(l.text, '=') && l.text[0] != '#' &&
                        l.text[0] != ';');
            check_str(l.text, true);
            break;
        case INI_RAW:
            FUZZ_ASSERT(r.raw && l.text);
            check_str(l.text, false);
            break;
        case INI_BAD:
            bad++;
            break;
        }
        if (sel & 32 && l.line % 7 == 0)
            ini_set_raw(&r, !r.raw);
    }
    ini_close(&r);
    FUZZ_ASSERT(r.errors == (int)d.n && bad <= r.errors);
    if (memchr(text, '\0', len))
        FUZZ_ASSERT(bad > 0);
    for (size_t i = 0; i < d.n; i++)
        FUZZ_ASSERT(strncmp(d.msgs[i], "fuzz.ini:", 9) == 0 && d.msgs[i][9] >= '1' &&
                    d.msgs[i][9] <= '9');
    diags_free(&d);
    return 0;
}
