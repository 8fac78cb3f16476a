// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* yamltree: YAML 1.1 typing as OmegaConf's loader does it, positions,
 * anchors and merges, and the exact errors (syntax, limits, unsupported). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profd/errors.h"
#include "yamltree.h"

static yt_node_t *parse_ok(const char *text)
{
    yt_node_t *root = NULL;
    char err[256] = "";
    int rc = yt_parse("t.yaml", text, strlen(text), &root, err, sizeof(err));
    if (rc != 0) {
        print_error("unexpected error: %s\n", err);
    }
    assert_int_equal(rc, 0);
    assert_non_null(root);
    return root;
}

static void expect_error(const char *text, int code, const char *msg)
{
    yt_node_t *root = (yt_node_t *)0x1;
    char err[256] = "";
    assert_int_equal(yt_parse("t.yaml", text, strlen(text), &root, err, sizeof(err)), code);
    assert_string_equal(err, msg);
    assert_ptr_equal(root, (yt_node_t *)0x1); /* untouched on error */
}

/* ---- typing ---- */

static const struct {
    const char *text;
    yt_type_t type;
    int64_t i;
    double f;
} typing[] = {
    {"null", YT_NULL, 0, 0},
    {"~", YT_NULL, 0, 0},
    {"Null", YT_NULL, 0, 0},
    {"NULL", YT_NULL, 0, 0},
    {"nULL", YT_STR, 0, 0},
    {"true", YT_BOOL, 1, 0},
    {"True", YT_BOOL, 1, 0},
    {"TRUE", YT_BOOL, 1, 0},
    {"tRUE", YT_STR, 0, 0},
    {"false", YT_BOOL, 0, 0},
    {"False", YT_BOOL, 0, 0},
    {"yes", YT_BOOL, 1, 0},
    {"Yes", YT_BOOL, 1, 0},
    {"no", YT_BOOL, 0, 0},
    {"NO", YT_BOOL, 0, 0},
    {"on", YT_BOOL, 1, 0},
    {"Off", YT_BOOL, 0, 0},
    {"y", YT_STR, 0, 0},
    {"n", YT_STR, 0, 0},
    {"0", YT_INT, 0, 0},
    {"42", YT_INT, 42, 0},
    {"-42", YT_INT, -42, 0},
    {"+7", YT_INT, 7, 0},
    {"100_000", YT_INT, 100000, 0},
    {"0x1F", YT_INT, 31, 0},
    {"0x_ff", YT_INT, 255, 0},
    {"0b101", YT_INT, 5, 0},
    {"017", YT_INT, 15, 0},
    {"0660", YT_INT, 0660, 0},
    {"08", YT_STR, 0, 0},
    {"0o17", YT_STR, 0, 0},
    {"1:30", YT_INT, 90, 0},
    {"-1:00:01", YT_INT, -3601, 0},
    {"1:70", YT_STR, 0, 0},
    {"9223372036854775807", YT_INT, INT64_MAX, 0},
    {"-9223372036854775808", YT_INT, INT64_MIN, 0},
    {"9223372036854775808", YT_FLOAT, 0, 9223372036854775808.0},
    {"1.5", YT_FLOAT, 0, 1.5},
    {"-0.25", YT_FLOAT, 0, -0.25},
    {"1.", YT_FLOAT, 0, 1.0},
    {".5", YT_FLOAT, 0, 0.5},
    {"-.5", YT_STR, 0, 0},
    {"1e3", YT_FLOAT, 0, 1000.0},
    {"1E-2", YT_FLOAT, 0, 0.01},
    {"1.5e+2", YT_FLOAT, 0, 150.0},
    {"1_000.5", YT_FLOAT, 0, 1000.5},
    {"1:30.5", YT_FLOAT, 0, 90.5},
    {"1e", YT_STR, 0, 0},
    {"2001-12-14", YT_STR, 0, 0}, /* OmegaConf drops the timestamp resolver */
    {"level1", YT_STR, 0, 0},
    {"outputs/profile", YT_STR, 0, 0},
    {"${oc.select:a,1}", YT_STR, 0, 0},
    {"=", YT_STR, 0, 0},
};

