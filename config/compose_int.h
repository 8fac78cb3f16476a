// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Internals of the Hydra composer, shared by compose.c (the defaults tree
 * and the merge), compose_elem.c (defaults-list elements and the config
 * repository) and compose_ovr.c (command-line and in-file overrides, the
 * setup, the value overrides), over compose_util.c (messages): calls go
 * compose.c -> compose_ovr.c -> compose_elem.c -> compose_util.c, never
 * back. Not a public header.
 */
#ifndef PD_COMPOSE_INT_H
#define PD_COMPOSE_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"
#include "compose.h"
#include "hydra.h"

/* A defaults-list element (Hydra's ConfigDefault / GroupDefault). */
typedef struct elem {
    bool is_group;
    bool self; /* `_self_` */
    bool primary;
    bool optional, override, external, deleted;
    bool is_list;      /* group: [a, b] */
    const char *path;  /* config default: as written */
    const char *grp;   /* group default: the group as written */
    const char *value; /* group default: the option; NULL = null */
    const char **opts; /* is_list */
    size_t nopts;
    const char *pkg;    /* `@pkg` as written ("" for _here_), NULL: none */
    const char *header; /* the loaded file's `# @package`, absolute */
    bool header_set;
    const char *pbase;   /* parent base dir, NULL until set */
    const char *ppkg;    /* parent package */
    const yt_node_t *at; /* the defaults item, for messages */
    const char *origin;  /* the command-line override that made or chose it */
} elem_t;

/* A config file as loaded (cached by path). */
typedef struct cfgfile {
    const char *path; /* config path, normalized, without .yaml */
    const char *name; /* as messages show it: FOLDER/PATH.yaml */
    yt_node_t *tree;  /* its content without `defaults` */
    yt_node_t *dlist; /* its `defaults` node, NULL when none */
    elem_t *defaults; /* parsed */
    size_t ndefaults;
    const char *header; /* `# @package X` value, NULL when none */
    yt_source_t src;    /* for positions of its defaults items */
} cfgfile_t;

typedef struct tnode tnode_t;
typedef struct kid {
    elem_t *e;  /* a leaf element, or */
    tnode_t *t; /* a subtree */
} kid_t;

/* DefaultsTreeNode */
struct tnode {
    elem_t *node;
    tnode_t *parent;
    cfgfile_t *cf; /* node's config once loaded */
    kid_t *kids;
    size_t nkids, cap;
    bool has_kids;
    int depth;
};

/* A group choice of the command line or an in-file `override`. */
typedef struct choice {
    const char *key;
    const char *value;
    const char **opts;
    size_t nopts;
    bool is_list, external, used;
    const char *in_path; /* in-file: the containing config */
    const char *origin;  /* command line: the override text */
} choice_t;

typedef struct deletion {
    const char *key;
    const char *name; /* NULL: whatever the choice */
    bool used;
    const char *origin;
} deletion_t;

typedef struct known {
    const char *key;
    const char *name;
    const char *group;
} known_t;

typedef struct hc {
    const hy_compose_args_t *a;
    char *err;
    size_t errlen;
    ar_block_t *ar;   /* scratch */
    ar_block_t *keep; /* sources and chains: kept with the result */
    const char *search[HY_MAX_SEARCH];
    size_t nsearch;
    const char *config_name;
    cfgfile_t *files[HY_MAX_FILES];
    size_t nfiles;
    const char *missing[HY_MAX_FILES]; /* paths looked for and not found */
    size_t nmissing;
    choice_t choices[HY_MAX_DEFAULTS];
    size_t nchoices;
    deletion_t dels[HY_MAX_DEFAULTS];
    size_t ndels;
    known_t known[HY_MAX_FILES];
    size_t nknown;
    elem_t *appends[HY_MAX_DEFAULTS];
    size_t nappends;
    hy_override_t *values; /* value overrides, in order */
    size_t nvalues;
    hy_override_t *hvalues; /* hydra.* value overrides, for HydraConfig */
    size_t nhvalues;
    const char *warn[32];
    size_t nwarn;
    yt_node_t *root; /* the composed config */
} hc_t;

/* ---- compose_util.c: messages ---- */
const char *hc_chain(hc_t *hc, const tnode_t *t, const char *leaf);
/* err = "WHERE(at): MESSAGE (defaults: CHAIN(t))"; returns PROFD_ECONFIG. */
int hc_fail(hc_t *hc, const tnode_t *t, const elem_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int hc_nomem(hc_t *hc);
void hc_warn(hc_t *hc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- compose_elem.c: elements (default_element.py) ---- */
elem_t *hc_elem_new(hc_t *hc);
void hc_elem_parent(elem_t *e, const char *pbase, const char *ppkg);
const char *hc_elem_name(hc_t *hc, const elem_t *e);
const char *hc_elem_group_path(hc_t *hc, const elem_t *e);
const char *hc_elem_config_path(hc_t *hc, const elem_t *e);
const char *hc_elem_package(const elem_t *e, bool header_ok);
const char *hc_elem_final_package(hc_t *hc, const elem_t *e, bool header_ok);
const char *hc_elem_override_key(hc_t *hc, const elem_t *e);
bool hc_elem_is_interp(hc_t *hc, const elem_t *e);
bool hc_elem_is_missing(hc_t *hc, const elem_t *e);

/* ---- compose_elem.c: the repository (config_repository.py) ---- */
/* *cf = the config at `path` (NULL when no search folder has it). */
int hc_repo_load(hc_t *hc, const char *path, cfgfile_t **cf);
bool hc_repo_group_exists(hc_t *hc, const char *group);
/* "a, b, c": the options of a group (sorted); "" when none. */
const char *hc_repo_options(hc_t *hc, const char *group);
/* A copy of cf's defaults for one expansion, with room for the appends
 * and `_self_`. */
int hc_copy_defaults(hc_t *hc, const cfgfile_t *cf, elem_t ***list, size_t *n);
int hc_update_header(hc_t *hc, tnode_t *t, elem_t *e);
int hc_primary_exists(hc_t *hc, const elem_t *primary);
int hc_not_found(hc_t *hc, const tnode_t *t);
int hc_check_missing(hc_t *hc, const tnode_t *t, const elem_t *e);

/* ---- compose_ovr.c: overrides (defaults_list.py Overrides) ---- */
int hc_setup(hc_t *hc);
void hc_teardown(hc_t *hc, bool failed);
bool hc_is_deleted(hc_t *hc, elem_t *e);
int hc_known_choice(hc_t *hc, const tnode_t *t, const elem_t *e);
void hc_override_default(hc_t *hc, elem_t *e);
int hc_validate_self(hc_t *hc, const tnode_t *t, elem_t **list, size_t *n, bool *self_added);
int hc_update_overrides(hc_t *hc, const tnode_t *t, elem_t **list, size_t n, bool interpolated);
int hc_resolve_choice(hc_t *hc, const tnode_t *t, elem_t *e, elem_t **list, size_t n,
                      bool self_added);
int hc_overrides_used(hc_t *hc);
/* Merge the config at `path` into the result at package `pkg`. */
int hc_merge_config(hc_t *hc, const char *path, const char *pkg, const char *chain);
int hc_apply_values(hc_t *hc);
int hc_result(hc_t *hc, hy_config_t *out);

/* ---- hydra_rt.c: HydraConfig as the job sees it ---- */
/* Complete root's `hydra` node (Hydra's defaults, hydra.* overrides, the
 * runtime values), resolve it and move it to *out. */
int hc_hydra_config(hc_t *hc, hy_hydra_t *out);

#endif
