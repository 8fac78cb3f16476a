// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * What OmegaConf does to a YAML tree before a training job reads it:
 * `${...}` interpolations, resolved lazily the first time a value is read,
 * and the value grammar of command-line overrides (hydra.h applies them).
 *
 * Supported interpolations: `${a.b}`, `${a[0]}`, relative `${.x}`/`${..x}`,
 * nested `${a.${b}}`, `${oc.select:KEY[,DEFAULT]}` (missing KEY gives DEFAULT,
 * or null without one). A string that is exactly one interpolation takes
 * the target's type (list, mapping, int, bool...); interpolations inside a
 * longer string are concatenated as Python's str() would. `\${` escapes.
 * `${oc.env:VAR[,DEFAULT]}` reads the environment through the resolver's
 * `env` hook: profctl, composing on the caller's side, passes the caller's
 * environment; without a hook (the daemon, which must not read its own
 * environment in place of the job's) it is an error. Custom resolvers are
 * errors.
 *
 * Values in overrides and resolver arguments are typed by the OmegaConf /
 * Hydra grammar: only true/false (any case) are booleans, null (any case) is
 * null, `1_000` is an int, `level1` a string.
 */
#ifndef PD_OMEGACONF_H
#define PD_OMEGACONF_H

#include <stdbool.h>
#include <stddef.h>

#include "yamltree.h"

#define OC_MAX_DEPTH 64     /* interpolations, resolver calls and brackets, nested */
#define OC_MAX_STR   65536  /* length of a concatenated string */
#define OC_MAX_NODES 100000 /* nodes created by resolution */

/* The value of an environment variable, NULL when it is not set. */
typedef const char *(*oc_env_fn)(void *ctx, const char *name);

typedef struct oc oc_t;

/*
 * Resolvers registered by the application (Hydra's `now`, `hydra`): called
 * with the resolved arguments for a resolver OmegaConf itself does not
 * have. *out: the value, *owned when the caller must free it. Returns 0,
 * PROFD_ECONFIG (the reason in why), PROFD_ENOMEM, or PROFD_ENOENT for a
 * name it does not know.
 */
typedef int (*oc_resolver_fn)(void *ctx, const char *name, yt_node_t *const *args, size_t nargs,
                              yt_node_t **out, bool *owned, char *why, size_t whylen);

struct oc {
    const char *file;
    yt_node_t *root;
    char *err;
    size_t errlen;
    int depth;
    size_t created;
    oc_env_fn env; /* NULL: oc.env is refused */
    void *env_ctx;
    const yt_source_t *err_src; /* the file the last error is about, if known */
    oc_resolver_fn resolvers;   /* NULL: only OmegaConf's own */
    void *resolvers_ctx;
};

/* Parse the value of an override ("[1, 'a']", "True", "${x}", "") by the
 * Hydra grammar; interpolations stay text, resolved later like any string.
 * Every node built points at `origin`. Returns 0, PROFD_ECONFIG (the reason
 * in `reason`) or PROFD_ENOMEM. */
int oc_parse_value(const char *origin, const char *text, yt_node_t **out, char *reason,
                   size_t reasonlen);

/* Python's repr() of a float: "1.5", "1e-05", "inf". */
void oc_float_repr(double v, char *buf, size_t len);

/* Start resolving a tree (not owned). Messages go to err. */
void oc_init(oc_t *oc, const char *file, yt_node_t *root, char *err, size_t errlen);

/*
 * The value of `n` with its interpolation (if any) resolved: `n` itself,
 * the node an interpolation points at, or a computed node the tree owns.
 * Never returns a string that still needs resolving. Errors (missing key,
 * cycle, malformed `${`, unsupported resolver) name the file position and
 * key of the string being resolved. Returns 0, PROFD_ECONFIG or PROFD_ENOMEM.
 */
int oc_resolve(oc_t *oc, yt_node_t *n, yt_node_t **out);

/* The raw (unresolved) child `key` of the value of `map`; *raw = NULL when
 * the key is absent or `map` is not a mapping. */
int oc_child(oc_t *oc, yt_node_t *map, const char *key, yt_node_t **raw);

/* Walk a dotted path ("a.b.c") from `base` (the root when NULL), resolving
 * the containers on the way; *raw = NULL when any step is missing or not a
 * container. */
int oc_lookup(oc_t *oc, yt_node_t *base, const char *path, yt_node_t **raw);

/* Hydra's OmegaConf.select(cfg, path, throw_on_missing=False): the resolved
 * value at a dotted path from the root, *val = NULL when it is absent or
 * `???` (a null value is a YT_NULL node). Errors of the interpolations on the
 * way are returned. */
int oc_select(oc_t *oc, const char *path, yt_node_t **val);

/* Forget every resolved value cached below n (the tree is about to change:
 * an override may retarget what an interpolation reads). */
void oc_forget(yt_node_t *n);

/* True for a value OmegaConf reads as MISSING: the string `???`. */
bool oc_is_missing(const yt_node_t *n);

/* Where a node was written: "FILE:LINE:COL" (the node's own file when it
 * has one, else `file`), "override 'TEXT'", or "argument 'TEXT'" for a
 * node built from a launch-line flag (origin starting with '-'). */
void oc_where(const char *file, const yt_node_t *n, char *buf, size_t len);

/* True for a string holding `${` (an interpolation still to resolve). */
bool oc_is_interp(const yt_node_t *n);

#endif