static void test_yamltree_plain_typing(void **state)
{
    for (size_t i = 0; i < sizeof(typing) / sizeof(typing[0]); i++) {
        yt_node_t *n = yt_scalar(typing[i].text, strlen(typing[i].text), false, 1, 1);
        assert_non_null(n);
        if (n->type != typing[i].type) {
            print_error("'%s': type %s, expected %s\n", typing[i].text, yt_type_name(n->type),
                        yt_type_name(typing[i].type));
        }
        assert_int_equal(n->type, typing[i].type);
        if (n->type == YT_INT) {
            assert_int_equal(n->v.i, typing[i].i);
        } else if (n->type == YT_BOOL) {
            assert_int_equal(n->v.b, typing[i].i);
        } else if (n->type == YT_FLOAT) {
            if (n->v.f != typing[i].f) {
                print_error("'%s': %.17g, expected %.17g\n", typing[i].text, n->v.f, typing[i].f);
            }
            assert_true(n->v.f == typing[i].f);
        }
        assert_string_equal(n->text, typing[i].text);
        yt_free(n);
    }
}

static void test_yamltree_special_floats(void **state)
{
    const char *pos[] = {".inf", ".Inf", "+.INF"};
    for (size_t i = 0; i < 3; i++) {
        yt_node_t *n = yt_scalar(pos[i], strlen(pos[i]), false, 1, 1);
        assert_int_equal(n->type, YT_FLOAT);
        assert_true(isinf(n->v.f) && n->v.f > 0);
        yt_free(n);
    }
    yt_node_t *n = yt_scalar("-.inf", 5, false, 1, 1);
    assert_true(isinf(n->v.f) && n->v.f < 0);
    yt_free(n);
    n = yt_scalar(".NaN", 4, false, 1, 1);
    assert_int_equal(n->type, YT_FLOAT);
    assert_true(isnan(n->v.f));
    yt_free(n);
    n = yt_scalar("-.nan", 5, false, 1, 1); /* no sign on nan */
    assert_int_equal(n->type, YT_STR);
    yt_free(n);
}

static void test_yamltree_quoted_and_block_scalars_are_strings(void **state)
{
    yt_node_t *r = parse_ok("a: \"true\"\nb: '5'\nc: |\n  null\nd: !!str 7\ne: ''\nf:\n");
    yt_node_t *a = yt_map_get(r, "a"), *b = yt_map_get(r, "b"), *c = yt_map_get(r, "c");
    yt_node_t *d = yt_map_get(r, "d"), *e = yt_map_get(r, "e"), *f = yt_map_get(r, "f");
    assert_int_equal(a->type, YT_STR);
    assert_true(a->flags & YT_F_QUOTED);
    assert_string_equal(a->text, "true");
    assert_int_equal(b->type, YT_STR);
    assert_int_equal(c->type, YT_STR);
    assert_string_equal(c->text, "null\n");
    assert_int_equal(d->type, YT_STR);
    assert_string_equal(d->text, "7");
    assert_int_equal(e->type, YT_STR);
    assert_string_equal(e->text, "");
    assert_int_equal(f->type, YT_NULL); /* empty plain value */
    yt_free(r);
}

static void test_yamltree_std_tags(void **state)
{
    yt_node_t *r = parse_ok("a: !!int 12\nb: !!float 3\nc: !!bool yes\nd: !!null ~\n");
    assert_int_equal(yt_map_get(r, "a")->v.i, 12);
    assert_int_equal(yt_map_get(r, "b")->type, YT_FLOAT);
    assert_true(yt_map_get(r, "b")->v.f == 3.0);
    assert_true(yt_map_get(r, "c")->v.b);
    assert_int_equal(yt_map_get(r, "d")->type, YT_NULL);
    yt_free(r);
    expect_error("a: !!int abc\n", PROFD_ECONFIG,
                 "t.yaml:1:4: value 'abc' does not match tag 'tag:yaml.org,2002:int'");
    expect_error("a: !python/tuple [1]\n", PROFD_ECONFIG,
                 "t.yaml:1:4: unsupported tag '!python/tuple'");
    expect_error("a: !!set {x}\n", PROFD_ECONFIG,
                 "t.yaml:1:4: unsupported tag 'tag:yaml.org,2002:set'");
}

/* ---- structure and positions ---- */

