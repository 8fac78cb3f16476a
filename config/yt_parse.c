// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * YAML -> tree, driven by libyaml's event parser with an explicit stack
 * (no recursion on input depth). See yamltree.h for the typing rules.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "profd/errors.h"
#include "pu_buf.h"
#include "yamltree.h"

/* ---- the parser ------------------------------------------------------------ */

static int depth_of(const yt_node_t *n)
{
    int d = 0;
    for (size_t i = 0; i < n->n && (n->type == YT_SEQ || n->type == YT_MAP); i++) {
        int c = depth_of(n->type == YT_SEQ ? n->items[i] : n->pairs[i].value);
        d = c > d ? c : d;
    }
    return n->type == YT_SEQ || n->type == YT_MAP ? d + 1 : 0;
}

typedef struct frame {
    yt_node_t *node;
    char *key; /* MAP: key waiting for its value */
    int kline, kcol;
    bool kmerge;      /* the pending key is the plain `<<` */
    yt_node_t *merge; /* SEQ of mappings to merge at the end */
} frame_t;

/* An anchor keeps its own copy of the value, made when the value is
 * complete: the node in the tree may be freed (a key, a merge source). */
typedef struct anchor {
    char *name;
    const yt_node_t *open; /* the container still being built, else NULL */
    yt_node_t *copy;
} anchor_t;

typedef struct builder {
    const char *file;
    char *err;
    size_t errlen;
    frame_t stack[YT_MAX_DEPTH + 1];
    int depth;
    yt_node_t *root;
    size_t nodes;
    anchor_t *anchors;
    size_t nanchors, capanchors;
} builder_t;

