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
 * `oc.env` and custom resolvers are reported as errors: profd does not read
 * the environment of the daemon in place of the job's.
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

typedef struct oc {
    const char *file;
    yt_node_t *root;
    char *err;
    size_t errlen;
    int depth;
    size_t created;
} oc_t;

/* Parse the value of an override ("[1, 'a']", "True", "${x}", "") by the
 * Hydra grammar; interpolations stay text, resolved later like any string.
 * Every node built points at `origin`. Returns 0, PROFD_ECONFIG (the reason
 * in `reason`) or PROFD_ENOMEM. */
int oc_parse_value(const char *origin, const char *text, yt_node_t **out, char *reason,
                   size_t reasonlen);

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

/* Where a node was written: "FILE:LINE:COL", or "override 'TEXT'". */
void oc_where(const char *file, const yt_node_t *n, char *buf, size_t len);

/* True for a string holding `${` (an interpolation still to resolve). */
bool oc_is_interp(const yt_node_t *n);

#endif
