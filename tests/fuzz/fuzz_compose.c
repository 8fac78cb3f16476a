// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Fuzz target: Hydra composition over a table of files, then the value
 * overrides and the profiling readers. The input is a set of files and a
 * command line:
 *
 *   --- NAME          a file conf/NAME (the first one is the primary)
 *   ...its text...
 *   === ARGS          then one override per line
 *
 * Besides the sanitizers: every message is one non-empty line, a composed
 * config is a mapping, and a defaults cycle ends (an error, not a crash).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compose.h"
#include "profcfg.h"
#include "fuzz_props.h"
#include "profd/errors.h"
#include "table_loader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_FILES 16
#define MAX_ARGS  16

typedef struct input {
    tl_file_t files[MAX_FILES + 1];
    char *names[MAX_FILES];
    char *args[MAX_ARGS];
    size_t nfiles, nargs;
} input_t;

/* Split the input into files and arguments (copies, NUL-terminated). */
static void split(const char *text, size_t len, input_t *in)
{
    const char *p = text, *end = text + len;
    bool in_args = false;
    char *body = NULL;
    size_t blen = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (n >= 4 && strncmp(p, "--- ", 4) == 0 && !in_args && in->nfiles < MAX_FILES) {
            char *name = malloc(n - 4 + 6);
            snprintf(name, n - 4 + 6, "conf/%.*s", (int)(n - 4), p + 4);
            in->names[in->nfiles] = name;
            in->files[in->nfiles].path = name;
            body = calloc(1, len + 1);
            blen = 0;
            in->files[in->nfiles++].text = body;
        } else if (n == 8 && strncmp(p, "=== ARGS", 8) == 0) {
            in_args = true;
        } else if (in_args && in->nargs < MAX_ARGS) {
            in->args[in->nargs] = malloc(n + 1);
            memcpy(in->args[in->nargs], p, n);
            in->args[in->nargs++][n] = '\0';
        } else if (body != NULL) {
            memcpy(body + blen, p, n);
            blen += n;
            body[blen++] = '\n';
        }
        p += n + 1;
    }
}

static void free_input(input_t *in)
{
    for (size_t i = 0; i < in->nfiles; i++) {
        free(in->names[i]);
        free((char *)in->files[i].text);
    }
    for (size_t i = 0; i < in->nargs; i++) {
        free(in->args[i]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input_t in;
    memset(&in, 0, sizeof(in));
    split((const char *)data, strnlen((const char *)data, size), &in);
    if (in.nfiles > 0) {
        char err[1024];
        const char *search[] = {"conf"};
        const char *primary = in.files[0].path + 5;
        hy_loader_t l = tl_loader(in.files);
        hy_runtime_t rt = {.job_name = "main_ppo", .cwd = "/work/job", .now = 1795772842};
        hy_compose_args_t a = {.loader = &l,
                               .search = search,
                               .n_search = 1,
                               .config_name = primary,
                               .overrides = in.args,
                               .n_overrides = in.nargs,
                               .runtime = &rt};
        hy_config_t c;
        int rc = hy_compose(&a, &c, err, sizeof(err));
        if (rc == 0) {
            check(c.root != NULL && c.root->type == YT_MAP, "a composed config is not a mapping");
            pd_profcfg_t out;
            pd_profcfg_opts_t o = {
                .composed = true, .resolvers = hy_hydra_resolvers, .resolvers_ctx = &c.hydra};
            if (pd_profcfg_read(c.primary, c.root, &o, &out, err, sizeof(err)) == 0) {
                check(out.n_specs > 0 || out.no_window != NULL, "no request and no reason");
                pd_profcfg_free(&out);
            } else {
                check_line(err);
            }
            hy_config_free(&c);
        } else {
            check(rc == PROFD_ECONFIG || rc == PROFD_ENOMEM || rc == PROFD_EIO,
                  "unexpected error code");
            check_line(err);
        }
    }
    free_input(&in);
    return 0;
}
