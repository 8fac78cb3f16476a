// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Hydra composition (compose.h) over table loaders, no file system. Each
 * expectation is what hydra-core 1.3.2 (7ef3acab) composes for the same
 * tree: hydra/_internal/defaults_list.py, hydra/core/default_element.py,
 * hydra/_internal/config_loader_impl.py; the functions are named where a
 * rule comes from.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "compose.h"
#include "omegaconf.h"
#include "profd/errors.h"
#include "table_loader.h"

typedef struct fx {
    hy_config_t c;
    oc_t oc;
    char err[1024];
} fx_t;

/* Compose with a; on success f->oc reads the result. */
static int compose_with(fx_t *f, const hy_compose_args_t *a)
{
    memset(f, 0, sizeof(*f));
    int rc = hy_compose(a, &f->c, f->err, sizeof(f->err));
    if (rc == 0) {
        oc_init(&f->oc, f->c.primary, f->c.root, f->err, sizeof(f->err));
    }
    return rc;
}

static void compose_ok(fx_t *f, const hy_compose_args_t *a)
{
    int rc = compose_with(f, a);
    if (rc != 0) {
        print_error("%s\n", f->err);
    }
    assert_int_equal(rc, 0);
}

static int try_compose(fx_t *f, const tl_file_t *files, const char *const *search, size_t ns,
                       const char *name, const char *const *ov, size_t nov)
{
    hy_loader_t l = tl_loader(files);
    hy_compose_args_t a = {.loader = &l,
                           .search = search,
                           .n_search = ns,
                           .config_name = name,
                           .overrides = (char *const *)ov,
                           .n_overrides = nov};
    return compose_with(f, &a);
}

static void compose(fx_t *f, const tl_file_t *files, const char *name, const char *const *ov,
                    size_t nov)
{
    static const char *const here[] = {"conf"};
    int rc = try_compose(f, files, here, 1, name, ov, nov);
    if (rc != 0) {
        print_error("%s\n", f->err);
    }
    assert_int_equal(rc, 0);
}

static void expect_error(const tl_file_t *files, const char *name, const char *const *ov,
                         size_t nov, const char *msg)
{
    static const char *const here[] = {"conf"};
    fx_t f;
    int rc = try_compose(&f, files, here, 1, name, ov, nov);
    if (rc == 0) {
        hy_config_free(&f.c);
    }
    assert_int_equal(rc, PROFD_ECONFIG);
    if (strcmp(f.err, msg) != 0) {
        print_error(" got  %s\n want %s\n", f.err, msg);
    }
    assert_string_equal(f.err, msg);
}

/* The resolved value at a dotted path; NULL when absent. */
static yt_node_t *get(fx_t *f, const char *path)
{
    yt_node_t *raw, *v = NULL;
    assert_int_equal(oc_lookup(&f->oc, NULL, path, &raw), 0);
    if (raw != NULL) {
        assert_int_equal(oc_resolve(&f->oc, raw, &v), 0);
    }
    return v;
}

static int64_t get_i(fx_t *f, const char *path)
{
    yt_node_t *v = get(f, path);
    if (v == NULL || v->type != YT_INT) {
        print_error("%s: not an int\n", path);
    }
    assert_non_null(v);
    assert_int_equal(v->type, YT_INT);
    return v->v.i;
}

static const char *get_s(fx_t *f, const char *path)
{
    yt_node_t *v = get(f, path);
    assert_non_null(v);
    return v->text;
}

/* _self_ (defaults_list.py:_validate_self): appended last when absent, so
 * the file's own values win over its defaults; written first, the defaults
 * win. Group files alike. */
