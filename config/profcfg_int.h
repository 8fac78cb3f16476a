// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Internals shared by the profiling-config readers: profcfg.c (entry,
 * schema detection), the schema families (profcfg_verl*.c,
 * profcfg_legacy.c, profcfg_ms.c) and, below them all, profcfg_util.c
 * (typed getters, messages, output). Not a public header.
 */
#ifndef PD_PROFCFG_INT_H
#define PD_PROFCFG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "omegaconf.h"
#include "profcfg.h"
#include "profd/proto.h"
#include "yamltree.h"

struct cJSON;

typedef struct strv {
    char **v;
    size_t n;
} strv_t;

/* One reader run. */
typedef struct pc {
    const char *file;
    oc_t oc;
    char *err;
    size_t errlen;
    strv_t warnings;       /* file-level warnings */
    pp_window_spec_t spec; /* the request being built */
    strv_t spec_warnings;  /* ... and its warnings */
    bool have_spec;
    const char *schema;
    pd_framework_t fw;        /* numbering and defaults of Megatron-style keys */
    bool composed;            /* pd_profcfg_opts_t.composed */
    pp_window_spec_t done[4]; /* requests finished before `spec` */
    size_t ndone;
    char no_window[512]; /* why there is no request, when there is none */
} pc_t;

/* Key tables for "unknown key" warnings. */
#define KS_ANY 1u /* anything may be below (tool options, kw_args...) */
typedef struct kspec {
    const char *name;
    const struct kspec *sub; /* a mapping with these keys */
    unsigned flags;
} kspec_t;

/* ---- messages ---- */

/* Free a list of strings (the list itself is left empty). */
void pc_strv_free(strv_t *v);

/* Add "WHERE: key 'PATH': MESSAGE" to `to` (pc->warnings or
 * pc->spec_warnings). `at` gives position and key; never fails (a warning
 * lost to ENOMEM is dropped). */
void pc_warn(pc_t *pc, strv_t *to, const yt_node_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* "WHERE(at): key 'PATH(key)': expected WHAT, found DESCRIBE(found)";
 * returns PROFD_ECONFIG. key NULL: at. */
int pc_expected(pc_t *pc, const yt_node_t *at, const yt_node_t *key, const yt_node_t *found,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* "WHERE(at): key 'PATH(at)': MESSAGE"; returns PROFD_ECONFIG. */
int pc_error(pc_t *pc, const yt_node_t *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Warn "WHERE: key 'PATH': unknown key, ignored" for one pair. */
void pc_unknown(pc_t *pc, const yt_pair_t *p);
/* Check the keys of a literal mapping (interpolated mappings are checked
 * where they are written). */
void pc_check_keys(pc_t *pc, const yt_node_t *map, const kspec_t *spec);

/* Say why the config asks for no window (the first reason given wins). */
void pc_no_window(pc_t *pc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- typed reads of raw nodes (NULL raw = absent) ---- */

/* The resolved value; a `???` (OmegaConf's MISSING) is the error verl gets
 * when it reads the key: "Missing mandatory value: KEY". */
int pc_val(pc_t *pc, yt_node_t *raw, yt_node_t **val);
/* The same for a key profd only looks at (an engine name): `???` reads as
 * absent (*val NULL). */
int pc_val_opt(pc_t *pc, yt_node_t *raw, yt_node_t **val);
int pc_get(pc_t *pc, yt_node_t *base, const char *path, yt_node_t **raw);
/* *out = def when absent or null. */
int pc_bool(pc_t *pc, yt_node_t *raw, bool def, bool *out);
/* *out = def when absent or null; min..max. */
int pc_int(pc_t *pc, yt_node_t *raw, int64_t min, int64_t max, int64_t def, int64_t *out);
/* A string (or one of `choices`); *out NULL when absent or null. The string
 * belongs to the tree. `what` names the expected value in messages. */
int pc_str(pc_t *pc, yt_node_t *raw, const char *const *choices, const char *what,
           const char **out);
/* A list of integers in min..max (null/absent: *n = 0, *isnull = true).
 * *out is malloc'ed (may be NULL when empty). `what` as above. */
int pc_ints(pc_t *pc, yt_node_t *raw, int64_t min, int64_t max, const char *what, int64_t **out,
            size_t *n, bool *isnull);
/* A list of strings from `choices`; checks only. */
int pc_names(pc_t *pc, yt_node_t *raw, const char *const *choices, const char *what);
/* s is one of the NULL-terminated list. */
bool pc_in(const char *s, const char *const *list);
/* "one of a, b, c" / "a list of a, b, c" into buf. */
void pc_choices(const char *const *choices, char *buf, size_t len);
void pc_list_of(const char *const *choices, char *buf, size_t len);

/* ---- output ---- */

/* Sort and remove duplicates. */
size_t pc_sort_unique(int64_t *v, size_t n);
/* JSON of a resolved value: `_target_` dropped at every depth, and at the
 * top level the keys in `drop` and (keep != NULL) those `keep` does not
 * list. NULL raw: an empty object. */
int pc_json(pc_t *pc, yt_node_t *raw, const char *const *drop, const kspec_t *keep,
            struct cJSON **out);
/* JSON text of an object (consumed); NULL on ENOMEM. */
char *pc_json_text(struct cJSON *obj);
/* The same into *out; 0 or PROFD_ENOMEM (with the message). */
int pc_json_out(pc_t *pc, struct cJSON *obj, char **out);

/* Start the request (steps or start/end set by the caller). */
void pc_spec_begin(pc_t *pc);
/* Append a selector (the record is moved in, its memory now the spec's). */
int pc_add_selector(pc_t *pc, pp_selector_t *sel);
/* Pick request defaults from the selectors and drop equal overrides. */
int pc_spec_finish(pc_t *pc, const char *save_path);
/* Set the finished request aside: another one is built next. */
int pc_spec_push(pc_t *pc);

int pc_strdup(pc_t *pc, const char *s, char **out);
int pc_nomem(pc_t *pc);

/* ---- the schemas ---- */

int pc_verl(pc_t *pc, yt_node_t *root);
int pc_verl_legacy(pc_t *pc, yt_node_t *root);
int pc_verl_fragment(pc_t *pc, yt_node_t *section, bool options);
int pc_mindspeed(pc_t *pc, yt_node_t *training);
int pc_megatron(pc_t *pc, yt_node_t *root);
/* The file of a node for messages (pc->file when it has none). */
const char *pc_file_of(const pc_t *pc, const yt_node_t *n);

extern const char *const pc_levels[];

#endif