static void test_yamltree_positions(void **state)
{
    yt_node_t *r = parse_ok("# comment\nglobal_profiler:\n  steps: [1, 2]\n  tool:   npu\n"
                            "list:\n  - a\n  - {k: v}\n");
    assert_int_equal(r->type, YT_MAP);
    assert_int_equal(r->n, 2);
    yt_pair_t *gp = yt_map_pair(r, "global_profiler");
    assert_int_equal(gp->line, 2);
    assert_int_equal(gp->col, 1);
    yt_node_t *steps = yt_map_get(gp->value, "steps");
    assert_int_equal(steps->type, YT_SEQ);
    assert_int_equal(steps->line, 3);
    assert_int_equal(steps->col, 10);
    assert_int_equal(steps->n, 2);
    assert_int_equal(steps->items[1]->v.i, 2);
    assert_int_equal(steps->items[1]->line, 3);
    assert_int_equal(steps->items[1]->col, 14);
    assert_ptr_equal(steps->parent, gp->value);
    yt_pair_t *tool = yt_map_pair(gp->value, "tool");
    assert_int_equal(tool->line, 4);
    assert_int_equal(tool->col, 3);
    assert_int_equal(tool->value->col, 11);
    yt_node_t *list = yt_map_get(r, "list");
    assert_int_equal(list->items[0]->line, 6);
    assert_int_equal(list->items[0]->col, 5);
    yt_node_t *k = yt_map_get(list->items[1], "k");
    assert_string_equal(k->text, "v");

    char path[128];
    yt_path(steps->items[1], path, sizeof(path));
    assert_string_equal(path, "global_profiler.steps[1]");
    yt_path(k, path, sizeof(path));
    assert_string_equal(path, "list[1].k");
    yt_path(r, path, sizeof(path));
    assert_string_equal(path, "");
    yt_free(r);
}

static void test_yamltree_empty_documents(void **state)
{
    const char *texts[] = {"", "# only a comment\n", "---\n", "~\n"};
    for (size_t i = 0; i < 4; i++) {
        yt_node_t *r = parse_ok(texts[i]);
        assert_int_equal(r->type, YT_NULL);
        yt_free(r);
    }
}

static void test_yamltree_anchors_and_merge(void **state)
{
    yt_node_t *r = parse_ok("base: &b\n  a: 1\n  b: 2\nother: &o {c: 3}\n"
                            "x:\n  <<: *b\n  b: 20\ny:\n  <<: [*o, *b]\n  a: 10\nz: *o\n");
    yt_node_t *x = yt_map_get(r, "x"), *y = yt_map_get(r, "y"), *z = yt_map_get(r, "z");
    assert_int_equal(x->n, 2);
    assert_int_equal(yt_map_get(x, "a")->v.i, 1);
    assert_int_equal(yt_map_get(x, "b")->v.i, 20);
    assert_null(yt_map_get(x, "<<"));
    assert_int_equal(y->n, 3);
    assert_int_equal(yt_map_get(y, "a")->v.i, 10);
    assert_int_equal(yt_map_get(y, "b")->v.i, 2);
    assert_int_equal(yt_map_get(y, "c")->v.i, 3);
    assert_int_equal(z->type, YT_MAP);
    assert_int_equal(yt_map_get(z, "c")->v.i, 3);
    assert_int_equal(z->line, 11); /* a copy placed where the alias is */
    /* the copy is independent of the anchored node */
    assert_ptr_not_equal(yt_map_get(z, "c"), yt_map_get(yt_map_get(r, "other"), "c"));
    yt_free(r);
}

/* Anchors keep their own copy: the anchored node may be a key or a merge
 * source, freed once used (found by fuzzing). */
static void test_yamltree_anchor_on_freed_nodes(void **state)
{
    yt_node_t *r = parse_ok("a: &m {k: 1}\nb:\n  &n <<: *m\nc: *n\nd:\n  <<: &s {q: 2}\ne: *s\n");
    assert_int_equal(yt_map_get(yt_map_get(r, "b"), "k")->v.i, 1);
    assert_string_equal(yt_map_get(r, "c")->text, "<<");
    assert_int_equal(yt_map_get(yt_map_get(r, "d"), "q")->v.i, 2);
    assert_int_equal(yt_map_get(yt_map_get(r, "e"), "q")->v.i, 2);
    yt_free(r);
}