static void test_compose_self_order(void **state)
{
    static const tl_file_t files[] = {
        {"conf/last.yaml", "defaults:\n  - db: a\nx: 1\ndb: {port: 1}\n"},
        {"conf/first.yaml", "defaults:\n  - _self_\n  - db: a\nx: 1\ndb: {port: 1}\n"},
        {"conf/db/a.yaml", "port: 2\nhost: h\n"},
        {NULL, NULL}};
    fx_t f;
    compose(&f, files, "last", NULL, 0);
    assert_int_equal(get_i(&f, "db.port"), 1);
    assert_string_equal(get_s(&f, "db.host"), "h");
    assert_int_equal(f.c.n_warnings, 1); /* "Defaults list is missing `_self_`" */
    assert_non_null(strstr(f.c.warnings[0], "Defaults list is missing `_self_`"));
    hy_config_free(&f.c);
    compose(&f, files, "first.yaml", NULL, 0);
    assert_int_equal(get_i(&f, "db.port"), 2);
    assert_int_equal(f.c.n_warnings, 0);
    hy_config_free(&f.c);
}

/* Packages (default_element.py:_get_final_package): group path by default,
 * @pkg relative to the parent's package, `# @package` absolute, _global_
 * resets to the root, @_here_ is the parent's own package; `..` leaves the
 * group folder; `/group` is absolute. */
static void test_compose_packages(void **state)
{
    static const tl_file_t files[] = {
        {"conf/p.yaml", "defaults:\n  - role@a.b: actor\n  - model: m\n  - _self_\n"},
        {"conf/role/actor.yaml",
         "defaults:\n  - ../optim@optim: adam\n  - /common@_here_: c\n  - /model@inner: m\n"
         "  - _self_\nkind: actor\n"},
        {"conf/optim/adam.yaml", "lr: 3\n"},
        {"conf/common/c.yaml", "shared: true\n"},
        {"conf/model/m.yaml", "# @package top.level\nsize: 7\n"},
        {NULL, NULL}};
    fx_t f;
    compose(&f, files, "p", NULL, 0);
    assert_string_equal(get_s(&f, "a.b.kind"), "actor");
    assert_int_equal(get_i(&f, "a.b.optim.lr"), 3);
    assert_true(get(&f, "a.b.shared")->v.b);
    /* a header is absolute and wins over the default package, not over @pkg */
    assert_int_equal(get_i(&f, "top.level.size"), 7);
    assert_int_equal(get_i(&f, "a.b.inner.size"), 7);
    assert_null(get(&f, "model"));
    hy_config_free(&f.c);
}

/* A group file with `# @package _global_` lands at the root (verl's
 * model_engine/dp.yaml); a nested default inside it is its group folder's
 * (tool/npu_level), with its package. */
static void test_compose_global_and_nested(void **state)
{
    static const tl_file_t files[] = {
        {"conf/p.yaml", "defaults:\n  - tool: npu\n  - _self_\nname: p\n"},
        {"conf/tool/npu.yaml",
         "# @package _global_\ndefaults:\n  - lvl@x.npu: one\n  - _self_\ntool: npu\n"},
        {"conf/tool/lvl/one.yaml", "level: 1\n"},
        {"conf/tool/lvl/two.yaml", "level: 2\n"},
        {NULL, NULL}};
    fx_t f;
    compose(&f, files, "p", NULL, 0);
    assert_string_equal(get_s(&f, "tool"), "npu");
    assert_int_equal(get_i(&f, "x.npu.level"), 1);
    hy_config_free(&f.c);
    /* the nested element's override key is its full group path @ package */
    static const char *const ov[] = {"tool/lvl@x.npu=two"};
    compose(&f, files, "p", ov, 1);
    assert_int_equal(get_i(&f, "x.npu.level"), 2);
    hy_config_free(&f.c);
    /* the relative group alone is no group of the search path
     * (config_loader_impl.py:338-343) */
    static const char *const bad[] = {"lvl@x.npu=two"};
    expect_error(files, "p", bad, 1,
                 "override 'lvl@x.npu=two': Override lvl@x.npu=two looks like a config group "
                 "override, but config group 'lvl' does not exist.");
}

/* `override` in a file sets the choice for the whole composition, after
 * its sibling defaults; the command line wins over it (add_override). */
