/*
 * Hydra's command-line overrides over a yamltree, in order:
 *   a.b=V    set an existing key (mappings are merged into mappings)
 *   +a.b=V   add a key that must not exist (missing parents are created)
 *   ++a.b=V  add or set
 *   ~a.b     delete (~a.b=V: only if the value is V)
 * Values are read by the OmegaConf value grammar (oc_parse_value).
 */
#ifndef PD_HYDRA_H
#define PD_HYDRA_H

#include <stddef.h>

#include "yamltree.h"

/*
 * Apply `overrides` to the tree *root (which may be replaced when it is not
 * a mapping and an override adds to it). Nodes built from an override point
 * at its text as their origin: the override strings must outlive the tree.
 * On error `err` receives "override 'TEXT': REASON". Returns 0,
 * PROFD_ECONFIG or PROFD_ENOMEM; the tree may be partly modified on error.
 */
int hy_apply_overrides(const char *file, yt_node_t **root, char *const *overrides, size_t n,
                       char *err, size_t errlen);

#endif