static void test_yamltree_edit_helpers(void **state)
{
    yt_node_t *r = parse_ok("a: 1\nb: [x]\n");
    yt_node_t *c = yt_copy(r);
    assert_int_equal(yt_count(c), 4);
    assert_true(yt_map_del(c, "a"));
    assert_false(yt_map_del(c, "a"));
    assert_int_equal(c->n, 1);
    assert_int_equal(yt_map_put(c, "n", 0, 0, yt_new(YT_NULL, 0, 0)), 0);
    assert_int_equal(yt_map_get(c, "n")->type, YT_NULL);
    yt_replace(yt_map_get(c, "b"), yt_scalar("7", 1, false, 9, 9));
    assert_int_equal(yt_map_get(c, "b")->v.i, 7);
    assert_ptr_equal(yt_map_get(c, "b")->parent, c);
    assert_int_equal(yt_map_get(r, "b")->type, YT_SEQ); /* original untouched */

    char buf[64];
    yt_describe(yt_map_get(r, "b"), buf, sizeof(buf));
    assert_string_equal(buf, "a list");
    yt_describe(r, buf, sizeof(buf));
    assert_string_equal(buf, "a mapping");
    yt_describe(yt_map_get(c, "n"), buf, sizeof(buf));
    assert_string_equal(buf, "null");
    yt_node_t *s = yt_scalar("0123456789012345678901234567890123456789xyz", 43, true, 1, 1);
    yt_describe(s, buf, sizeof(buf));
    assert_string_equal(buf, "'0123456789012345678901234567890123456789...'");
    yt_free(s);
    yt_free(c);
    yt_free(r);
}

/* ---- errors ---- */

static void test_yamltree_syntax_errors(void **state)
{
    expect_error("global_profiler:\n  steps: [1]\n tool: npu\n", PROFD_ECONFIG,
                 "t.yaml:3:2: YAML syntax error: did not find expected key");
    expect_error("a: [1, 2\nb: 3\n", PROFD_ECONFIG,
                 "t.yaml:2:2: YAML syntax error: did not find expected ',' or ']'");
    expect_error("a: 'open\n", PROFD_ECONFIG,
                 "t.yaml:2:1: YAML syntax error: found unexpected end of stream");
    expect_error("a:\tb: c\n", PROFD_ECONFIG,
                 "t.yaml:1:5: YAML syntax error: mapping values are not allowed in this context");
    expect_error("a: 1\n---\nb: 2\n", PROFD_ECONFIG, "t.yaml:2:1: more than one YAML document");
}

static void test_yamltree_structure_errors(void **state)
{
    expect_error("a: 1\nb: 2\na: 3\n", PROFD_ECONFIG, "t.yaml:3:1: duplicate key 'a'");
    expect_error("? [a]\n: 1\n", PROFD_ECONFIG,
                 "t.yaml:1:3: complex mapping keys are not supported");
    expect_error("x: *nope\n", PROFD_ECONFIG, "t.yaml:1:4: unknown alias '*nope'");
    expect_error("x: &a [1, *a]\n", PROFD_ECONFIG, "t.yaml:1:11: recursive alias '*a'");
    expect_error("x:\n  <<: 5\n", PROFD_ECONFIG,
                 "t.yaml:2:7: merge key '<<' needs a mapping or a list of mappings");
    expect_error("\"\": 1\n", PROFD_ECONFIG, "t.yaml:1:1: empty mapping key");
}

static void test_yamltree_limits(void **state)
{
    /* nesting */
    char deep[200];
    memset(deep, '[', 65);
    memset(deep + 65, ']', 65);
    deep[130] = '\0';
    expect_error(deep, PROFD_ECONFIG, "t.yaml:1:65: nesting deeper than 64 levels");
    deep[64 + 64] = '\0';
    memset(deep, '[', 64);
    memset(deep + 64, ']', 64);
    yt_node_t *r = parse_ok(deep);
    yt_free(r);

    /* billion laughs: aliases are copies and count against the node limit */
    char laughs[2048];
    size_t off = (size_t)snprintf(laughs, sizeof(laughs), "a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for (char c = 'b'; c <= 'g'; c++) {
        off +=
            (size_t)snprintf(laughs + off, sizeof(laughs) - off,
                             "%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n", c, c,
                             c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1);
    }
    expect_error(laughs, PROFD_ECONFIG,
                 "t.yaml:5:32: more than 100000 nodes (aliases count as copies)");

    /* alias depth counts where the copy lands */
    char nest[400];
    off = (size_t)snprintf(nest, sizeof(nest), "a: &a ");
    memset(nest + off, '[', 40);
    memset(nest + off + 40, ']', 40);
    off += 80;
    off += (size_t)snprintf(nest + off, sizeof(nest) - off,
                            "\nb: [[[[[[[[[[[[[[[[[[[[[[[[*a]]]]]]]]]]]]]]]]]]]]]]]]\n");
    expect_error(nest, PROFD_ECONFIG, "t.yaml:2:28: nesting deeper than 64 levels");

    /* input size */
    size_t big = YT_MAX_INPUT + 1;
    char *text = malloc(big);
    memset(text, ' ', big);
    yt_node_t *out = NULL;
    char err[256];
    assert_int_equal(yt_parse("t.yaml", text, big, &out, err, sizeof(err)), PROFD_ECONFIG);
    assert_string_equal(err,
                        "t.yaml: YAML text of 4194305 bytes exceeds the limit of 4194304 bytes");
    assert_null(out);
    free(text);
}

