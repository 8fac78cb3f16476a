// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* OmegaConf interpolation and Hydra override semantics, value by value. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hydra.h"
#include "omegaconf.h"
#include "profd/errors.h"

typedef struct fx {
    yt_node_t *root;
    oc_t oc;
    char err[512];
} fx_t;

static void fx_load(fx_t *f, const char *text, const char *const *ov, size_t n)
{
    memset(f, 0, sizeof(*f));
    assert_int_equal(yt_parse("c.yaml", text, strlen(text), &f->root, f->err, sizeof(f->err)), 0);
    int rc = hy_apply_overrides("c.yaml", &f->root, (char *const *)ov, n, f->err, sizeof(f->err));
    if (rc != 0) {
        print_error("%s\n", f->err);
    }
    assert_int_equal(rc, 0);
    oc_init(&f->oc, "c.yaml", f->root, f->err, sizeof(f->err));
}

/* The resolved value at `path`. */
static yt_node_t *get(fx_t *f, const char *path)
{
    yt_node_t *raw, *v;
    assert_int_equal(oc_lookup(&f->oc, NULL, path, &raw), 0);
    assert_non_null(raw);
    int rc = oc_resolve(&f->oc, raw, &v);
    if (rc != 0) {
        print_error("%s\n", f->err);
    }
    assert_int_equal(rc, 0);
    return v;
}

static void expect_resolve_error(const char *text, const char *path, const char *msg)
{
    fx_t f;
    yt_node_t *raw, *v = NULL;
    fx_load(&f, text, NULL, 0);
    int rc = oc_lookup(&f.oc, NULL, path, &raw);
    if (rc == 0) {
        assert_non_null(raw);
        rc = oc_resolve(&f.oc, raw, &v);
    }
    assert_int_equal(rc, PROFD_ECONFIG);
    assert_string_equal(f.err, msg);
    yt_free(f.root);
}

static void expect_override_error(const char *text, const char *ov, const char *msg)
{
    yt_node_t *root;
    char err[512] = "";
    char *o[] = {(char *)ov};
    assert_int_equal(yt_parse("c.yaml", text, strlen(text), &root, err, sizeof(err)), 0);
    assert_int_equal(hy_apply_overrides("c.yaml", &root, o, 1, err, sizeof(err)), PROFD_ECONFIG);
    assert_string_equal(err, msg);
    yt_free(root);
}

static void test_omegaconf_node_interpolation_keeps_type(void **state)
{
    fx_t f;
    fx_load(&f,
            "a: 1\nt: true\nl: [1, 'x']\nm: {x: 5}\n"
            "i: ${a}\nb: ${t}\nc: ${l}\nd: ${m}\ne: \"${a}\"\nsp: ${ a }\nn: ${m.x}\n"
            "idx: ${l[1]}\nidx2: ${l.0}\nchain: ${i}\n",
            NULL, 0);
    assert_int_equal(get(&f, "i")->type, YT_INT);
    assert_int_equal(get(&f, "i")->v.i, 1);
    assert_int_equal(get(&f, "b")->type, YT_BOOL);
    assert_int_equal(get(&f, "c")->type, YT_SEQ);
    assert_ptr_equal(get(&f, "c"), yt_map_get(f.root, "l")); /* the node itself */
    assert_int_equal(get(&f, "d")->type, YT_MAP);
    assert_int_equal(get(&f, "e")->v.i, 1); /* YAML quotes do not stop OmegaConf */
    assert_int_equal(get(&f, "sp")->v.i, 1);
    assert_int_equal(get(&f, "n")->v.i, 5);
    assert_string_equal(get(&f, "idx")->text, "x");
    assert_int_equal(get(&f, "idx2")->v.i, 1);
    assert_int_equal(get(&f, "chain")->v.i, 1);
    /* through an interpolated mapping */
    yt_node_t *raw;
    assert_int_equal(oc_lookup(&f.oc, NULL, "d.x", &raw), 0);
    assert_ptr_equal(raw, yt_map_get(yt_map_get(f.root, "m"), "x"));
    yt_free(f.root);
}

