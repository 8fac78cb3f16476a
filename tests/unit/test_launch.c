// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Launch lines (launch.h) over table loaders: which program runs, where its
 * config is, which of the arguments are overrides or profiling flags. The
 * launchers' options come from their own parsers (torch/distributed/run.py,
 * uv run, nsys profile, python), Hydra's flags from hydra-core 1.3.2
 * hydra/_internal/utils.py:get_args_parser and compute_search_path_dir.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "launch.h"
#include "profd/errors.h"
#include "table_loader.h"

/* a verl checkout: the package folder is there (the module file need not) */
static const tl_file_t verl[] = {
    {"verl/trainer/config/ppo_trainer.yaml", "global_profiler: {steps: null}\n"},
    {"verl/trainer/config/ppo_megatron_trainer.yaml", "defaults:\n  - ppo_trainer\n"},
    {"user/prof/npu.yaml", "x: 1\n"},
    {"tools/app.py", "import hydra\n\n@hydra.main(config_path='conf', config_name=\"job\", "
                     "version_base=None)\ndef main(cfg):\n    pass\n"},
    {"tools/conf/job.yaml", "a: 1\n"},
    {"ms/mindspeed_llm/__init__.py", ""},
    {"ms/pretrain_gpt.py", ""},
    {"fsdp/train.yaml", "training:\n  profile: false\n"},
    {NULL, NULL}};

static const char *const pypath[] = {"."};

static int parse(const char *const *argv, int argc, pd_launch_t *l, char *err, size_t errlen)
{
    hy_loader_t ld = tl_loader(verl);
    pd_launch_args_t a = {.loader = &ld, .pypath = pypath, .n_pypath = 1};
    int rc = pd_launch_parse(&a, argc, (char *const *)argv, l, err, errlen);
    if (rc != 0) {
        print_error("%s\n", err);
    }
    return rc;
}

#define ARGC(v) ((int)(sizeof(v) / sizeof(v[0])))

/* A launch line as typed, its words split at spaces (none has one): argv
 * into w, argc in w->argc. */
typedef struct words {
    char buf[512];
    const char *argv[32];
    int argc;
} words_t;

static const char *const *split(words_t *w, const char *line)
{
    char *save = NULL;
    assert_true(strlen(line) < sizeof(w->buf));
    strcpy(w->buf, line);
    w->argc = 0;
    for (char *t = strtok_r(w->buf, " ", &save); t != NULL; t = strtok_r(NULL, " ", &save)) {
        assert_true(w->argc < ARGC(w->argv));
        w->argv[w->argc++] = t;
    }
    return w->argv;
}

static void expect_error(const char *const *argv, int argc, const char *msg)
{
    hy_loader_t ld = tl_loader(verl);
    pd_launch_args_t a = {.loader = &ld, .pypath = pypath, .n_pypath = 1};
    pd_launch_t l;
    char err[512] = "";
    assert_int_equal(pd_launch_parse(&a, argc, (char *const *)argv, &l, err, sizeof(err)),
                     PROFD_EINVAL);
    if (strcmp(err, msg) != 0) {
        print_error(" got  %s\n want %s\n", err, msg);
    }
    assert_string_equal(err, msg);
}

/* The launch line `line` is read as a Hydra launch: its first search
 * folder, its config name and how many overrides it has. */
static void expect_hydra(const char *line, const char *search0, const char *config_name,
                         size_t n_overrides)
{
    words_t w;
    pd_launch_t l;
    char err[512];
    const char *const *argv = split(&w, line);
    assert_int_equal(parse(argv, w.argc, &l, err, sizeof(err)), 0);
    assert_int_equal(l.kind, PD_LAUNCH_HYDRA);
    assert_string_equal(l.search[0], search0);
    assert_string_equal(l.config_name, config_name);
    assert_int_equal(l.n_overrides, n_overrides);
    pd_launch_free(&l);
}

/* python3 -m verl.trainer.main_ppo: @hydra.main(config_path="config",
 * config_name="ppo_trainer") beside the module (verl-project 1dda039b
 * verl/trainer/main_ppo.py:166); everything after the module is Hydra's. */
