// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Hydra's command-line overrides (hydra-core 1.3.2,
 * hydra/_internal/config_loader_impl.py:_apply_overrides_to_config):
 *   a.b=V    set an existing key (a mapping is merged into a mapping)
 *   +a.b=V   add: accepted when the key is absent, null, `???` or an
 *            interpolation that resolves to null, or when V is a list or a
 *            mapping; else "Could not append to config"
 *   ++a.b=V  add or set
 *   ~a.b     delete (~a.b=V: only if the value is V)
 * Keys are `package` or `group/path`, optionally `@package`; values are
 * read by the OmegaConf value grammar (oc_parse_value). Group overrides
 * (`group=option`) belong to the composer (compose.h).
 */
#ifndef PD_HYDRA_H
#define PD_HYDRA_H

#include <stdbool.h>
#include <stddef.h>

#include "omegaconf.h"
#include "yamltree.h"

typedef enum hy_op { HY_SET, HY_ADD, HY_FORCE, HY_DEL } hy_op_t;

/* One parsed override. */
typedef struct hy_override {
    const char *text; /* as written (not owned) */
    hy_op_t op;
    char key[256];     /* key_or_group */
    char package[256]; /* after '@' */
    bool has_package;
    const char *value; /* the text after '=' (points into text), NULL when none */
    yt_node_t *val;    /* value parsed (owned), NULL when none */
} hy_override_t;

/* Parse `text`. On error `err` holds "override 'TEXT': REASON" and o holds
 * nothing to free. Returns 0, PROFD_ECONFIG or PROFD_ENOMEM. */
int hy_override_parse(const char *text, hy_override_t *o, char *err, size_t errlen);
void hy_override_fini(hy_override_t *o);

/* Merge mapping `src` (consumed) into mapping `dst` as OmegaConf's merge
 * does: mappings merge, anything else replaces, and a `???` in src leaves a
 * value dst has. Returns 0 or PROFD_ENOMEM. */
int hy_merge(yt_node_t *dst, yt_node_t *src);

/* True for `hydra.x` / `hydra/x`: Hydra's own settings, not the task's. */
bool hy_override_is_hydra(const hy_override_t *o);

/* True for a list or mapping written as a literal value. */
bool hy_override_is_container(const hy_override_t *o);

/*
 * Apply one value override to a composed tree with Hydra's rules. `oc`
 * resolves interpolations where Hydra selects a value (its root is *root;
 * resolved values are forgotten afterwards). The nodes built point at the
 * override text. Returns 0, PROFD_ECONFIG ("override 'TEXT': REASON" in
 * err) or PROFD_ENOMEM.
 */
int hy_override_apply(oc_t *oc, yt_node_t **root, hy_override_t *o, char *err, size_t errlen);

/*
 * The older form, for a single file sent to the daemon (no composition):
 * parse and apply `overrides` in order; group overrides are refused.
 */
int hy_apply_overrides(const char *file, yt_node_t **root, char *const *overrides, size_t n,
                       char *err, size_t errlen);

#endif
