/* Runs every file of the given corpus directories (or files) through the harness,
 * so the corpora are regression tests under `meson test` with any compiler. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 4096;
            buf = realloc(buf, cap);
            if (!buf)
                abort();
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        if (r == 0)
            break;
        n += r;
    }
    fclose(f);
    /* exact-size copy so out-of-bounds reads are caught */
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact)
        abort();
    if (n)
        memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int run_path(const char *path, int *count)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: no such file %s\n", path);
        return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
        (*count)++;
        return run_file(path);
    }
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "replay: cannot read directory %s\n", path);
        return 1;
    }
    int fails = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        char *p = malloc(len);
        if (!p)
            abort();
        snprintf(p, len, "%s/%s", path, e->d_name);
        fails += run_path(p, count);
        free(p);
    }
    closedir(d);
    return fails;
}

int main(int argc, char **argv)
{
    int fails = 0, count = 0;
    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
        return 1;
    }
    LLVMFuzzerTestOneInput((const uint8_t *)"", 0);
    for (int i = 1; i < argc; i++) {
        int before = count, bad = run_path(argv[i], &count);
        fails += bad;
        if (!bad && count == before) {   /* an empty corpus tests nothing: not a pass */
            fprintf(stderr, "replay: no inputs in %s\n", argv[i]);
            fails++;
        }
    }
    printf("replayed %d inputs, %d problems\n", count, fails);
    return fails ? 1 : 0;
}
