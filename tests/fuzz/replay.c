// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Replays inputs through the fuzz entry point without libFuzzer: every file
 * named, and every file in every folder named (but README.md). Used by
 * CTest on the seeds and the saved regressions, so any compiler covers them.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return 1;
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    size_t n;
    while (buf != NULL && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            uint8_t *nb = realloc(buf, cap *= 2);
            if (nb == NULL) {
                free(buf);
                buf = NULL;
            }
            buf = nb;
        }
    }
    fclose(f);
    if (buf == NULL) {
        fprintf(stderr, "%s: out of memory\n", path);
        return 1;
    }
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    int failed = 0, count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            failed |= replay_file(argv[i]);
            count++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        struct dirent *e;
        char **names = NULL;
        size_t n = 0;
        while (d != NULL && (e = readdir(d)) != NULL) {
            size_t nl = strlen(e->d_name);
            if (e->d_name[0] == '.' || (nl > 3 && strcmp(e->d_name + nl - 3, ".md") == 0)) {
                continue; /* hidden files and the folder's README */
            }
            char **nn = realloc(names, (n + 1) * sizeof(*nn));
            if (nn == NULL) {
                break;
            }
            names = nn;
            names[n] = malloc(strlen(argv[i]) + strlen(e->d_name) + 2);
            sprintf(names[n++], "%s/%s", argv[i], e->d_name);
        }
        if (d != NULL) {
            closedir(d);
        }
        if (n > 1) {
            qsort(names, n, sizeof(*names), cmp);
        }
        for (size_t k = 0; k < n; k++) {
            struct stat fs;
            if (stat(names[k], &fs) == 0 && S_ISREG(fs.st_mode)) {
                failed |= replay_file(names[k]);
                count++;
            }
            free(names[k]);
        }
        free(names);
    }
    printf("replayed %d inputs\n", count);
    return failed;
}