static void test_launch_verl_module(void **state)
{
    static const char *const argv[] = {"python3", "-u",   "-m", "verl.trainer.main_ppo",
                                       "a.b=1",   "+c=2", "~d", "model_engine=megatron"};
    pd_launch_t l;
    char err[512];
    assert_int_equal(parse(argv, ARGC(argv), &l, err, sizeof(err)), 0);
    assert_int_equal(l.kind, PD_LAUNCH_HYDRA);
    assert_int_equal(l.n_search, 1);
    assert_string_equal(l.search[0], "verl/trainer/config");
    assert_string_equal(l.config_name, "ppo_trainer");
    assert_int_equal(l.n_overrides, 4);
    assert_string_equal(l.overrides[0], "a.b=1");
    assert_string_equal(l.overrides[3], "model_engine=megatron");
    pd_launch_free(&l);
}

/* --config-path is relative to the module's folder, never the working
 * folder; --config-name may carry .yaml; -cd adds a folder (from the
 * working folder) after the main one. Both `--opt=v` and `--opt v`. */
static void test_launch_hydra_flags(void **state)
{
    words_t w;
    const char *const *argv =
        split(&w, "uv run --frozen --extra sglang python3 -m verl.trainer.main_ppo "
                  "--config-path=./config --config-name ppo_megatron_trainer.yaml -cd "
                  "user/prof x=1");
    pd_launch_t l;
    char err[512];
    assert_int_equal(parse(argv, w.argc, &l, err, sizeof(err)), 0);
    assert_int_equal(l.n_search, 2);
    assert_string_equal(l.search[0], "verl/trainer/./config");
    assert_string_equal(l.search[1], "user/prof");
    assert_string_equal(l.config_name, "ppo_megatron_trainer.yaml");
    assert_int_equal(l.n_overrides, 1);
    pd_launch_free(&l);
}

/* A script whose source has @hydra.main: its folder + config_path. */
static void test_launch_hydra_script(void **state)
{
    expect_hydra("python tools/app.py a=2", "tools/conf", "job", 1);
}

/* Lines that do not train, or that Hydra refuses. */
static void test_launch_refused(void **state)
{
    static const char *const cfg[] = {"python3", "-m", "verl.trainer.main_ppo", "--cfg", "job"};
    expect_error(cfg, ARGC(cfg), "--cfg: this launch line prints and exits; it runs no training");
    static const char *const multi[] = {"python3", "-m", "verl.trainer.main_ppo", "-m", "a=1,2"};
    expect_error(multi, ARGC(multi),
                 "-m: a multirun starts several jobs; apply one launch line per job");
    static const char *const unknown[] = {"python3", "-m", "verl.trainer.main_ppo", "--bogus"};
    expect_error(unknown, ARGC(unknown), "unrecognized arguments: --bogus (Hydra's command line)");
    /* Python stops before Hydra runs (CPython Lib/runpy.py:_get_module_details). */
    static const char *const missing[] = {"python3", "-m", "nowhere.main"};
    expect_error(missing, ARGC(missing),
                 "python3 -m nowhere.main: module not found: No module named 'nowhere.main' "
                 "(looked in the working folder, $PYTHONPATH, --python-path and python3's "
                 "sys.path)");
    /* hydra 1.3.2 hydra/_internal/config_loader_impl.py:106-131: the main
     * source pkg://verl.trainer/nope (utils.py:138-161), normalized to
     * verl.trainer.nope (importlib_resources_config_source.py:25). */
    static const char *const nocfg[] = {"python3", "-m", "verl.trainer.main_ppo",
                                        "--config-path=nope"};
    expect_error(nocfg, ARGC(nocfg),
                 "Primary config module 'verl.trainer.nope' not found. Check that it's correct "
                 "and contains an __init__.py file");
    static const char *const nodir[] = {"python3", "tools/app.py", "--config-path=/nope"};
    expect_error(nodir, ARGC(nodir),
                 "Primary config directory not found. Check that the config directory '/nope' "
                 "exists and readable");
    static const char *const cmd[] = {"python3", "-c", "print(1)"};
    expect_error(cmd, ARGC(cmd), "python -c: the program is not a file or module profctl can read");
    static const char *const yamlpath[] = {"python3", "-m", "verl.trainer.main_ppo",
                                           "--config-path=config/ppo.yaml"};
    expect_error(
        yamlpath, ARGC(yamlpath),
        "Using config_path to specify the config name is not supported, specify the config "
        "name via config_name.");
    static const char *const cd[] = {"python3", "-m", "verl.trainer.main_ppo", "-cd", "nope"};
    expect_error(cd, ARGC(cd), "Additional config directory 'nope' not found");
}