static void test_compose_override(void **state)
{
    static const tl_file_t files[] = {
        {"conf/base.yaml", "defaults:\n  - engine: dp\n  - _self_\n"},
        {"conf/mega.yaml", "defaults:\n  - base\n  - override engine: megatron\n  - _self_\n"},
        {"conf/bad.yaml", "defaults:\n  - override engine: megatron\n  - base\n"},
        {"conf/engine/dp.yaml", "# @package _global_\nengine: dp\n"},
        {"conf/engine/megatron.yaml", "# @package _global_\nengine: megatron\n"},
        {"conf/engine/veomni.yaml", "# @package _global_\nengine: veomni\n"},
        {NULL, NULL}};
    fx_t f;
    compose(&f, files, "mega", NULL, 0);
    assert_string_equal(get_s(&f, "engine"), "megatron");
    hy_config_free(&f.c);
    static const char *const ov[] = {"engine=veomni"};
    compose(&f, files, "mega", ov, 1);
    assert_string_equal(get_s(&f, "engine"), "veomni");
    hy_config_free(&f.c);
    expect_error(files, "bad", NULL, 0,
                 "conf/bad.yaml:3:5: In bad: Override 'engine : megatron' is defined before "
                 "'base: base'. Overrides must be at the end of the defaults list");
}

/* Interpolated choices (`${engine}_actor`) resolve against the known
 * choices once the other items are processed; a command-line choice of
 * the interpolation's source changes them. */
static void test_compose_interpolated_choice(void **state)
{
    static const tl_file_t files[] = {
        {"conf/p.yaml", "defaults:\n  - engine: dp\n  - actor@a: ${engine}_actor\n  - _self_\n"},
        {"conf/engine/dp.yaml", "# @package _global_\nengine: dp\n"},
        {"conf/engine/mg.yaml", "# @package _global_\nengine: mg\n"},
        {"conf/actor/dp_actor.yaml", "impl: fsdp\n"},
        {"conf/actor/mg_actor.yaml", "impl: megatron\n"},
        {"conf/q.yaml", "defaults:\n  - actor@a: ${nothing}_actor\n"},
        {NULL, NULL}};
    fx_t f;
    compose(&f, files, "p", NULL, 0);
    assert_string_equal(get_s(&f, "a.impl"), "fsdp");
    hy_config_free(&f.c);
    static const char *const ov[] = {"engine=mg"};
    compose(&f, files, "p", ov, 1);
    assert_string_equal(get_s(&f, "a.impl"), "megatron");
    hy_config_free(&f.c);
    /* the element's own key replaces the interpolation */
    static const char *const ov2[] = {"actor@a=mg_actor"};
    compose(&f, files, "p", ov2, 1);
    assert_string_equal(get_s(&f, "a.impl"), "megatron");
    assert_string_equal(get_s(&f, "engine"), "dp");
    hy_config_free(&f.c);
    expect_error(files, "q", NULL, 0,
                 "conf/q.yaml:2:5: Error resolving interpolation '${nothing}_actor'");
}

/* optional: a missing option (or group) is skipped; ??? must be chosen;
 * null loads nothing; a missing option lists the group's options
 * (config_not_found_error, _check_not_missing). */
static void test_compose_optional_missing(void **state)
{
    static const tl_file_t files[] = {
        {"conf/p.yaml", "defaults:\n  - optional site: local\n  - optional machine: x\n"
                        "  - db: null\n  - _self_\nv: 1\n"},
        {"conf/site/other.yaml", "where: other\n"},
        {"conf/db/a.yaml", "port: 1\n"},
        {"conf/m.yaml", "defaults:\n  - db: ???\n"},
        {"conf/n.yaml", "defaults:\n  - db: b\n"},
        {NULL, NULL}};
    fx_t f;
    compose(&f, files, "p", NULL, 0);
    assert_int_equal(get_i(&f, "v"), 1);
    assert_null(get(&f, "where"));
    assert_null(get(&f, "db"));
    hy_config_free(&f.c);
    expect_error(files, "m", NULL, 0,
                 "conf/m.yaml:2:5: You must specify 'db', e.g, db=<OPTION>; available options: a");
    static const char *const ov[] = {"db=a"};
    compose(&f, files, "m", ov, 1);
    assert_int_equal(get_i(&f, "db.port"), 1);
    hy_config_free(&f.c);
    expect_error(files, "n", NULL, 0,
                 "conf/n.yaml:2:5: In 'n': Could not find 'db/b'; available options in 'db': a");
    static const char *const ov2[] = {"db=c"};
    expect_error(files, "m", ov2, 1,
                 "override 'db=c': In 'm': Could not find 'db/c'; available options in 'db': a");
}

