// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* A loader for the composer and the launch-line reader over a table of
 * files (path, text): no file system. Folders are the paths' prefixes. */
#ifndef TABLE_LOADER_H
#define TABLE_LOADER_H

#include "compose.h"

typedef struct tl_file {
    const char *path;
    const char *text;
} tl_file_t;

/* A loader over `files` (NULL-path terminated; not copied). */
hy_loader_t tl_loader(const tl_file_t *files);

#endif