/* torchrun / python -m torch.distributed.run / nsys profile in front of a
 * Megatron-style script: the flags (argparse: nargs '+' takes negative
 * numbers, the last flag wins). Megatron-LM's flags only: Megatron-LM. */
static void test_launch_megatron_flags(void **state)
{
    words_t w;
    const char *const *argv =
        split(&w, "nsys profile -o out --trace=cuda -f true python -m "
                  "torch.distributed.run --nproc_per_node 8 --standalone pretrain_gpt.py "
                  "--num-layers 2 --profile --profile-step-start 4 --profile-step-start=5 "
                  "--profile-ranks 0 -1 --lr 1e-4");
    pd_launch_t l;
    char err[512];
    assert_int_equal(parse(argv, w.argc, &l, err, sizeof(err)), 0);
    assert_int_equal(l.kind, PD_LAUNCH_FLAGS);
    assert_int_equal(l.framework, PD_FW_MEGATRON_LM);
    assert_string_equal(l.what, "pretrain_gpt.py");
    assert_true(yt_map_get(l.flags, "profile")->v.b);
    assert_int_equal(yt_map_get(l.flags, "profile_step_start")->v.i, 5);
    yt_node_t *r = yt_map_get(l.flags, "profile_ranks");
    assert_int_equal(r->n, 2);
    assert_int_equal(r->items[1]->v.i, -1);
    assert_string_equal(r->origin, "--profile-ranks 0 -1");
    assert_null(yt_map_get(l.flags, "num_layers"));
    pd_launch_free(&l);
    static const char *const bad[] = {"torchrun", "pretrain_gpt.py", "--profile-step-end", "x"};
    expect_error(bad, ARGC(bad), "argument --profile-step-end: invalid int value: 'x'");
    static const char *const none[] = {"torchrun", "pretrain_gpt.py", "--profile-ranks"};
    expect_error(none, ARGC(none), "argument --profile-ranks: expected at least one argument");
}

/* MindSpeed-LLM: one of its own arguments, or its package beside the
 * script, makes the line MindSpeed-LLM's (Megatron-core path). */
static void test_launch_mindspeed_detection(void **state)
{
    static const char *const by_flag[] = {
        "torchrun", "--nnodes", "1", "pretrain_gpt.py", "--tokenizer-name-or-path",
        "t",        "--profile"};
    static const char *const by_level[] = {"torchrun", "pretrain_gpt.py", "--profile",
                                           "--profile-level", "level1"};
    static const char *const by_folder[] = {"torchrun", "ms/pretrain_gpt.py", "--profile"};
    const char *const *lines[] = {by_flag, by_level, by_folder};
    const int n[] = {ARGC(by_flag), ARGC(by_level), ARGC(by_folder)};
    for (int i = 0; i < 3; i++) {
        pd_launch_t l;
        char err[512];
        assert_int_equal(parse(lines[i], n[i], &l, err, sizeof(err)), 0);
        assert_int_equal(l.framework, PD_FW_MINDSPEED_MCORE);
        pd_launch_free(&l);
    }
}

/* MindSpeed-LLM FSDP2: train_fsdp2.py FILE.yaml --section.key value...
 * (fsdp2/utils/arguments.py: the command line wins over the YAML). */
static void test_launch_fsdp2(void **state)
{
    words_t w;
    const char *const *argv =
        split(&w, "torchrun --nproc_per_node 8 train_fsdp2.py fsdp/train.yaml "
                  "--training.profile true --training.profile_ranks 0 1 --model.name=qwen");
    pd_launch_t l;
    hy_config_t c;
    char err[512];
    hy_loader_t ld = tl_loader(verl);
    assert_int_equal(parse(argv, w.argc, &l, err, sizeof(err)), 0);
    assert_int_equal(l.kind, PD_LAUNCH_FSDP2);
    assert_int_equal(l.framework, PD_FW_MINDSPEED_FSDP2);
    assert_int_equal(pd_launch_config(&l, &ld, NULL, NULL, &c, err, sizeof(err)), 0);
    yt_node_t *t = yt_map_get(c.root, "training");
    assert_true(yt_map_get(t, "profile")->v.b);
    assert_int_equal(yt_map_get(t, "profile_ranks")->n, 2);
    assert_string_equal(yt_map_get(yt_map_get(c.root, "model"), "name")->text, "qwen");
    hy_config_free(&c);
    pd_launch_free(&l);
    static const char *const noyaml[] = {"torchrun", "train_fsdp2.py", "--training.profile",
                                         "true"};
    expect_error(noyaml, ARGC(noyaml),
                 "train_fsdp2.py: expected the YAML config as the first argument");
}