static void test_yamltree_invalid_utf8(void **state)
{
    expect_error("a: \xff\xfe\n", PROFD_ECONFIG,
                 "t.yaml:1:4: YAML syntax error: invalid leading UTF-8 octet");
}

/* A map of many keys: lookups through its index agree with the pairs
 * after puts, replacements, deletions and a node replaced (issue 28). */
static void test_yamltree_many_keys(void **state)
{
    (void)state;
    char key[32];
    yt_node_t *m = yt_new(YT_MAP, 1, 1);
    assert_non_null(m);
    for (int i = 0; i < 3000; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        assert_int_equal(yt_map_put(m, key, i + 1, 1, yt_scalar(key, strlen(key), true, 0, 0)), 0);
        if (i % 500 == 0) { /* looked up while it grows */
            assert_non_null(yt_map_get(m, "k0"));
        }
    }
    assert_int_equal(m->n, 3000);
    assert_int_equal(yt_map_put(m, "k7", 9, 9, yt_scalar("seven", 5, true, 0, 0)), 0);
    assert_int_equal(m->n, 3000); /* replaced, not added */
    assert_string_equal(yt_map_get(m, "k7")->text, "seven");
    for (int i = 0; i < 3000; i += 2) {
        snprintf(key, sizeof(key), "k%d", i);
        assert_true(yt_map_del(m, key));
    }
    assert_int_equal(m->n, 1500);
    for (int i = 0; i < 3000; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        yt_pair_t *p = yt_map_pair(m, key);
        if (i % 2 == 0) {
            assert_null(p);
        } else {
            assert_non_null(p);
            assert_string_equal(p->key, key);
            assert_string_equal(p->value->text, i == 7 ? "seven" : key);
        }
    }
    assert_null(yt_map_get(m, "k3000"));
    yt_node_t *other = yt_new(YT_MAP, 1, 1);
    for (int i = 0; i < 100; i++) {
        snprintf(key, sizeof(key), "o%d", i);
        assert_int_equal(yt_map_put(other, key, 1, 1, yt_new(YT_NULL, 0, 0)), 0);
    }
    assert_non_null(yt_map_get(other, "o99"));
    yt_replace(m, other); /* the index moves with its pairs */
    assert_int_equal(m->n, 100);
    assert_non_null(yt_map_get(m, "o42"));
    assert_null(yt_map_get(m, "k1"));
    yt_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_yamltree_plain_typing),
        cmocka_unit_test(test_yamltree_special_floats),
        cmocka_unit_test(test_yamltree_quoted_and_block_scalars_are_strings),
        cmocka_unit_test(test_yamltree_std_tags),
        cmocka_unit_test(test_yamltree_positions),
        cmocka_unit_test(test_yamltree_empty_documents),
        cmocka_unit_test(test_yamltree_anchors_and_merge),
        cmocka_unit_test(test_yamltree_anchor_on_freed_nodes),
        cmocka_unit_test(test_yamltree_edit_helpers),
        cmocka_unit_test(test_yamltree_syntax_errors),
        cmocka_unit_test(test_yamltree_structure_errors),
        cmocka_unit_test(test_yamltree_limits),
        cmocka_unit_test(test_yamltree_invalid_utf8),
        cmocka_unit_test(test_yamltree_many_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