/* The command line's group forms (Overrides.__init__): +group appends
 * after the primary's own items (after its _self_), ~group deletes,
 * ++group is refused, an unused choice says so. */
static void test_compose_command_line_groups(void **state)
{
    static const tl_file_t files[] = {{"conf/p.yaml", "defaults:\n  - db: a\n  - _self_\nx: 1\n"},
                                      {"conf/db/a.yaml", "port: 1\n"},
                                      {"conf/site/s.yaml", "# @package _global_\nx: 2\n"},
                                      {NULL, NULL}};
    fx_t f;
    static const char *const add[] = {"+site=s"};
    compose(&f, files, "p", add, 1);
    assert_int_equal(get_i(&f, "x"), 2); /* after _self_: it wins */
    hy_config_free(&f.c);
    static const char *const del[] = {"~db"};
    compose(&f, files, "p", del, 1);
    assert_null(get(&f, "db"));
    hy_config_free(&f.c);
    static const char *const del_other[] = {"~db=b"};
    expect_error(files, "p", del_other, 1,
                 "override '~db=b': Could not delete 'db=b'. No match in the defaults list");
    static const char *const force[] = {"++site=s"};
    expect_error(files, "p", force, 1,
                 "override '++site=s': force-add of config groups is not supported: '++site=s'");
    static const char *const unused[] = {"site=s"};
    expect_error(files, "p", unused, 1,
                 "override 'site=s': Could not override 'site'. No match in the defaults list. To "
                 "append to your default list use +site=s");
    static const char *const number[] = {"db=1"};
    expect_error(files, "p", number, 1,
                 "override 'db=1': Config group override must be a string or a list. Got int");
}

/* +group appends and the implicit _self_ (hydra 1.3.2, 7ef3acab,
 * hydra/_internal/defaults_list.py:495-512): in the primary config,
 * _validate_self (:223-259) runs when its defaults list is not empty or
 * when there are appends, and appends a missing _self_ to the list before
 * the appends are added after it. Guards: an empty defaults list with
 * +group appends getting no implicit _self_ (the file's own values lost or
 * merged last); appends placed before the implicit _self_ (the file's own
 * values would win over the appended group). */
static void test_compose_appends_after_implicit_self(void **state)
{
    static const tl_file_t files[] = {{"conf/bare.yaml", "x: 1\ny: 1\n"},
                                      {"conf/noself.yaml", "defaults:\n  - db: a\nx: 1\ny: 1\n"},
                                      {"conf/db/a.yaml", "port: 1\n"},
                                      {"conf/site/s.yaml", "# @package _global_\nx: 2\n"},
                                      {NULL, NULL}};
    fx_t f;
    static const char *const add[] = {"+site=s"};
    /* no defaults list: [_self_, site: s] */
    compose(&f, files, "bare", add, 1);
    assert_int_equal(get_i(&f, "x"), 2);
    assert_int_equal(get_i(&f, "y"), 1);
    hy_config_free(&f.c);
    /* no _self_: [db: a, _self_, site: s] */
    compose(&f, files, "noself", add, 1);
    assert_int_equal(get_i(&f, "x"), 2);
    assert_int_equal(get_i(&f, "y"), 1);
    assert_int_equal(get_i(&f, "db.port"), 1);
    hy_config_free(&f.c);
}

/* Value overrides after composition (config_loader_impl.py
 * _apply_overrides_to_config), struct config: +key on null is accepted. */
