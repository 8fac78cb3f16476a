// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Hydra composition (see compose.h). The code follows hydra-core 1.3.2
 * (7ef3acab): hydra/_internal/defaults_list.py (the defaults tree, its
 * processing order, overrides and deletions), hydra/core/default_element.py
 * (group paths, packages, override keys), hydra/_internal/config_repository.py
 * (defaults list items, keywords) and config_loader_impl.py (merging the
 * final list, then the value overrides). Function names point at theirs.
 */
#include "compose.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compose_int.h"
#include "hydra.h"
#include "profd/errors.h"
#include "pu_buf.h"

/* ---- the defaults tree (defaults_list.py:_create_defaults_tree_impl) ------------------ */

/* Append a child (an element or a subtree) to t. */
static int add_kid(hc_t *hc, tnode_t *t, elem_t *e, tnode_t *sub)
{
    if (t->nkids == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 8;
        kid_t *k = ar_alloc(&hc->ar, cap * sizeof(*k));
        if (k == NULL) {
            return hc_nomem(hc);
        }
        if (t->nkids) {
            memcpy(k, t->kids, t->nkids * sizeof(*k));
        }
        t->kids = k;
        t->cap = cap;
    }
    t->kids[t->nkids].e = e;
    t->kids[t->nkids++].t = sub;
    return 0;
}

static int tree_impl(hc_t *hc, tnode_t *root, bool is_root, bool interpolated);

static tnode_t *new_tnode(hc_t *hc, elem_t *e, tnode_t *parent)
{
    tnode_t *t = ar_alloc(&hc->ar, sizeof(*t));
    if (t != NULL) {
        t->node = e;
        t->parent = parent;
        t->depth = parent ? parent->depth + 1 : 0;
    }
    return t;
}

/* add_child: expand e below root; the subtree when it has children. */
static int add_child(hc_t *hc, tnode_t *list, tnode_t *root, elem_t *e, bool interpolated)
{
    tnode_t *t = new_tnode(hc, e, root);
    if (t == NULL) {
        return hc_nomem(hc);
    }
    int rc = tree_impl(hc, t, false, interpolated);
    if (rc == 0) {
        rc = add_kid(hc, list, t->has_kids ? NULL : e, t->has_kids ? t : NULL);
    }
    return rc;
}

/* A config already being expanded above t: Hydra would recurse forever. */
static int check_cycle(hc_t *hc, tnode_t *t, const char *path)
{
    for (const tnode_t *a = t->parent; a != NULL; a = a->parent) {
        if (a->cf != NULL && strcmp(a->cf->path, path) == 0) {
            const char *leaf = NULL;
            cfgfile_t *cf;
            if (hc_repo_load(hc, path, &cf) == 0 && cf != NULL) {
                leaf = cf->name;
            }
            return hc_fail(hc, NULL, t->node, "defaults cycle: %s",
                           hc_chain(hc, t->parent, leaf) ? hc_chain(hc, t->parent, leaf) : path);
        }
    }
    if (t->depth > HY_MAX_DEPTH) {
        return hc_fail(hc, t->parent, t->node, "defaults nested deeper than %d levels",
                       HY_MAX_DEPTH);
    }
    return 0;
}

