// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Internals of the OmegaConf / Hydra value parser, shared by omegaconf.c
 * (the element parser, interpolations, resolution, override values),
 * oc_resolvers.c (oc.select, oc.env, oc.decode and the application's
 * resolvers), oc_hydra.c (Hydra's override lexer and function calls),
 * oc_util.c (the parser's helpers) and oc_text.c (strings, typing,
 * Python's str()). Calls go omegaconf.c -> oc_resolvers.c, oc_hydra.c ->
 * oc_util.c, oc_text.c, never back: what is below reaches the parser
 * through ip_t.ops. Not a public header.
 */
#ifndef PD_OMEGACONF_INT_H
#define PD_OMEGACONF_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "omegaconf.h"
#include "pu_buf.h"
#include "yamltree.h"

/* ---- oc_text.c ---- */
/* A string of at most OC_MAX_STR bytes: the shared buffer, and `over` once
 * an append would have gone past the bound (appends stop then). */
typedef struct sbuf {
    pu_sbuf_t s;
    bool over;
} sbuf_t;
void ocp_sb_add(sbuf_t *b, const char *s, size_t n);
void ocp_sb_str(sbuf_t *b, const char *s);
void ocp_sb_chr(sbuf_t *b, char c);
/* The bytes of the UTF-8 character at s (1 for a stray byte). */
size_t ocp_utf8_len(const char *s, size_t n);
bool ocp_isdig(char c);
/* Type a node's text by the grammar (a single INT/FLOAT/BOOL/NULL token). */
void ocp_gram_type(yt_node_t *n);
/* Python's str() (repr: repr()) of a value, appended. */
void ocp_py_str(sbuf_t *b, const yt_node_t *v, bool repr);

/* ---- the element parser ---- */
typedef struct val {
    yt_node_t *node;
    bool owned;
} val_t;

typedef struct ip ip_t;

/* The parser's entry points, for the helpers below it (omegaconf.c's
 * element parser and oc_resolve()). */
typedef struct ocp_ops {
    int (*element)(ip_t *p, val_t *out);
    int (*resolve)(oc_t *oc, yt_node_t *n, yt_node_t **out);
} ocp_ops_t;

struct ip {
    oc_t *oc;             /* eval mode; NULL in keep mode */
    const ocp_ops_t *ops; /* the parser (a nested parse copies it) */
    yt_node_t *node;      /* eval: the string being resolved */
    const char *origin;   /* keep: the override text */
    const char *s;
    size_t i, n;
    int *depth; /* shared with the resolver in eval mode */
    int own_depth;
    bool syntax;   /* `why` is a syntax error of this text */
    char why[512]; /* the reason, when the error is about this text */
    int in_call;   /* keep mode: inside a function's arguments */
};

typedef struct kpath {
    int dots;
    size_t n, used;
    char buf[512];
    char *seg[64];
} kpath_t;

/* oc_util.c */
/* p->why = the message, p->syntax = syntax; returns PROFD_ECONFIG. ocp_why:
 * the text cannot be evaluated; ocp_syn: it is malformed. */
int ocp_fail(ip_t *p, bool syntax, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define ocp_why(p, ...) ocp_fail((p), false, __VA_ARGS__)
#define ocp_syn(p, ...) ocp_fail((p), true, __VA_ARGS__)
int ocp_oom(ip_t *p);
void ocp_val_drop(val_t *v);
yt_node_t *ocp_mk(ip_t *p, yt_type_t t, const char *text, size_t len);
int ocp_mk_failed(ip_t *p);
/* 0, or the error of a string that ran out of memory or past OC_MAX_STR. */
int ocp_sb_check(ip_t *p, const sbuf_t *b);
/* The string as a new string value (owned). */
int ocp_sb_node(ip_t *p, const sbuf_t *b, val_t *out);
void ocp_skip_ws(ip_t *p);
int ocp_adopt(ip_t *p, val_t *v, yt_node_t **out);
void ocp_set_origin_tree(yt_node_t *n, const char *origin);
int ocp_kpath_parse(ip_t *p, const char *s, kpath_t *k);
int ocp_kpath_find(ip_t *p, const kpath_t *k, yt_node_t **raw);
bool ocp_is_missing_marker(const yt_node_t *n);
int ocp_resolve_raw(ip_t *p, yt_node_t *raw, val_t *out);
int ocp_null_value(ip_t *p, val_t *out);

/* ---- omegaconf.c ---- */
int ocp_element(ip_t *p, val_t *out);

/* ---- oc_resolvers.c ---- */
int ocp_call_resolver(ip_t *p, const char *name, val_t *args, size_t nargs, val_t *out);

/* ---- oc_hydra.c ---- */
/* Hydra's value lexer at p->i (keep mode); len: the text gathered so far. */
int ocp_hydra_char(ip_t *p, size_t len);
/* The length of `NAME (` at s when a function call starts there; 0 if none. */
size_t ocp_hy_function_at(const char *s, size_t n);
/* NAME(ARGS) at p->i: evaluated, or refused as Hydra refuses it. */
int ocp_hydra_call(ip_t *p, val_t *out);

#endif
