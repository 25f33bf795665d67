#pragma once
/* libFuzzer entry point, shared by the harnesses and the replay main. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A NUL-terminated copy of exactly size bytes (plus the NUL). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    if (size)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* A property violated: crash so the fuzzer keeps the input. */
#define FUZZ_ASSERT(c) do { if (!(c)) abort(); } while (0)