static void test_omegaconf_string_concatenation(void **state)
{
    fx_t f;
    fx_load(&f,
            "a: 1\nt: true\nz: null\nh: 0.5\ntiny: 1.0e-5\nbig: 100000.0\nhuge: 1.0e16\n"
            "l: [1, 'a', null]\nm: {k: v}\n"
            "s1: x${a}y\ns2: v=${t}\ns3: ${z}!\ns4: ${h}/${tiny}/${big}/${huge}\n"
            "s5: ${l}\n"
            "s6: \"${m} \"\ns7: ' ${a}'\nesc: \\${a}\nesc2: \\\\${a}\nkeep: a\\b\n",
            NULL, 0);
    assert_string_equal(get(&f, "s1")->text, "x1y");
    assert_string_equal(get(&f, "s2")->text, "v=True");
    assert_string_equal(get(&f, "s3")->text, "None!");
    assert_string_equal(get(&f, "s4")->text, "0.5/1e-05/100000.0/1e+16");
    assert_int_equal(get(&f, "s5")->type, YT_SEQ);
    assert_string_equal(get(&f, "s6")->text, "{'k': 'v'} ");
    assert_string_equal(get(&f, "s7")->text, " 1");
    assert_string_equal(get(&f, "esc")->text, "${a}");
    assert_string_equal(get(&f, "esc2")->text, "\\1");
    assert_string_equal(get(&f, "keep")->text, "a\\b");
    assert_true(get(&f, "s1")->flags & YT_F_FINAL);
    /* a computed value names the key it came from */
    char path[64];
    yt_path(get(&f, "s1"), path, sizeof(path));
    assert_string_equal(path, "s1");
    yt_free(f.root);
}

static void test_omegaconf_relative_and_nested(void **state)
{
    fx_t f;
    fx_load(&f,
            "sec:\n  a: 1\n  b: ${.a}\n  sub:\n    c: ${..a}\n    d: ${oc.select:..a,9}\n"
            "name: a\nv: ${sec.${name}}\n",
            NULL, 0);
    assert_int_equal(get(&f, "sec.b")->v.i, 1);
    assert_int_equal(get(&f, "sec.sub.c")->v.i, 1);
    assert_int_equal(get(&f, "sec.sub.d")->v.i, 1);
    assert_int_equal(get(&f, "v")->v.i, 1);
    yt_free(f.root);
}

static void test_omegaconf_select(void **state)
{
    fx_t f;
    fx_load(&f,
            "present: 3\nnothing: null\nmissing: ???\n"
            "a: ${oc.select:present,7}\n"
            "b: ${oc.select:absent,7}\n"
            "c: ${oc.select:absent}\n"
            "d: ${oc.select:nothing,7}\n"
            "e: ${oc.select:absent,[]}\n"
            "f: ${oc.select:absent,null}\n"
            "g: ${oc.select:absent,${oc.select:also.absent,level0}}\n"
            "h: ${oc.select:absent,False}\n"
            "i: ${oc.select:absent,'a,b'}\n"
            "j: ${oc.select:absent,{}}\n"
            "k: ${oc.select:missing,5}\n"
            "l: ${oc.select:absent,[1, x, ${present}]}\n"
            "m: ${oc.select:present.deeper,4}\n"
            "n: \"${oc.select: absent , 100_000 }\"\n"
            "o: ${oc.select:absent,1.5}\n",
            NULL, 0);
    assert_int_equal(get(&f, "a")->v.i, 3);
    assert_int_equal(get(&f, "b")->v.i, 7);
    assert_int_equal(get(&f, "c")->type, YT_NULL);
    assert_int_equal(get(&f, "d")->type, YT_NULL); /* present, null: no default */
    assert_int_equal(get(&f, "e")->type, YT_SEQ);
    assert_int_equal(get(&f, "e")->n, 0);
    assert_int_equal(get(&f, "f")->type, YT_NULL);
    assert_string_equal(get(&f, "g")->text, "level0");
    assert_int_equal(get(&f, "h")->type, YT_BOOL);
    assert_false(get(&f, "h")->v.b);
    assert_string_equal(get(&f, "i")->text, "a,b");
    assert_int_equal(get(&f, "j")->type, YT_MAP);
    assert_int_equal(get(&f, "k")->type, YT_NULL); /* ??? selects as null */
    yt_node_t *l = get(&f, "l");
    assert_int_equal(l->n, 3);
    assert_string_equal(l->items[1]->text, "x");
    assert_int_equal(l->items[2]->v.i, 3);
    assert_int_equal(get(&f, "m")->v.i, 4);
    assert_int_equal(get(&f, "n")->v.i, 100000);
    assert_true(get(&f, "o")->v.f == 1.5);
    yt_free(f.root);
}