static void test_compose_value_overrides(void **state)
{
    static const tl_file_t files[] = {
        {"conf/p.yaml", "defaults:\n  - db: a\n  - _self_\nn: null\n"},
        {"conf/db/a.yaml", "port: 1\n"},
        {NULL, NULL}};
    fx_t f;
    static const char *const ov[] = {"db.port=5", "+n=3", "++db.host=h", "~db.port"};
    compose(&f, files, "p", ov, 4);
    assert_int_equal(get_i(&f, "n"), 3);
    assert_null(get(&f, "db.port"));
    assert_string_equal(get_s(&f, "db.host"), "h");
    hy_config_free(&f.c);
    static const char *const bad[] = {"db.user=x"};
    expect_error(files, "p", bad, 1,
                 "override 'db.user=x': Could not override 'db.user'. To append to your config use "
                 "+db.user=x");
}

/* A cycle (Hydra: RecursionError) is reported with its chain. */
static void test_compose_cycle(void **state)
{
    static const tl_file_t files[] = {{"conf/p.yaml", "defaults:\n  - a\n  - _self_\n"},
                                      {"conf/a.yaml", "defaults:\n  - b\n"},
                                      {"conf/b.yaml", "defaults:\n  - a\n"},
                                      {NULL, NULL}};
    expect_error(files, "p", NULL, 0,
                 "conf/b.yaml:2:5: defaults cycle: conf/p.yaml -> conf/a.yaml -> conf/b.yaml -> "
                 "conf/a.yaml");
}

/* Malformed defaults lists (config_repository.py:_create_defaults_list). */
static void test_compose_malformed(void **state)
{
    static const tl_file_t files[] = {{"conf/map.yaml", "defaults: {db: a}\n"},
                                      {"conf/two.yaml", "defaults:\n  - {db: a, x: b}\n"},
                                      {"conf/int.yaml", "defaults:\n  - db: 3\n"},
                                      {"conf/dup.yaml", "defaults:\n  - _self_\n  - _self_\n"},
                                      {"conf/selfpkg.yaml", "defaults:\n  - _self_@x\n"},
                                      {"conf/hdr.yaml", "# @package a b\nx: 1\n"},
                                      {NULL, NULL}};
    expect_error(files, "map", NULL, 0,
                 "conf/map.yaml:1:11: Invalid defaults list in 'map', defaults must be a list");
    expect_error(files, "two", NULL, 0,
                 "conf/two.yaml:2:5: In 'two': Too many keys in default item");
    expect_error(
        files, "int", NULL, 0,
        "conf/int.yaml:2:9: Unsupported item value in defaults : int. Supported: string or "
        "list");
    expect_error(files, "dup", NULL, 0, "conf/dup.yaml:3:5: Duplicate _self_ defined in dup");
    expect_error(files, "selfpkg", NULL, 0,
                 "conf/selfpkg.yaml:2:5: In 'selfpkg': _self_@PACKAGE is not supported");
    expect_error(files, "hdr", NULL, 0, "conf/hdr.yaml: Too many components in '@package a b'");
    expect_error(files, "none", NULL, 0,
                 "Cannot find primary config 'none'. Check that it's in your config search path "
                 "(conf)");
}

/* Search path: the primary's folder first, then the others (-cd);
 * hydra.searchpath of the primary appends; the `hydra` node is not the
 * task's. Options are the union over the folders. */
static void test_compose_search_path(void **state)
{
    static const tl_file_t files[] = {
        {"main/p.yaml", "defaults:\n  - base\n  - _self_\nhydra:\n  searchpath: [file://lib]\n"},
        {"lib/base.yaml", "defaults:\n  - db: a\nfrom: lib\n"},
        {"lib/db/a.yaml", "port: 1\n"},
        {"extra/db/b.yaml", "port: 2\n"},
        {NULL, NULL}};
    static const char *const search[] = {"main", "extra"};
    fx_t f;
    assert_int_equal(try_compose(&f, files, search, 2, "p", NULL, 0), 0);
    assert_string_equal(get_s(&f, "from"), "lib");
    assert_int_equal(get_i(&f, "db.port"), 1);
    assert_null(get(&f, "hydra"));
    hy_config_free(&f.c);
    static const char *const ov[] = {"db=b"};
    assert_int_equal(try_compose(&f, files, search, 2, "p", ov, 1), 0);
    assert_int_equal(get_i(&f, "db.port"), 2);
    hy_config_free(&f.c);
}

