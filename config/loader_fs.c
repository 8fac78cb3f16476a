// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The composer's loader over the file system (see compose.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compose.h"
#include "profd/errors.h"
#include "yamltree.h"

static int fs_read(void *ctx, const char *path, char **text, size_t *len)
{
    struct stat st;
    (void)ctx;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
        return PROFD_ENOENT;
    }
    if (st.st_size > (off_t)YT_MAX_INPUT) {
        return PROFD_ELIMIT;
    }
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return errno == ENOENT ? PROFD_ENOENT : PROFD_EIO;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    size_t n = buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
    int bad = buf == NULL || ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return buf ? PROFD_EIO : PROFD_ENOMEM;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}

static int fs_list(void *ctx, const char *path, hy_list_fn add, void *arg)
{
    (void)ctx;
    DIR *d = opendir(path);
    if (d == NULL) {
        return PROFD_ENOENT;
    }
    struct dirent *e;
    char full[4096];
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        if (e->d_name[0] == '.' && (e->d_name[1] == '\0' || strcmp(e->d_name, "..") == 0)) {
            continue;
        }
        snprintf(full, sizeof(full), "%s/%s", path, e->d_name);
        if (stat(full, &st) == 0) {
            add(arg, e->d_name, S_ISDIR(st.st_mode));
        }
    }
    closedir(d);
    return 0;
}

const hy_loader_t hy_loader_fs = {NULL, fs_read, fs_list};