/* Grammar typing: only true/false are booleans, unlike YAML 1.1. */
static void test_omegaconf_grammar_typing(void **state)
{
    fx_t f;
    fx_load(&f,
            "a: ${oc.select:x,yes}\nb: ${oc.select:x,TRUE}\nc: ${oc.select:x,NULL}\n"
            "d: ${oc.select:x,007}\ne: ${oc.select:x,-3}\nf: ${oc.select:x,inf}\n"
            "g: ${oc.select:x,1 2}\nh: ${oc.select:x,a\\,b}\n",
            NULL, 0);
    assert_int_equal(get(&f, "a")->type, YT_STR);
    assert_int_equal(get(&f, "b")->type, YT_BOOL);
    assert_int_equal(get(&f, "c")->type, YT_NULL);
    assert_int_equal(get(&f, "d")->type, YT_STR);
    assert_int_equal(get(&f, "e")->v.i, -3);
    assert_int_equal(get(&f, "f")->type, YT_FLOAT);
    assert_string_equal(get(&f, "g")->text, "1 2");
    assert_string_equal(get(&f, "h")->text, "a,b");
    yt_free(f.root);
}

static void test_omegaconf_resolution_errors(void **state)
{
    expect_resolve_error("a: ${b.c}\n", "a",
                         "c.yaml:1:4: key 'a': interpolation '${b.c}': key 'b.c' not found");
    expect_resolve_error("x:\n  a: ${b\n", "x.a",
                         "c.yaml:2:6: key 'x.a': malformed interpolation '${b': missing '}'");
    expect_resolve_error("a: ${b}\nb: ${a}\n", "a",
                         "c.yaml:1:4: key 'a': circular interpolation '${b}'");
    expect_resolve_error("a: ${a}\n", "a", "c.yaml:1:4: key 'a': circular interpolation '${a}'");
    /* OmegaConf: InterpolationToMissingValueError, "Missing mandatory value: m" */
    expect_resolve_error("m: ???\na: ${m}\n", "a",
                         "c.yaml:2:4: key 'a': interpolation '${m}': Missing mandatory value: m");
    expect_resolve_error(
        "a: ${now:%Y}\n", "a",
        "c.yaml:1:4: key 'a': interpolation '${now:%Y}': unsupported resolver 'now'");
    /* without an environment hook (the daemon): refused */
    expect_resolve_error("a: ${oc.env:HOME,/tmp}\n", "a",
                         "c.yaml:1:4: key 'a': interpolation '${oc.env:HOME,/tmp}': oc.env is not "
                         "read here (the daemon's environment is not the job's): profctl apply "
                         "resolves it from the caller's environment");
    expect_resolve_error("a: ${oc.select:x,[1,2}\n", "a",
                         "c.yaml:1:4: key 'a': malformed interpolation '${oc.select:x,[1,2}': "
                         "expected ',' or ']' at offset 18");
    expect_resolve_error("a: ${oc.select:}\n", "a",
                         "c.yaml:1:4: key 'a': interpolation '${oc.select:}': oc.select takes a "
                         "key and an optional default");
    expect_resolve_error("a: ${b c}\n", "a",
                         "c.yaml:1:4: key 'a': malformed interpolation '${b c}': unexpected space "
                         "in a key");
    expect_resolve_error("a: ${.x}\n", "a",
                         "c.yaml:1:4: key 'a': interpolation '${.x}': key '.x' not found");
    expect_resolve_error("a: ${...x}\n", "a",
                         "c.yaml:1:4: key 'a': interpolation '${...x}': relative key goes above "
                         "the root");
    /* the error names the string that fails, wherever the chain started */
    expect_resolve_error("a: ${b}\nb: ${c}\n", "a",
                         "c.yaml:2:4: key 'b': interpolation '${c}': key 'c' not found");
}