/* hydra.searchpath given on the command line replaces the primary's
 * (hydra 1.3.2 hydra/_internal/config_loader_impl.py:178-189: the first
 * `hydra.searchpath` override wins, "hydra.searchpath in command-line");
 * its entries are appended after the primary's folder (:205-210). The
 * entries must outlive the parsed override: each is looked up later, while
 * the defaults are composed (this read freed memory before). */
static void test_compose_search_path_command_line(void **state)
{
    static const tl_file_t files[] = {
        {"main/p.yaml", "defaults:\n  - base\n  - _self_\nhydra:\n  searchpath: [file://other]\n"},
        {"lib/base.yaml", "defaults:\n  - db: a\nfrom: lib\n"},
        {"lib/db/a.yaml", "port: 1\n"},
        {"other/base.yaml", "from: other\n"},
        {"lib2/db/b.yaml", "port: 2\n"},
        {NULL, NULL}};
    static const char *const search[] = {"main"};
    static const char *const ov[] = {"hydra.searchpath=[file://lib,lib2]", "db=b",
                                     "hydra.searchpath=[file://other]"};
    fx_t f;
    assert_int_equal(try_compose(&f, files, search, 1, "p", ov, 3), 0);
    assert_string_equal(get_s(&f, "from"), "lib");
    assert_int_equal(get_i(&f, "db.port"), 2);
    hy_config_free(&f.c);
}

/* `pkg://a.b` entries: the package a/b on the Python path, the caller's
 * first, then the interpreter's sys.path (hydra 1.3.2
 * hydra/_internal/core_plugins/importlib_resources_config_source.py:22-25
 * turns '/' into '.', :62-67 is available when the package has an
 * __init__.py); an entry that is not available is warned about and
 * skipped (config_loader_impl.py:214-221). A relative `file://` entry is
 * the working folder's (file_config_source.py:21-22). */
static int site(void *ctx, const char *python, const char *const **dirs, size_t *n)
{
    static const char *const sys_path[] = {"venv/site"};
    *(const char **)ctx = python;
    *dirs = sys_path;
    *n = 1;
    return 0;
}

static void test_compose_search_path_pkg(void **state)
{
    static const tl_file_t files[] = {
        {"main/p.yaml", "defaults:\n  - base\n  - db: b\n  - _self_\nhydra:\n  searchpath:\n"
                        "    - pkg://mylib.conf\n    - pkg://site_lib/conf/\n    - pkg://nolib\n"},
        {"mylib/conf/__init__.py", ""},
        {"mylib/conf/base.yaml", "from: mylib\n"},
        {"venv/site/site_lib/conf/__init__.py", ""},
        {"venv/site/site_lib/conf/db/b.yaml", "port: 2\n"},
        {"nolib/base.yaml", "from: nolib\n"},
        {NULL, NULL}};
    static const char *const search[] = {"main"};
    static const char *const py[] = {"."};
    const char *asked = NULL;
    hy_loader_t l = tl_loader(files);
    hy_compose_args_t a = {.loader = &l,
                           .search = search,
                           .n_search = 1,
                           .config_name = "p",
                           .pypath = py,
                           .n_pypath = 1,
                           .syspath = site,
                           .syspath_ctx = &asked,
                           .python = "python3.11"};
    fx_t f;
    compose_ok(&f, &a);
    assert_string_equal(get_s(&f, "from"), "mylib");
    assert_int_equal(get_i(&f, "db.port"), 2);
    assert_string_equal(asked, "python3.11");
    assert_int_equal(f.c.n_warnings, 1);
    assert_string_equal(f.c.warnings[0],
                        "provider=hydra.searchpath in main, path=pkg://nolib is not available.");
    hy_config_free(&f.c);
}

