// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* A table loader (see table_loader.h). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "profd/errors.h"
#include "table_loader.h"

/* "./a/b" and "a//b" are "a/b". */
static void clean(const char *in, char *out, size_t len)
{
    size_t n = 0;
    while (in[0] == '.' && in[1] == '/') {
        in += 2;
    }
    for (; *in != '\0' && n + 1 < len; in++) {
        if (*in == '/' && (n == 0 || out[n - 1] == '/')) {
            continue;
        }
        if (*in == '.' && in[1] == '/' && (n == 0 || out[n - 1] == '/')) {
            in++;
            continue;
        }
        out[n++] = *in;
    }
    while (n > 0 && out[n - 1] == '/') {
        n--;
    }
    out[n] = '\0';
}

static int tl_read(void *ctx, const char *path, char **text, size_t *len)
{
    char want[512];
    clean(path, want, sizeof(want));
    for (const tl_file_t *f = ctx; f->path != NULL; f++) {
        if (strcmp(f->path, want) == 0) {
            *len = strlen(f->text);
            *text = strdup(f->text);
            return *text ? 0 : PROFD_ENOMEM;
        }
    }
    return PROFD_ENOENT;
}

static int tl_list(void *ctx, const char *path, hy_list_fn add, void *arg)
{
    char dir[512];
    bool found = false;
    clean(path, dir, sizeof(dir));
    size_t n = strlen(dir);
    for (const tl_file_t *f = ctx; f->path != NULL; f++) {
        const char *rest = f->path;
        if (n > 0 && strcmp(dir, ".") != 0) {
            if (strncmp(f->path, dir, n) != 0 || f->path[n] != '/') {
                continue;
            }
            rest = f->path + n + 1;
        }
        found = true;
        const char *slash = strchr(rest, '/');
        char name[256];
        size_t k = slash ? (size_t)(slash - rest) : strlen(rest);
        k = k < sizeof(name) ? k : sizeof(name) - 1;
        memcpy(name, rest, k);
        name[k] = '\0';
        add(arg, name, slash != NULL);
    }
    return found ? 0 : PROFD_ENOENT;
}

hy_loader_t tl_loader(const tl_file_t *files)
{
    hy_loader_t l = {(void *)files, tl_read, tl_list};
    return l;
}