static void test_omegaconf_limits(void **state)
{
    /* a chain longer than the resolver's depth */
    char text[4096];
    size_t off = 0;
    for (int i = 0; i < 40; i++) {
        off += (size_t)snprintf(text + off, sizeof(text) - off, "a%d: ${a%d}\n", i, i + 1);
    }
    snprintf(text + off, sizeof(text) - off, "a40: 1\n");
    expect_resolve_error(text, "a0",
                         "c.yaml:33:6: key 'a32': interpolation '${a33}': interpolations and "
                         "brackets nested deeper than 64 levels");

    /* a concatenation too long */
    char *big = malloc(50000 + 64);
    off = (size_t)snprintf(big, 64, "a: ");
    memset(big + off, 'x', 40000);
    off += 40000;
    snprintf(big + off, 64, "\nb: ${a}${a}\n");
    expect_resolve_error(big, "b",
                         "c.yaml:2:4: key 'b': interpolation '${a}${a}': string longer than 65536 "
                         "bytes");
    free(big);
}

static void test_omegaconf_override_values(void **state)
{
    const char *ov[] = {
        "i=2",
        "s='2'",
        "q=\"x y\"",
        "l=[1, 'npu', cpu]",
        "n=null",
        "b=True",
        "y=yes",
        "u=1_000",
        "fl=1e3",
        "e=",
        "r=${i}",
        "lr=[${i}, 3]",
        "+new.deep=x",
        "++i2=5",
        "++s=z",
        "ws= a b ",
        "esc=a\\,b",
        "li.1=9",
        "m={x: 1, k: [2]}",
        "p=/a/b-c.d",
    };
    fx_t f;
    fx_load(&f,
            "i: 1\ns: 1\nq: 1\nl: 1\nn: 1\nb: 1\ny: 1\nu: 1\nfl: 1\ne: 1\nr: 1\nlr: 1\n"
            "ws: 1\nesc: 1\nli: [1, 2]\nm: {x: 0, y: 0}\np: 1\n",
            ov, sizeof(ov) / sizeof(ov[0]));
    assert_int_equal(get(&f, "i")->v.i, 2);
    assert_int_equal(get(&f, "s")->type, YT_STR);
    assert_string_equal(get(&f, "s")->text, "z");
    assert_string_equal(get(&f, "q")->text, "x y");
    yt_node_t *l = get(&f, "l");
    assert_int_equal(l->n, 3);
    assert_int_equal(l->items[0]->v.i, 1);
    assert_string_equal(l->items[1]->text, "npu");
    assert_string_equal(l->items[2]->text, "cpu");
    assert_int_equal(get(&f, "n")->type, YT_NULL);
    assert_int_equal(get(&f, "b")->type, YT_BOOL);
    assert_int_equal(get(&f, "y")->type, YT_STR); /* Hydra: yes is a string */
    assert_int_equal(get(&f, "u")->v.i, 1000);
    assert_true(get(&f, "fl")->v.f == 1000.0);
    assert_string_equal(get(&f, "e")->text, "");
    assert_int_equal(get(&f, "r")->v.i, 2); /* resolved after all overrides */
    yt_node_t *item;
    assert_int_equal(oc_resolve(&f.oc, get(&f, "lr")->items[0], &item), 0);
    assert_int_equal(item->v.i, 2); /* list items resolve lazily too */
    assert_string_equal(get(&f, "new.deep")->text, "x");
    assert_int_equal(get(&f, "i2")->v.i, 5);
    assert_string_equal(get(&f, "ws")->text, "a b");
    assert_string_equal(get(&f, "esc")->text, "a,b");
    assert_int_equal(get(&f, "li")->items[1]->v.i, 9);
    assert_int_equal(get(&f, "m.x")->v.i, 1); /* mappings merge */
    assert_int_equal(get(&f, "m.y")->v.i, 0);
    assert_int_equal(get(&f, "m.k")->n, 1);
    assert_string_equal(get(&f, "p")->text, "/a/b-c.d");

    char where[128];
    oc_where("c.yaml", get(&f, "i"), where, sizeof(where));
    assert_string_equal(where, "override 'i=2'");
    oc_where("c.yaml", get(&f, "m.y"), where, sizeof(where));
    assert_string_equal(where, "c.yaml:16:14");
    yt_free(f.root);
}