/*
 * Hydra's resolvers (hydra 1.3.2 hydra/core/utils.py:210-222): ${now:FMT}
 * is datetime.now().strftime(FMT), once per run; ${hydra:PATH} is
 * OmegaConf.select(HydraConfig.get(), PATH), null when absent or ???.
 * HydraConfig: Hydra's defaults (hydra/conf/__init__.py HydraConf,
 * hydra/conf/hydra/output/default.yaml run.dir), the config's own `hydra:`
 * and the hydra.* overrides, then what config_loader_impl.py:275-308 sets
 * (overrides.task, runtime.choices, version, cwd, job.name unless the
 * config names it, override_dirname from get_overrides_dirname at
 * core/utils.py:181-195, config_name) and core/utils.py:118-127
 * (runtime.output_dir = abspath(run.dir)). Hydra values may name task
 * keys. And OmegaConf 2.3's oc.decode (resolvers/oc/__init__.py:41-58).
 */
static void test_compose_hydra_resolvers(void **state)
{
    static const tl_file_t files[] = {
        {"conf/p.yaml", "defaults:\n  - db: a\n  - _self_\n"
                        "trainer: {exp: e1}\n"
                        "hydra:\n  run:\n    dir: runs/${trainer.exp}/${hydra.job.name}\n"
                        "  job:\n    config:\n      override_dirname:\n"
                        "        exclude_keys: [trainer.exp]\n"
                        "name: ${hydra:job.name}\ncwd: ${hydra:runtime.cwd}\n"
                        "out: ${hydra:runtime.output_dir}\nod: ${hydra:job.override_dirname}\n"
                        "cn: ${hydra:job.config_name}\nnum: ${hydra:job.num}\n"
                        "nope: ${hydra:no.such}\nver: ${hydra:runtime.version}\n"
                        "db_choice: ${hydra:runtime.choices.db}\n"
                        "day: ${now:%Y-%m-%d %H:%M}\n"
                        "dec: ${oc.decode:'[1, ${trainer.exp}]'}\ndec_null: ${oc.decode:null}\n"},
        {"conf/db/a.yaml", "port: 1\n"},
        {"conf/db/b.yaml", "port: 2\n"},
        {NULL, NULL}};
    static const char *const search[] = {"conf"};
    static const char *const ov[] = {"trainer.exp=e2", "+x=1", "db=b", "hydra.job.chdir=false"};
    hy_runtime_t rt = {.job_name = "main_ppo", .cwd = "/work/job", .now = 1795772842};
    hy_loader_t l = tl_loader(files);
    hy_compose_args_t a = {.loader = &l,
                           .search = search,
                           .n_search = 1,
                           .config_name = "p",
                           .overrides = (char *const *)ov,
                           .n_overrides = 4,
                           .runtime = &rt};
    fx_t f;
    compose_ok(&f, &a);
    assert_null(yt_map_get(f.c.root, "hydra")); /* not the task's */
    f.oc.resolvers = hy_hydra_resolvers;
    f.oc.resolvers_ctx = &f.c.hydra;
    assert_string_equal(get_s(&f, "name"), "main_ppo");
    assert_string_equal(get_s(&f, "cwd"), "/work/job");
    assert_string_equal(get_s(&f, "out"), "/work/job/runs/e2/main_ppo");
    assert_string_equal(get_s(&f, "od"), "+x=1,db=b"); /* sorted, trainer.exp excluded */
    assert_string_equal(get_s(&f, "cn"), "p");
    assert_int_equal(get(&f, "num")->type, YT_NULL);
    assert_int_equal(get(&f, "nope")->type, YT_NULL);
    assert_string_equal(get_s(&f, "ver"), "1.3.2");
    assert_string_equal(get_s(&f, "db_choice"), "b");
    char day[64];
    struct tm tm;
    time_t t = 1795772842;
    localtime_r(&t, &tm);
    strftime(day, sizeof(day), "%Y-%m-%d %H:%M", &tm);
    assert_string_equal(get_s(&f, "day"), day);
    yt_node_t *dec = get(&f, "dec");
    assert_int_equal(dec->type, YT_SEQ);
    assert_int_equal(dec->items[0]->v.i, 1);
    assert_string_equal(dec->items[1]->text, "e2");
    assert_int_equal(get(&f, "dec_null")->type, YT_NULL);
    hy_config_free(&f.c);

    /* without a runtime (the daemon's YAML form), now and hydra are refused */
    a.runtime = NULL;
    assert_int_equal(hy_compose(&a, &f.c, f.err, sizeof(f.err)), 0);
    oc_init(&f.oc, f.c.primary, f.c.root, f.err, sizeof(f.err));
    yt_node_t *raw, *v;
    assert_int_equal(oc_lookup(&f.oc, NULL, "name", &raw), 0);
    assert_int_equal(oc_resolve(&f.oc, raw, &v), PROFD_ECONFIG);
    assert_non_null(strstr(f.err, "unsupported resolver 'hydra'"));
    hy_config_free(&f.c);
}

