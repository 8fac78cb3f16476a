// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Hydra's grammar functions in override values (hydra-core 1.3.2
 * hydra/core/override_parser/overrides_parser.py:103-119 create_functions,
 * hydra/_internal/grammar/grammar_functions.py): the casts int(), float(),
 * str(), bool() and sort() are evaluated as Hydra does; the sweeps
 * (choice, range, interval, glob, tag, several positional arguments) and
 * shuffle() of a list (a random order) are refused. Not a public header.
 */
#ifndef PD_HYDRA_FUNC_H
#define PD_HYDRA_FUNC_H

#include <stddef.h>

#include "yamltree.h"

#define HY_FN_MAX_ARGS 64

typedef enum hy_fn_result {
    HY_FN_VALUE,        /* *out holds the value */
    HY_FN_SIMPLE_SWEEP, /* a choice sweep in its simple form (a,b) */
    HY_FN_SWEEP,        /* choice(), range(), interval(), glob(), tag() */
} hy_fn_result_t;

/*
 * Call `name` with args (names[i] NULL: positional; args not consumed).
 * `call` is the call as written, for messages. Returns 0 (*kind says what
 * came out; *out is a new tree for HY_FN_VALUE), PROFD_ECONFIG with
 * Hydra's message in why ("ValueError while evaluating 'int(x)': ..."), or
 * PROFD_ENOMEM.
 */
int hy_fn_call(const char *name, const char *call, yt_node_t *const *args, const char *const *names,
               size_t n, hy_fn_result_t *kind, yt_node_t **out, char *why, size_t whylen);

#endif