static void test_omegaconf_override_delete(void **state)
{
    const char *ov[] = {"~a", "~b=2", "~c.d"};
    fx_t f;
    fx_load(&f, "a: 1\nb: 2\nc: {d: 1, e: 2}\n", ov, 3);
    assert_null(yt_map_get(f.root, "a"));
    assert_null(yt_map_get(f.root, "b"));
    assert_null(yt_map_get(yt_map_get(f.root, "c"), "d"));
    assert_non_null(yt_map_get(yt_map_get(f.root, "c"), "e"));
    yt_free(f.root);

    /* an empty config accepts additions */
    const char *add[] = {"+global_profiler.steps=[2]"};
    fx_load(&f, "", add, 1);
    assert_int_equal(get(&f, "global_profiler.steps")->items[0]->v.i, 2);
    yt_free(f.root);
}

/* Hydra 1.3.2 hydra/_internal/config_loader_impl.py:_apply_overrides_to_config
 * (lines 335-399) on a composed, struct config; profd's own messages only
 * for what Hydra's grammar refuses. */
#define CFG "a: 1\nsec: {x: 1}\nl: [1]\nz: null\n"
static void test_omegaconf_override_errors(void **state)
{
    static const struct {
        const char *ov, *msg; /* the message after "override 'OV': " */
    } cases[] = {
        {"abc", "expected KEY=VALUE"},
        {"=1", "missing key"},
        /* key=value on a missing key or parent: ConfigAttributeError / ConfigKeyError */
        {"b=1", "Could not override 'b'. To append to your config use +b=1"},
        {"sec.y=1", "Could not override 'sec.y'. To append to your config use +sec.y=1"},
        {"nope.y=1", "Could not override 'nope.y'. To append to your config use +nope.y=1"},
        /* OmegaConf.update replaces the scalar a by {} and then cannot add b (struct) */
        {"a.b=2", "Could not override 'a.b'. To append to your config use +a.b=2"},
        /* +key on a non-null value with a scalar: "Could not append to config" */
        {"+a=2", "Could not append to config. An item is already at 'a'. Either remove + prefix: "
                 "'a=2' Or add a second + to add or override 'a': '++a=2'"},
        /* ~key: OmegaConf.select gives None for a missing key and for null */
        {"~b", "Could not delete from config. 'b' does not exist."},
        {"~z", "Could not delete from config. 'z' does not exist."},
        {"~a=2", "Could not delete from config. The value of 'a' is 1 and not 2."},
        /* ListConfig index out of range: not a key error, "Error merging override" */
        {"l.3=1", "Error merging override l.3=1"},
        /* a group override needs the config's folder: only profctl composes */
        {"+g/x=1", "config group overrides need the config's folder: profctl apply composes them"},
        {"a@pkg=1", "config group overrides need the config's folder: profctl apply composes them"},
        {"a=[1,", "missing ']'"},
        {"a='x", "missing closing '"},
        /* sweeps without --multirun: config_loader_impl.py:64-83 */
        {"a=1,2",
         "Ambiguous value for argument 'a=1,2': 1. To use it as a list, use key=[value1,value2] 2. "
         "To use it as string, quote the value: key=\\'value1,value2\\' 3. To sweep over it, add "
         "--multirun to your command line"},
        {"a=choice(1,2)", "Sweep parameters 'a=choice(1,2)' requires --multirun"},
        {"a..b=1", "malformed key 'a..b'"},
        {"a=x]", "unexpected ']' at offset 1"},
        {"a={x 1}", "expected 'key: value' in '{...}'"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char msg[512];
        snprintf(msg, sizeof(msg), "override '%s': %s", cases[i].ov, cases[i].msg);
        expect_override_error(CFG, cases[i].ov, msg);
    }
    expect_override_error("- 1\n", "+a=1", "override '+a=1': the configuration is not a mapping");
}

/* +key=value is accepted where Hydra's OmegaConf.select(cfg, key,
 * throw_on_missing=False) is None -- absent, null, ???, an interpolation
 * resolving to null -- or when the value is a list or a mapping
 * (config_loader_impl.py lines 370-385). */
static void test_omegaconf_override_plus_rule(void **state)
{
    const char *ov[] = {"+n=1", "+m=2", "+i=3", "+l=[7]", "+d={k: 9}", "+new.deep=4"};
    fx_t f;
    fx_load(&f, "n: null\nm: ???\ni: ${oc.select:nothing,null}\nl: [1, 2]\nd: {j: 1}\n", ov, 6);
    assert_int_equal(get(&f, "n")->v.i, 1);
    assert_int_equal(get(&f, "m")->v.i, 2);
    assert_int_equal(get(&f, "i")->v.i, 3);
    assert_int_equal(get(&f, "l")->n, 1); /* a list replaces the list */
    assert_int_equal(get(&f, "l")->items[0]->v.i, 7);
    assert_int_equal(get(&f, "d.k")->v.i, 9); /* a mapping merges */
    assert_int_equal(get(&f, "d.j")->v.i, 1);
    assert_int_equal(get(&f, "new.deep")->v.i, 4);
    yt_free(f.root);

    /* an interpolation resolving to a value is an item already there */
    expect_override_error("a: 1\nb: ${a}\n", "+b=2",
                          "override '+b=2': Could not append to config. An item is already at "
                          "'b'. Either remove + prefix: 'b=2' Or add a second + to add or override "
                          "'b': '++b=2'");
    /* ++ always sets or adds. OmegaConf.update walks raw nodes: a parent
     * that is an interpolation is replaced by an empty mapping, so the
     * interpolated keys are gone and, without force_add, the key is missing */
    const char *ov2[] = {"++a=5", "++c=6", "++s.k=1"};
    fx_load(&f, "a: 1\nt: {k: 0, j: 2}\ns: ${t}\n", ov2, 3);
    assert_int_equal(get(&f, "a")->v.i, 5);
    assert_int_equal(get(&f, "c")->v.i, 6);
    assert_int_equal(get(&f, "s.k")->v.i, 1);
    assert_int_equal(get(&f, "s")->n, 1);
    yt_free(f.root);
    expect_override_error("t: {k: 0}\ns: ${t}\n", "s.k=1",
                          "override 's.k=1': Could not override 's.k'. To append to your config "
                          "use +s.k=1");
}

static const char *env_table(void *ctx, const char *name)
{
    (void)ctx;
    return strcmp(name, "PROFD_T_TOOL") == 0 ? "torch" : NULL;
}

/* ${oc.env:VAR[,DEFAULT]} with the caller's environment (OmegaConf 2.3
 * resolvers/oc/__init__.py:env): a string; the default through str(), null
 * kept; unset without a default is an error. */
/* ${oc.decode:STR}: STR parsed by the grammar's singleElement rule in
 * VALUE_MODE and evaluated (OmegaConf 2.3.0 omegaconf/resolvers/oc/
 * __init__.py:41-58); null is null; blanks around a primitive keep it a
 * string as written; what is not one element is a GrammarParseError. */
static void test_omegaconf_decode(void **state)
{
    (void)state;
    fx_t f;
    fx_load(&f,
            "x: e2\nl: ${oc.decode:'[1, ${x}]'}\nm: \"${oc.decode:'{a: 1}'}\"\n"
            "i: ${oc.decode:\"123\"}\nn: ${oc.decode:null}\nb: ${oc.decode:' 1 '}\n"
            "s: ${oc.decode:'1 2'}\n",
            NULL, 0);
    yt_node_t *l = get(&f, "l");
    assert_int_equal(l->type, YT_SEQ);
    assert_int_equal(l->items[0]->v.i, 1);
    assert_string_equal(l->items[1]->text, "e2");
    assert_int_equal(get(&f, "m.a")->v.i, 1);
    assert_int_equal(get(&f, "i")->type, YT_INT);
    assert_int_equal(get(&f, "i")->v.i, 123);
    assert_int_equal(get(&f, "n")->type, YT_NULL);
    assert_string_equal(get(&f, "b")->text, " 1 ");
    assert_string_equal(get(&f, "s")->text, "1 2");
    yt_free(f.root);
    expect_resolve_error("a: ${oc.decode:' [1] '}\n", "a",
                         "c.yaml:1:4: key 'a': interpolation '${oc.decode:' [1] '}': oc.decode: "
                         "GrammarParseError: mismatched input '[' expecting <EOF>");
    expect_resolve_error("a: ${oc.decode:1}\n", "a",
                         "c.yaml:1:4: key 'a': interpolation '${oc.decode:1}': TypeError: "
                         "`oc.decode` can only take strings or None as input, but `1` is of type "
                         "int");
}

static void test_omegaconf_env(void **state)
{
    fx_t f;
    fx_load(&f,
            "t: ${oc.env:PROFD_T_TOOL}\nd: ${oc.env:PROFD_T_UNSET,/tmp/p}\n"
            "n: ${oc.env:PROFD_T_UNSET,null}\ni: ${oc.env:PROFD_T_UNSET,3}\n"
            "l: ${oc.env:PROFD_T_UNSET,[1,2]}\ns: x-${oc.env:PROFD_T_TOOL}\nu: "
            "${oc.env:PROFD_T_UNSET}\n",
            NULL, 0);
    f.oc.env = env_table;
    assert_string_equal(get(&f, "t")->text, "torch");
    assert_string_equal(get(&f, "d")->text, "/tmp/p");
    assert_int_equal(get(&f, "n")->type, YT_NULL);
    assert_int_equal(get(&f, "i")->type, YT_STR);
    assert_string_equal(get(&f, "i")->text, "3");
    assert_string_equal(get(&f, "l")->text, "[1, 2]");
    assert_string_equal(get(&f, "s")->text, "x-torch");
    yt_node_t *raw, *v;
    assert_int_equal(oc_lookup(&f.oc, NULL, "u", &raw), 0);
    assert_int_equal(oc_resolve(&f.oc, raw, &v), PROFD_ECONFIG);
    assert_string_equal(f.err, "c.yaml:7:4: key 'u': interpolation '${oc.env:PROFD_T_UNSET}': "
                               "Environment variable 'PROFD_T_UNSET' not found");
    yt_free(f.root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_omegaconf_node_interpolation_keeps_type),
        cmocka_unit_test(test_omegaconf_string_concatenation),
        cmocka_unit_test(test_omegaconf_relative_and_nested),
        cmocka_unit_test(test_omegaconf_select),
        cmocka_unit_test(test_omegaconf_grammar_typing),
        cmocka_unit_test(test_omegaconf_resolution_errors),
        cmocka_unit_test(test_omegaconf_limits),
        cmocka_unit_test(test_omegaconf_override_values),
        cmocka_unit_test(test_omegaconf_override_delete),
        cmocka_unit_test(test_omegaconf_override_errors),
        cmocka_unit_test(test_omegaconf_override_plus_rule),
        cmocka_unit_test(test_omegaconf_env),
        cmocka_unit_test(test_omegaconf_decode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