/* The options list form `group: [a, b]`: each a config default of its own. */
static int add_options(hc_t *hc, tnode_t *root, tnode_t *list, elem_t *parent, elem_t *d,
                       bool interpolated)
{
    for (size_t i = d->nopts; i-- > 0;) {
        if (strstr(d->opts[i], "${") != NULL) {
            return hc_fail(hc, root, d,
                           "In '%s': Defaults List interpolation is not supported in options "
                           "list items",
                           hc_elem_config_path(hc, parent));
        }
        elem_t *n = hc_elem_new(hc);
        if (n == NULL) {
            return hc_nomem(hc);
        }
        n->path = ar_printf(&hc->ar, "%s/%s", d->grp, d->opts[i]);
        n->pkg = d->pkg;
        n->optional = d->optional;
        n->at = d->at;
        hc_elem_parent(n, hc_elem_group_path(hc, parent), hc_elem_final_package(hc, parent, true));
        int rc = n->path ? add_child(hc, list, root, n, interpolated) : hc_nomem(hc);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* The body of the loop over a defaults list, last item first. */
static int expand_items(hc_t *hc, tnode_t *root, elem_t **list, size_t n, bool interpolated)
{
    elem_t *parent = root->node;
    for (size_t i = n; i-- > 0;) {
        elem_t *d = list[i];
        int rc = 0;
        if (d->self) {
            hc_elem_parent(d, root->node->pbase, hc_elem_package(root->node, true));
            rc = add_kid(hc, root, d, NULL);
        } else if (d->override) {
            continue;
        } else {
            hc_elem_parent(d, hc_elem_group_path(hc, parent),
                           hc_elem_final_package(hc, parent, true));
            hc_override_default(hc, d);
            if (d->is_group && d->is_list) {
                rc = add_options(hc, root, root, parent, d, interpolated);
            } else if (hc_elem_is_interp(hc, d)) {
                rc = add_kid(hc, root, d, NULL);
            } else {
                rc = add_child(hc, root, root, d, interpolated);
            }
        }
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* Deferred interpolated choices, once every other item is known. */
static int expand_interps(hc_t *hc, tnode_t *root, elem_t **list, size_t n, bool self_added)
{
    elem_t *parent = root->node;
    for (size_t i = 0; i < root->nkids; i++) {
        elem_t *d = root->kids[i].e;
        if (d == NULL || d->self || !hc_elem_is_interp(hc, d)) {
            continue;
        }
        int rc = hc_resolve_choice(hc, root, d, list, n, self_added);
        if (rc != 0) {
            return rc;
        }
        hc_elem_parent(d, hc_elem_group_path(hc, parent), hc_elem_final_package(hc, parent, true));
        tnode_t *t = new_tnode(hc, d, root);
        if (t == NULL) {
            return hc_nomem(hc);
        }
        if ((rc = tree_impl(hc, t, false, true)) != 0) {
            return rc;
        }
        if (t->has_kids) {
            root->kids[i].e = NULL;
            root->kids[i].t = t;
        }
    }
    return 0;
}

/* Reverse root's children into the order Hydra stores them. */
static void reverse_kids(tnode_t *t)
{
    for (size_t i = 0, j = t->nkids; i + 1 < j; i++, j--) {
        kid_t k = t->kids[i];
        t->kids[i] = t->kids[j - 1];
        t->kids[j - 1] = k;
    }
    t->has_kids = t->nkids > 0;
}

/* Everything before the file's defaults are walked: deletion, choice,
 * `???`, loading. *stop: nothing more to do for this node. */
static int impl_head(hc_t *hc, tnode_t *root, bool is_root, bool *stop)
{
    elem_t *parent = root->node;
    int rc;
    *stop = true;
    if (is_root) {
        hc_elem_parent(parent, "", "");
    }
    if ((rc = hc_update_header(hc, root, parent)) != 0) {
        return rc;
    }
    if (hc_is_deleted(hc, parent)) {
        return 0;
    }
    if ((rc = hc_known_choice(hc, root, parent)) != 0 || hc_elem_name(hc, parent) == NULL) {
        return rc;
    }
    if ((rc = hc_check_missing(hc, root, parent)) != 0) {
        return rc;
    }
    const char *path = hc_elem_config_path(hc, parent);
    if (path == NULL) {
        return hc_nomem(hc);
    }
    if ((rc = check_cycle(hc, root, path)) != 0 || (rc = hc_repo_load(hc, path, &root->cf)) != 0) {
        return rc;
    }
    if (root->cf == NULL) {
        if (parent->optional) {
            parent->deleted = true;
            return 0;
        }
        return hc_not_found(hc, root);
    }
    *stop = false;
    return 0;
}

static int tree_impl(hc_t *hc, tnode_t *root, bool is_root, bool interpolated)
{
    elem_t **list;
    size_t n = 0;
    bool stop, self_added = false;
    int rc = impl_head(hc, root, is_root, &stop);
    if (rc != 0 || stop) {
        return rc;
    }
    if ((rc = hc_copy_defaults(hc, root->cf, &list, &n)) != 0) {
        return rc;
    }
    if (n > 0 || (is_root && hc->nappends > 0)) {
        if ((rc = hc_validate_self(hc, root, list, &n, &self_added)) != 0) {
            return rc;
        }
    }
    for (size_t i = 0; is_root && i < hc->nappends; i++) {
        list[n++] = hc->appends[i];
    }
    if ((rc = hc_update_overrides(hc, root, list, n, interpolated)) != 0 ||
        (rc = expand_items(hc, root, list, n, interpolated)) != 0 ||
        (rc = expand_interps(hc, root, list, n, self_added)) != 0) {
        return rc;
    }
    if (root->nkids > 0) {
        reverse_kids(root);
    }
    return 0;
}

/* ---- the final list and the merge (config_loader_impl.py) ---------------------------- */

/* One entry of the final defaults list: a config and where it lands. */
static int emit(hc_t *hc, const tnode_t *tree, elem_t *e)
{
    const char *path, *pkg, *chain;
    cfgfile_t *cf;
    int rc;
    if (e->deleted || hc_elem_is_missing(hc, e) || hc_elem_name(hc, e) == NULL) {
        return 0;
    }
    if (e->self) {
        path = hc_elem_config_path(hc, tree->node);
        pkg = hc_elem_final_package(hc, tree->node, true);
        chain = hc_chain(hc, tree, NULL);
    } else {
        path = hc_elem_config_path(hc, e);
        pkg = hc_elem_final_package(hc, e, true);
        if ((rc = hc_repo_load(hc, path, &cf)) != 0) {
            return rc;
        }
        chain = cf ? hc_chain(hc, tree, cf->name) : NULL;
    }
    if (path == NULL || pkg == NULL) {
        return hc_nomem(hc);
    }
    return hc_merge_config(hc, path, pkg, chain);
}

/* _dfs_walk + _tree_to_list, merging as it goes. */
static int walk(hc_t *hc, const tnode_t *t)
{
    if (!t->has_kids) {
        return t->parent ? emit(hc, t->parent, t->node) : 0;
    }
    for (size_t i = 0; i < t->nkids; i++) {
        int rc = t->kids[i].e ? emit(hc, t, t->kids[i].e) : walk(hc, t->kids[i].t);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* ---- entry ------------------------------------------------------------------------ */

static int compose_tree(hc_t *hc)
{
    elem_t *primary = hc_elem_new(hc);
    tnode_t *vroot = new_tnode(hc, NULL, NULL);
    if (primary == NULL || vroot == NULL) {
        return hc_nomem(hc);
    }
    primary->path = hc->config_name;
    primary->primary = true;
    tnode_t *t = new_tnode(hc, primary, vroot);
    if (t == NULL) {
        return hc_nomem(hc);
    }
    hc_elem_parent(primary, "", "");
    int rc = hc_primary_exists(hc, primary);
    if (rc == 0) {
        rc = tree_impl(hc, t, true, false);
    }
    if (rc == 0) {
        rc = add_kid(hc, vroot, t->has_kids ? NULL : primary, t->has_kids ? t : NULL);
        vroot->has_kids = true;
    }
    if (rc == 0) {
        rc = hc_overrides_used(hc);
    }
    if (rc == 0 && (hc->root = yt_new(YT_MAP, 1, 1)) == NULL) {
        rc = hc_nomem(hc);
    }
    return rc == 0 ? walk(hc, vroot) : rc;
}

int hy_compose(const hy_compose_args_t *a, hy_config_t *out, char *err, size_t errlen)
{
    hc_t *hc = calloc(1, sizeof(*hc));
    if (hc == NULL) {
        snprintf(err, errlen, "out of memory");
        return PROFD_ENOMEM;
    }
    hc->a = a;
    hc->err = err;
    hc->errlen = errlen;
    err[0] = '\0';
    int rc = hc_setup(hc);
    if (rc == 0) {
        rc = compose_tree(hc);
    }
    if (rc == 0) {
        rc = hc_apply_values(hc);
    }
    if (rc == 0) {
        rc = hc_result(hc, out);
    }
    hc_teardown(hc, rc != 0);
    free(hc);
    if (rc != 0) {
        yt_one_line(err);
    }
    return rc;
}

void hy_config_free(hy_config_t *c)
{
    if (c == NULL) {
        return;
    }
    yt_free(c->root);
    pu_strv_free(c->warnings, c->n_warnings);
    free(c->primary);
    yt_free(c->hydra.node);
    ar_free(c->sources);
    memset(c, 0, sizeof(*c));
}