/* Nodes remember the file they came from and the defaults that brought it
 * in: messages name both. */
static void test_compose_sources(void **state)
{
    static const tl_file_t files[] = {{"conf/p.yaml", "defaults:\n  - g: x\n  - _self_\ntop: 1\n"},
                                      {"conf/g/x.yaml", "defaults:\n  - /h@deep: y\nv: 2\n"},
                                      {"conf/h/y.yaml", "w: 3\n"},
                                      {NULL, NULL}};
    fx_t f;
    compose(&f, files, "p", NULL, 0);
    yt_node_t *w = get(&f, "g.deep.w");
    assert_non_null(w);
    assert_non_null(w->src);
    assert_string_equal(w->src->name, "conf/h/y.yaml");
    assert_string_equal(w->src->chain, "conf/p.yaml -> conf/g/x.yaml -> conf/h/y.yaml");
    assert_int_equal(w->line, 1);
    assert_int_equal(w->col, 4);
    assert_null(get(&f, "top")->src->chain);
    assert_string_equal(f.c.primary, "conf/p.yaml");
    hy_config_free(&f.c);
}

/* `group: [a, b]` composes each option in order. */
static void test_compose_option_list(void **state)
{
    static const tl_file_t files[] = {{"conf/p.yaml", "defaults:\n  - mix: [a, b]\n"},
                                      {"conf/mix/a.yaml", "k: a\nonly_a: 1\n"},
                                      {"conf/mix/b.yaml", "k: b\n"},
                                      {NULL, NULL}};
    fx_t f;
    compose(&f, files, "p", NULL, 0);
    assert_string_equal(get_s(&f, "mix.k"), "b");
    assert_int_equal(get_i(&f, "mix.only_a"), 1);
    hy_config_free(&f.c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compose_self_order),
        cmocka_unit_test(test_compose_packages),
        cmocka_unit_test(test_compose_global_and_nested),
        cmocka_unit_test(test_compose_override),
        cmocka_unit_test(test_compose_interpolated_choice),
        cmocka_unit_test(test_compose_optional_missing),
        cmocka_unit_test(test_compose_command_line_groups),
        cmocka_unit_test(test_compose_appends_after_implicit_self),
        cmocka_unit_test(test_compose_value_overrides),
        cmocka_unit_test(test_compose_cycle),
        cmocka_unit_test(test_compose_malformed),
        cmocka_unit_test(test_compose_search_path),
        cmocka_unit_test(test_compose_search_path_command_line),
        cmocka_unit_test(test_compose_search_path_pkg),
        cmocka_unit_test(test_compose_hydra_resolvers),
        cmocka_unit_test(test_compose_sources),
        cmocka_unit_test(test_compose_option_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
