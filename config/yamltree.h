// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * YAML text -> an owned tree of mapping / sequence / scalar nodes, keeping
 * the line and column (1-based) of every node and key.
 *
 * Plain scalars are typed the way OmegaConf's loader (PyYAML SafeLoader,
 * YAML 1.1) types them: null (`~`, `null`, empty), bool (true/false,
 * yes/no, on/off in lower, Title and UPPER case), int (decimal, 0b, 0o-style
 * leading 0, 0x, sexagesimal, `_` separators), float (OmegaConf's pattern,
 * `1e3` included, `.inf`, `.nan`); timestamps stay strings. Quoted and block
 * scalars are strings. Anchors, aliases (expanded by copy) and `<<` merge
 * keys are supported; duplicate keys, complex keys, unknown tags and multiple
 * documents are errors. Input size, depth and node count are bounded.
 *
 * The module is yamltree.c (nodes), yt_plain.c (typing) and yt_parse.c (the
 * parser, the only file of the project that includes <yaml.h>).
 */
#ifndef PD_YAMLTREE_H
#define PD_YAMLTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bounds: a hostile file gets an error, never a crash or unbounded memory. */
#define YT_MAX_INPUT (4u << 20) /* bytes of YAML text */
#define YT_MAX_DEPTH 64         /* nesting of mappings and sequences */
#define YT_MAX_NODES 100000     /* nodes, alias copies included */

typedef enum yt_type {
    YT_NULL,
    YT_BOOL,
    YT_INT,
    YT_FLOAT,
    YT_STR,
    YT_SEQ,
    YT_MAP,
} yt_type_t;

/* Node flags. The YT_F_REF* / YT_F_BUSY bits belong to the interpolation
 * resolver (omegaconf.h); the tree only frees what they say it owns. */
#define YT_F_QUOTED 1u  /* scalar written quoted or as a block scalar */
#define YT_F_FINAL  2u  /* a computed value: never interpolated again */
#define YT_F_REF    4u  /* `ref` holds the resolved value of this string */
#define YT_F_REFOWN 8u  /* ... and the tree owns it */
#define YT_F_BUSY   16u /* being resolved (cycle detection) */
#define YT_F_QSTR   32u /* an override value written in quotes (Hydra's QuotedString) */

typedef struct yt_node yt_node_t;

/* Where a node was read: the file's name as messages show it and, for a
 * config a Hydra defaults list brought in, the chain of files that did
 * ("primary.yaml -> tool/npu.yaml"; NULL for a file read on its own). The
 * composer owns these; nodes only point at them. */
typedef struct yt_source {
    const char *name;
    const char *chain;
} yt_source_t;

typedef struct yt_pair {
    char *key;
    int line, col; /* of the key */
    yt_node_t *value;
} yt_pair_t;

struct yt_node {
    yt_type_t type;
    unsigned flags;
    int line, col;          /* 1-based; 0 for nodes built from an override */
    const char *origin;     /* not NULL: the override text this node came from */
    const yt_source_t *src; /* not NULL: the file this node was read from */
    char *text;             /* scalars: the string, or the source text of the
                               null/bool/int/float it was typed as */
    union {
        bool b;
        int64_t i;
        double f;
    } v;
    size_t n, cap;     /* SEQ items / MAP pairs */
    yt_node_t **items; /* SEQ */
    yt_pair_t *pairs;  /* MAP */
    yt_node_t *parent; /* enclosing SEQ / MAP, NULL at the root */
    yt_node_t *from;   /* computed value: the interpolation it came from */
    yt_node_t *ref;    /* resolved value (YT_F_REF) */
    /* MAP of many pairs: their index by key (open addressing, positions + 1,
     * hcap slots, the first hn pairs in it), made by the first lookup and
     * kept by yt_map_put; NULL until then, or after a deletion */
    uint32_t *hix;
    size_t hcap, hn;
};

/*
 * Parse `len` bytes of YAML (`file` names it in messages). An empty stream
 * gives a YT_NULL root at 1:1. On success *out owns the tree (free with
 * yt_free()). On error *out is untouched and `err` receives one line:
 *   FILE:LINE:COL: YAML syntax error: <problem>
 *   FILE:LINE:COL: <what is not supported / exceeds a bound>
 * Returns 0, PROFD_ECONFIG or PROFD_ENOMEM.
 */
int yt_parse(const char *file, const char *text, size_t len, yt_node_t **out, char *err,
             size_t errlen);

/* Free a node, its children and what the resolver attached to them. */
void yt_free(yt_node_t *n);

/* A new empty node (NULL when out of memory). Scalars: yt_scalar(). */
yt_node_t *yt_new(yt_type_t type, int line, int col);
/* A new scalar holding a copy of `text` (len bytes), typed by the YAML 1.1
 * rules above unless `quoted` (then a string). NULL when out of memory. */
yt_node_t *yt_scalar(const char *text, size_t len, bool quoted, int line, int col);
/* Deep copy (values only: resolver state is not copied); NULL on ENOMEM. */
yt_node_t *yt_copy(const yt_node_t *n);
/* Point n and every node below it at `src` (not copied: it must outlive
 * the tree). */
void yt_set_source(yt_node_t *n, const yt_source_t *src);
/* Count of nodes below and including n. */
size_t yt_count(const yt_node_t *n);

/* Append to a sequence / set in a mapping; the container takes ownership of
 * `v` (also on failure, when it is freed). Returns 0 or PROFD_ENOMEM. */
int yt_seq_push(yt_node_t *seq, yt_node_t *v);
int yt_map_put(yt_node_t *map, const char *key, int line, int col, yt_node_t *v);
/* The pair of `key` in a mapping, NULL when absent or not a mapping. */
yt_pair_t *yt_map_pair(const yt_node_t *map, const char *key);
yt_node_t *yt_map_get(const yt_node_t *map, const char *key);
/* Remove and free a pair; false when absent. */
bool yt_map_del(yt_node_t *map, const char *key);
/* Replace the content of `dst` by `src` (consumed), keeping dst's place in
 * the tree (parent, key) and position. */
void yt_replace(yt_node_t *dst, yt_node_t *src);

/* Type a plain scalar text the YAML 1.1 way into n (type and value). */
void yt_type_plain(yt_node_t *n);

/* "null", "bool", "int", "float", "string", "list", "mapping". */
const char *yt_type_name(yt_type_t t);
/* What a value is, for messages: 'text' for scalars (shortened), "a list",
 * "a mapping", "null". */
void yt_describe(const yt_node_t *n, char *buf, size_t len);
/* Replace control characters (newlines included) by '?' so that a message
 * stays one line whatever the keys and values hold. */
void yt_one_line(char *s);
/* Dotted path of a node from the root ("a.b[2].c"), following computed
 * values back to the interpolation that made them. */
void yt_path(const yt_node_t *n, char *buf, size_t len);

#endif