static int fail(builder_t *b, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(builder_t *b, int line, int col, const char *fmt, ...)
{
    va_list ap;
    int off = snprintf(b->err, b->errlen, "%s:%d:%d: ", b->file, line, col);
    if (off >= 0 && (size_t)off < b->errlen) {
        va_start(ap, fmt);
        vsnprintf(b->err + off, b->errlen - (size_t)off, fmt, ap);
        va_end(ap);
    }
    yt_one_line(b->err);
    return PROFD_ECONFIG;
}

static int nomem(builder_t *b)
{
    snprintf(b->err, b->errlen, "%s: out of memory", b->file);
    return PROFD_ENOMEM;
}

static int count_nodes(builder_t *b, size_t k, int line, int col)
{
    b->nodes += k;
    if (b->nodes > YT_MAX_NODES) {
        return fail(b, line, col, "more than %d nodes (aliases count as copies)", YT_MAX_NODES);
    }
    return 0;
}

static int anchor_copy(builder_t *b, anchor_t *a, const yt_node_t *node)
{
    int rc = count_nodes(b, yt_count(node), node->line, node->col);
    if (rc != 0) {
        return rc;
    }
    if ((a->copy = yt_copy(node)) == NULL) {
        return nomem(b);
    }
    a->open = NULL;
    return 0;
}

/* A container's anchor is completed by anchor_close(); a scalar's now. */
static int anchor_add(builder_t *b, const yaml_char_t *name, yt_node_t *node, bool open)
{
    if (name == NULL) {
        return 0;
    }
    if (PU_GROW(b->anchors, b->capanchors, b->nanchors + 1) != 0) {
        return nomem(b);
    }
    char *str = strdup((const char *)name);
    if (str == NULL) {
        return nomem(b);
    }
    anchor_t *a = &b->anchors[b->nanchors++];
    *a = (anchor_t){.name = str, .open = node};
    return open ? 0 : anchor_copy(b, a, node);
}

static anchor_t *anchor_find(builder_t *b, const char *name)
{
    for (size_t i = b->nanchors; i-- > 0;) {
        if (strcmp(b->anchors[i].name, name) == 0) {
            return &b->anchors[i];
        }
    }
    return NULL;
}

static int anchor_close(builder_t *b, const yt_node_t *node)
{
    for (size_t i = b->nanchors; i-- > 0;) {
        if (b->anchors[i].open == node) {
            return anchor_copy(b, &b->anchors[i], node);
        }
    }
    return 0;
}

/* Attach a finished value to the container on top of the stack (or make it
 * the root). Takes ownership of v. */
static int attach(builder_t *b, yt_node_t *v)
{
    if (b->depth == 0) {
        b->root = v;
        return 0;
    }
    frame_t *f = &b->stack[b->depth - 1];
    if (f->node->type == YT_SEQ) {
        return yt_seq_push(f->node, v) ? nomem(b) : 0;
    }
    if (f->key == NULL) { /* v is a key */
        int line = v->line, col = v->col;
        if (v->type == YT_SEQ || v->type == YT_MAP) {
            yt_free(v);
            return fail(b, line, col, "complex mapping keys are not supported");
        }
        if (v->text == NULL || v->text[0] == '\0') {
            yt_free(v);
            return fail(b, line, col, "empty mapping key");
        }
        f->kmerge = !(v->flags & YT_F_QUOTED) && strcmp(v->text, "<<") == 0;
        if (!f->kmerge && yt_map_pair(f->node, v->text) != NULL) {
            int rc = fail(b, line, col, "duplicate key '%s'", v->text);
            yt_free(v);
            return rc;
        }
        f->key = v->text;
        v->text = NULL;
        f->kline = line;
        f->kcol = col;
        yt_free(v);
        return 0;
    }
    char *key = f->key;
    f->key = NULL;
    if (f->kmerge) {
        free(key);
        if (v->type == YT_MAP) {
            if (f->merge == NULL && (f->merge = yt_new(YT_SEQ, 0, 0)) == NULL) {
                yt_free(v);
                return nomem(b);
            }
            return yt_seq_push(f->merge, v) ? nomem(b) : 0;
        }
        if (v->type == YT_SEQ) {
            for (size_t i = 0; i < v->n; i++) {
                if (v->items[i]->type != YT_MAP) {
                    int rc = fail(b, v->items[i]->line, v->items[i]->col,
                                  "merge key '<<' needs a mapping or a list of mappings");
                    yt_free(v);
                    return rc;
                }
            }
            if (f->merge == NULL) {
                f->merge = v;
                return 0;
            }
            while (v->n > 0) {
                yt_node_t *m = v->items[0];
                memmove(&v->items[0], &v->items[1], (v->n - 1) * sizeof(*v->items));
                v->n--;
                if (yt_seq_push(f->merge, m) != 0) {
                    yt_free(v);
                    return nomem(b);
                }
            }
            yt_free(v);
            return 0;
        }
        int rc = fail(b, v->line, v->col, "merge key '<<' needs a mapping or a list of mappings");
        yt_free(v);
        return rc;
    }
    int rc = yt_map_put(f->node, key, f->kline, f->kcol, v) ? nomem(b) : 0;
    free(key);
    return rc;
}

/* `<<` merges: keys written in the mapping win, then earlier sources. */
static int apply_merges(builder_t *b, frame_t *f)
{
    if (f->merge == NULL) {
        return 0;
    }
    for (size_t s = 0; s < f->merge->n; s++) {
        const yt_node_t *src = f->merge->items[s];
        for (size_t i = 0; i < src->n; i++) {
            const yt_pair_t *p = &src->pairs[i];
            if (yt_map_pair(f->node, p->key) != NULL) {
                continue;
            }
            yt_node_t *c = yt_copy(p->value);
            if (c == NULL || yt_map_put(f->node, p->key, p->line, p->col, c) != 0) {
                return nomem(b);
            }
        }
    }
    return 0;
}

static bool tag_is(const yaml_char_t *tag, const char *name)
{
    return tag != NULL && strcmp((const char *)tag, name) == 0;
}

static int on_scalar(builder_t *b, const yaml_event_t *ev)
{
    int line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;
    const yaml_char_t *tag = ev->data.scalar.tag;
    bool quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
    int rc = count_nodes(b, 1, line, col);
    if (rc != 0) {
        return rc;
    }
    if (tag != NULL && !tag_is(tag, "!") && strncmp((const char *)tag, "tag:yaml.org,2002:", 18)) {
        return fail(b, line, col, "unsupported tag '%s'", (const char *)tag);
    }
    bool as_str = quoted || tag_is(tag, "!") || tag_is(tag, YAML_STR_TAG);
    yt_node_t *n =
        yt_scalar((const char *)ev->data.scalar.value, ev->data.scalar.length, as_str, line, col);
    if (n == NULL) {
        return nomem(b);
    }
    if (tag != NULL && !as_str) {
        static const struct {
            const char *tag;
            yt_type_t type;
        } std[] = {{YAML_NULL_TAG, YT_NULL},
                   {YAML_BOOL_TAG, YT_BOOL},
                   {YAML_INT_TAG, YT_INT},
                   {YAML_FLOAT_TAG, YT_FLOAT}};
        bool ok = false;
        for (size_t i = 0; i < sizeof(std) / sizeof(std[0]); i++) {
            if (tag_is(tag, std[i].tag)) {
                ok = n->type == std[i].type;
                if (std[i].type == YT_FLOAT && n->type == YT_INT) {
                    n->type = YT_FLOAT;
                    n->v.f = (double)n->v.i;
                    ok = true;
                }
                break;
            }
        }
        if (!ok) {
            rc = fail(b, line, col, "value '%s' does not match tag '%s'", n->text,
                      (const char *)tag);
            yt_free(n);
            return rc;
        }
    }
    if (strlen(n->text) != ev->data.scalar.length) {
        yt_free(n);
        return fail(b, line, col, "NUL character in a scalar");
    }
    rc = anchor_add(b, ev->data.scalar.anchor, n, false);
    if (rc != 0) {
        yt_free(n);
        return rc;
    }
    return attach(b, n);
}

static int on_start(builder_t *b, const yaml_event_t *ev, yt_type_t type)
{
    int line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;
    const yaml_char_t *tag =
        type == YT_MAP ? ev->data.mapping_start.tag : ev->data.sequence_start.tag;
    const yaml_char_t *anchor =
        type == YT_MAP ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
    if (tag != NULL && !tag_is(tag, "!") &&
        !tag_is(tag, type == YT_MAP ? YAML_MAP_TAG : YAML_SEQ_TAG)) {
        return fail(b, line, col, "unsupported tag '%s'", (const char *)tag);
    }
    if (b->depth >= YT_MAX_DEPTH) {
        return fail(b, line, col, "nesting deeper than %d levels", YT_MAX_DEPTH);
    }
    int rc = count_nodes(b, 1, line, col);
    if (rc != 0) {
        return rc;
    }
    yt_node_t *n = yt_new(type, line, col);
    if (n == NULL) {
        return nomem(b);
    }
    if ((rc = anchor_add(b, anchor, n, true)) != 0) {
        yt_free(n);
        return rc;
    }
    b->stack[b->depth++] = (frame_t){.node = n};
    return 0;
}

static int on_end(builder_t *b)
{
    frame_t f = b->stack[--b->depth];
    int rc = apply_merges(b, &f);
    yt_free(f.merge);
    free(f.key);
    if (rc == 0) {
        rc = anchor_close(b, f.node);
    }
    if (rc != 0) {
        yt_free(f.node);
        return rc;
    }
    return attach(b, f.node);
}

static int on_alias(builder_t *b, const yaml_event_t *ev)
{
    int line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;
    const char *name = (const char *)ev->data.alias.anchor;
    anchor_t *a = anchor_find(b, name);
    if (a == NULL) {
        return fail(b, line, col, "unknown alias '*%s'", name);
    }
    if (a->copy == NULL) {
        return fail(b, line, col, "recursive alias '*%s'", name);
    }
    if (b->depth + depth_of(a->copy) > YT_MAX_DEPTH) {
        return fail(b, line, col, "nesting deeper than %d levels", YT_MAX_DEPTH);
    }
    int rc = count_nodes(b, yt_count(a->copy), line, col);
    if (rc != 0) {
        return rc;
    }
    yt_node_t *c = yt_copy(a->copy);
    if (c == NULL) {
        return nomem(b);
    }
    c->line = line;
    c->col = col;
    return attach(b, c);
}

static void builder_fini(builder_t *b)
{
    while (b->depth > 0) {
        frame_t *f = &b->stack[--b->depth];
        yt_free(f->node);
        yt_free(f->merge);
        free(f->key);
    }
    for (size_t i = 0; i < b->nanchors; i++) {
        free(b->anchors[i].name);
        yt_free(b->anchors[i].copy);
    }
    free(b->anchors);
    yt_free(b->root);
}

int yt_parse(const char *file, const char *text, size_t len, yt_node_t **out, char *err,
             size_t errlen)
{
    builder_t b = {.file = file, .err = err, .errlen = errlen};
    yaml_parser_t parser;
    yaml_event_t ev;
    int rc = 0, docs = 0;
    bool done = false;

    if (len > YT_MAX_INPUT) {
        snprintf(err, errlen, "%s: YAML text of %zu bytes exceeds the limit of %u bytes", file, len,
                 (unsigned)YT_MAX_INPUT);
        return PROFD_ECONFIG;
    }
    if (!yaml_parser_initialize(&parser)) {
        return nomem(&b);
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    while (rc == 0 && !done) {
        if (!yaml_parser_parse(&parser, &ev)) {
            if (parser.error == YAML_MEMORY_ERROR) {
                rc = nomem(&b);
            } else {
                int line = (int)parser.problem_mark.line + 1;
                int col = (int)parser.problem_mark.column + 1;
                if (parser.error == YAML_READER_ERROR) { /* only a byte offset is known */
                    line = col = 1;
                    for (size_t i = 0; i < parser.problem_offset && i < len; i++) {
                        line += text[i] == '\n';
                        col = text[i] == '\n' ? 1 : col + 1;
                    }
                }
                rc = fail(&b, line, col, "YAML syntax error: %s",
                          parser.problem ? parser.problem : "invalid");
            }
            break;
        }
        switch (ev.type) {
        case YAML_DOCUMENT_START_EVENT:
            if (++docs > 1) {
                rc = fail(&b, (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1,
                          "more than one YAML document");
            }
            break;
        case YAML_SCALAR_EVENT:
            rc = on_scalar(&b, &ev);
            break;
        case YAML_SEQUENCE_START_EVENT:
            rc = on_start(&b, &ev, YT_SEQ);
            break;
        case YAML_MAPPING_START_EVENT:
            rc = on_start(&b, &ev, YT_MAP);
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            rc = on_end(&b);
            break;
        case YAML_ALIAS_EVENT:
            rc = on_alias(&b, &ev);
            break;
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        default:
            break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    if (rc == 0 && b.root == NULL && (b.root = yt_new(YT_NULL, 1, 1)) == NULL) {
        rc = nomem(&b);
    }
    if (rc == 0) {
        *out = b.root;
        b.root = NULL;
    }
    builder_fini(&b);
    return rc;
}