/*/* (Table paths are written without their leading "/".)
 * A package pip-installed in the interpreter's site-packages, launched from
 * another folder: not on the caller's path, found where the interpreter
 * itself looks (its sys.path), asked of the interpreter the line names;
 * torchrun's own interpreter is its `#!`'s, asked with "torchrun". */
typedef struct asked {
    const char *python;
    int calls;
} asked_t;

static int fake_syspath(void *ctx, const char *python, const char *const **dirs, size_t *n)
{
    static const char *const sys_path[] = {"/usr/lib/python311.zip", "/venv/lib/site-packages"};
    asked_t *a = ctx;
    a->python = python;
    a->calls++;
    *dirs = sys_path;
    *n = 2;
    return 0;
}

static void test_launch_site_packages(void **state)
{
    static const tl_file_t site[] = {
        {"venv/lib/site-packages/verl/__init__.py", ""},
        {"venv/lib/site-packages/verl/trainer/main_ppo.py",
         "@hydra.main(config_path=\"config\", config_name=\"ppo_trainer\", version_base=None)\n"},
        {"venv/lib/site-packages/verl/trainer/config/ppo_trainer.yaml", "a: 1\n"},
        {"work/run.sh", ""},
        {NULL, NULL}};
    static const char *const argv[] = {"/venv/bin/python", "-m", "verl.trainer.main_ppo", "a=2"};
    static const char *const tr[] = {"torchrun", "--nproc_per_node=2", "-m",
                                     "verl.trainer.main_ppo"};
    hy_loader_t ld = tl_loader(site);
    asked_t asked = {0};
    pd_launch_args_t a = {.loader = &ld,
                          .pypath = pypath,
                          .n_pypath = 1,
                          .syspath = fake_syspath,
                          .syspath_ctx = &asked};
    pd_launch_t l;
    char err[512] = "";
    int rc = pd_launch_parse(&a, ARGC(argv), (char *const *)argv, &l, err, sizeof(err));
    if (rc != 0) {
        print_error("%s\n", err);
    }
    assert_int_equal(rc, 0);
    assert_int_equal(asked.calls, 1);
    assert_string_equal(asked.python, "/venv/bin/python");
    assert_string_equal(l.search[0], "/venv/lib/site-packages/verl/trainer/config");
    assert_string_equal(l.config_name, "ppo_trainer");
    hy_config_t c;
    assert_int_equal(pd_launch_config(&l, &ld, NULL, NULL, &c, err, sizeof(err)), 0);
    assert_int_equal(yt_map_get(c.root, "a")->v.i, 2);
    hy_config_free(&c);
    pd_launch_free(&l);
    assert_int_equal(pd_launch_parse(&a, ARGC(tr), (char *const *)tr, &l, err, sizeof(err)), 0);
    assert_string_equal(asked.python, "torchrun");
    assert_string_equal(l.search[0], "/venv/lib/site-packages/verl/trainer/config");
    pd_launch_free(&l);
    /* Not there either: Python's own refusal, naming the interpreter. */
    static const char *const gone[] = {"/venv/bin/python", "-m", "verl2.main"};
    assert_int_equal(pd_launch_parse(&a, ARGC(gone), (char *const *)gone, &l, err, sizeof(err)),
                     PROFD_EINVAL);
    assert_string_equal(err, "/venv/bin/python -m verl2.main: module not found: No module named "
                             "'verl2.main' (looked in the working folder, $PYTHONPATH, "
                             "--python-path and /venv/bin/python's sys.path)");
}

/* A file first: the file form, its folder the search path. */
static void test_launch_file_form(void **state)
{
    expect_hydra("verl/trainer/config/ppo_trainer.yaml a=1", "verl/trainer/config",
                 "ppo_trainer.yaml", 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_launch_verl_module),
        cmocka_unit_test(test_launch_hydra_flags),
        cmocka_unit_test(test_launch_hydra_script),
        cmocka_unit_test(test_launch_refused),
        cmocka_unit_test(test_launch_megatron_flags),
        cmocka_unit_test(test_launch_mindspeed_detection),
        cmocka_unit_test(test_launch_fsdp2),
        cmocka_unit_test(test_launch_file_form),
        cmocka_unit_test(test_launch_site_packages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
