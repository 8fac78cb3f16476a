// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Launch lines (see launch.h). The launchers' options are read from their
 * own argument parsers: uv run, nsys profile, torchrun
 * (torch/distributed/run.py), python; Hydra's from
 * hydra/_internal/utils.py:get_args_parser (hydra-core 1.3.2).
 */
#include "launch.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "hydra.h"
#include "profd/errors.h"

typedef struct scan {
    const pd_launch_args_t *a;
    pd_launch_t *l;
    ar_block_t **ar;
    int argc;
    char *const *argv;
    int i;
    char *err;
    size_t errlen;
    bool torchrun_module; /* torchrun -m: the script is a module */
    bool module_file;     /* the module's source was read */
    bool known_entry;     /* one of verl's entry points (entries[]) */
} scan_t;

static int bad(scan_t *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(scan_t *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, s->errlen, fmt, ap);
    va_end(ap);
    yt_one_line(s->err);
    return PROFD_EINVAL;
}

static int nomem(scan_t *s)
{
    snprintf(s->err, s->errlen, "out of memory");
    return PROFD_ENOMEM;
}

static const char *base(const char *p)
{
    const char *b = strrchr(p, '/');
    return b ? b + 1 : p;
}

static bool ends(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static bool in(const char *s, const char *const *list)
{
    for (; *list != NULL; list++) {
        if (strcmp(s, *list) == 0) {
            return true;
        }
    }
    return false;
}

/* The option name of "--opt=value" / "--opt". */
static void opt_name(const char *arg, char *buf, size_t len)
{
    snprintf(buf, len, "%.*s", (int)strcspn(arg, "="), arg);
}

/* ---- launchers ------------------------------------------------------------------- */

/* Skip options: those in `flags` take no value, any other takes one
 * unless written `--opt=value`. */
static void skip_opts(scan_t *s, const char *const *flags)
{
    char name[64];
    while (s->i < s->argc && s->argv[s->i][0] == '-' && s->argv[s->i][1] != '\0') {
        const char *arg = s->argv[s->i++];
        opt_name(arg, name, sizeof(name));
        if (strchr(arg, '=') == NULL && !in(name, flags)) {
            s->i++;
        }
        if (strcmp(name, "-m") == 0 || strcmp(name, "--module") == 0) {
            s->torchrun_module = true;
        }
    }
}

static const char *const uv_values[] = {"--extra",
                                        "--with",
                                        "--with-editable",
                                        "--with-requirements",
                                        "--python",
                                        "-p",
                                        "--project",
                                        "--directory",
                                        "--package",
                                        "--group",
                                        "--no-group",
                                        "--only-group",
                                        "--env-file",
                                        "--index",
                                        "--default-index",
                                        "--index-url",
                                        "--extra-index-url",
                                        "--find-links",
                                        "-f",
                                        "--index-strategy",
                                        "--keyring-provider",
                                        "--resolution",
                                        "--prerelease",
                                        "--fork-strategy",
                                        "--exclude-newer",
                                        "--link-mode",
                                        "--config-setting",
                                        "-C",
                                        "--no-build-isolation-package",
                                        "--no-binary-package",
                                        "--no-build-package",
                                        "--upgrade-package",
                                        "-P",
                                        "--reinstall-package",
                                        "--refresh-package",
                                        "--cache-dir",
                                        "--config-file",
                                        "--color",
                                        "--python-preference",
                                        "--allow-insecure-host",
                                        "--no-extra",
                                        NULL};

/* uv run: its options (most are flags) up to the command. */
static void skip_uv(scan_t *s)
{
    char name[64];
    s->i += 2; /* uv run */
    while (s->i < s->argc && s->argv[s->i][0] == '-') {
        const char *arg = s->argv[s->i++];
        opt_name(arg, name, sizeof(name));
        if (strchr(arg, '=') == NULL && in(name, uv_values)) {
            s->i++;
        }
    }
}

static const char *const torchrun_flags[] = {
    "--standalone",         "-m",         "--module",  "--no-python", "--no_python",
    "--run-path",           "--run_path", "--use-env", "--use_env",   "--virtual-local-rank",
    "--virtual_local_rank", NULL};
static const char *const nsys_flags[] = {"--help", "-h", NULL};

/* Launchers in front of python or the script; *stop when none is left. */
static int skip_one(scan_t *s, bool *stop)
{
    const char *b = base(s->argv[s->i]);
    *stop = false;
    if (strchr(s->argv[s->i], '=') != NULL && s->argv[s->i][0] != '-') {
        s->i++; /* VAR=value */
    } else if (strcmp(b, "env") == 0) {
        s->i++;
    } else if (strcmp(b, "uv") == 0 && s->i + 1 < s->argc &&
               strcmp(s->argv[s->i + 1], "run") == 0) {
        skip_uv(s);
    } else if (strcmp(b, "nsys") == 0 && s->i + 1 < s->argc &&
               (strcmp(s->argv[s->i + 1], "profile") == 0 ||
                strcmp(s->argv[s->i + 1], "launch") == 0)) {
        s->i += 2;
        skip_opts(s, nsys_flags);
    } else if (strcmp(b, "torchrun") == 0) {
        s->l->python = s->argv[s->i]; /* its `#!` names the interpreter */
        s->i++;
        skip_opts(s, torchrun_flags);
    } else {
        *stop = true;
    }
    return 0;
}

/* python [options] -m MODULE | SCRIPT: *module or *script. */
static int python(scan_t *s, const char **module, const char **script)
{
    s->i++;
    while (s->i < s->argc && s->argv[s->i][0] == '-') {
        const char *arg = s->argv[s->i++];
        if (strcmp(arg, "-m") == 0 || strncmp(arg, "-m", 2) == 0) {
            *module = arg[2] ? arg + 2 : s->i < s->argc ? s->argv[s->i++] : NULL;
            return *module ? 0 : bad(s, "python -m: no module given");
        }
        if (strcmp(arg, "-c") == 0 || strcmp(arg, "-") == 0) {
            return bad(s, "python %s: the program is not a file or module profctl can read", arg);
        }
        if ((strcmp(arg, "-W") == 0 || strcmp(arg, "-X") == 0 ||
             strcmp(arg, "--check-hash-based-pycs") == 0) &&
            s->i < s->argc) {
            s->i++;
        }
    }
    if (s->i >= s->argc) {
        return bad(s, "python: no script or -m MODULE in the launch line");
    }
    *script = s->argv[s->i++];
    return 0;
}

/* Everything up to the program: *module or *script set, s->i at its args. */
static int launchers(scan_t *s, const char **module, const char **script)
{
    bool stop = false;
    *module = *script = NULL;
    while (s->i < s->argc && !stop) {
        skip_one(s, &stop);
    }
    if (s->i >= s->argc) {
        return bad(s, "the launch line has no program");
    }
    const char *b = base(s->argv[s->i]);
    int rc = 0;
    if (strncmp(b, "python", 6) == 0 && !ends(b, ".py")) {
        s->l->python = s->argv[s->i];
        rc = python(s, module, script);
    } else {
        *script = s->argv[s->i++];
        if (s->torchrun_module) { /* torchrun -m MODULE */
            *module = *script;
            *script = NULL;
        }
    }
    if (rc == 0 && *module != NULL &&
        (strcmp(*module, "torch.distributed.run") == 0 ||
         strcmp(*module, "torch.distributed.launch") == 0)) {
        skip_opts(s, torchrun_flags);
        if (s->i >= s->argc) {
            return bad(s, "%s: no training script", *module);
        }
        *module = NULL;
        *script = s->argv[s->i++];
        if (s->torchrun_module) {
            *module = *script;
            *script = NULL;
        }
    }
    return rc;
}

/* ---- Hydra applications ---------------------------------------------------------- */

/* @hydra.main of verl's entry points (verl-project 1dda039b, volcengine
 * b178a3cd): used when the module file is not at hand. */
static const struct entry {
    const char *module, *config_path, *config_name;
} entries[] = {
    {"verl.trainer.main_ppo", "config", "ppo_trainer"},
    {"verl.trainer.main_generation_server", "config", "ppo_trainer"},
    {"verl.trainer.main_generation", "config", "generation"},
    {"verl.trainer.main_eval", "config", "evaluation"},
    {"verl.trainer.sft_trainer", "config", "sft_trainer_engine"},
    {"verl.trainer.sft_trainer_ray", "config", "sft_trainer_engine"},
    {"verl.trainer.fsdp_sft_trainer", "config", "sft_trainer"},
    {"verl.experimental.one_step_off_policy.main_ppo", "config", "one_step_off_ppo_trainer"},
    {"verl.experimental.fully_async_policy.fully_async_main", "config", "fully_async_ppo_trainer"},
    {"verl.experimental.transfer_queue.main_ppo", "config", "ppo_trainer"},
    {NULL, NULL, NULL},
};

/* The string literal after `name=` inside @hydra.main(...); "" for None. */
static const char *kwarg(scan_t *s, const char *args, const char *name)
{
    const char *p = strstr(args, name);
    if (p == NULL) {
        return NULL;
    }
    p += strlen(name);
    p += strspn(p, " \t");
    if (*p != '=') {
        return NULL;
    }
    p++;
    p += strspn(p, " \t");
    if (strncmp(p, "None", 4) == 0) {
        return "";
    }
    if (*p != '"' && *p != '\'') {
        return NULL;
    }
    const char *e = strchr(p + 1, *p);
    return e ? ar_printf(s->ar, "%.*s", (int)(e - p - 1), p + 1) : NULL;
}

/* config_path / config_name of the program's @hydra.main; false when the
 * text has none. */
static bool hydra_main(scan_t *s, const char *text, const char **cpath, const char **cname)
{
    const char *m = text ? strstr(text, "@hydra.main(") : NULL;
    if (m == NULL) {
        return false;
    }
    const char *e = strchr(m, ')');
    char *args = ar_printf(s->ar, "%.*s", e ? (int)(e - m) : 400, m);
    *cpath = args ? kwarg(s, args, "config_path") : NULL;
    *cname = args ? kwarg(s, args, "config_name") : NULL;
    return true;
}

/* A file's text through the loader (NULL when absent). */
static char *slurp(scan_t *s, const char *path)
{
    char *text = NULL;
    size_t len;
    if (s->a->loader->read(s->a->loader->ctx, path, &text, &len) != 0) {
        return NULL;
    }
    char *copy = ar_strdup(s->ar, text);
    free(text);
    return copy;
}

static void ignore(void *arg, const char *name, bool is_dir)
{
    (void)arg;
    (void)name;
    (void)is_dir;
}

static bool is_dir(scan_t *s, const char *path)
{
    return s->a->loader->list(s->a->loader->ctx, path, ignore, NULL) == 0;
}

/* Find a module on the Python path: *dir is its folder (the package
 * folder, present even when the module file is not), *text its source. */
static int find_module(scan_t *s, const char *module, const char **dir, char **text)
{
    char *rel = ar_strdup(s->ar, module);
    if (rel == NULL) {
        return nomem(s);
    }
    for (char *p = rel; *p; p++) {
        *p = *p == '.' ? '/' : *p;
    }
    char *slash = strrchr(rel, '/');
    const char *pkg = slash ? ar_printf(s->ar, "%.*s", (int)(slash - rel), rel) : "";
    const char *const *path = s->a->pypath;
    size_t n = s->a->n_pypath;
    *dir = NULL;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < n; i++) {
            const char *root = path[i][0] ? path[i] : ".";
            const char *d = pkg[0] ? ar_printf(s->ar, "%s/%s", root, pkg) : root;
            const char *f = ar_printf(s->ar, "%s/%s.py", root, rel);
            const char *p = ar_printf(s->ar, "%s/%s/__init__.py", root, rel);
            if (d == NULL || f == NULL || p == NULL) {
                return nomem(s);
            }
            *text = slurp(s, f);
            if (*text != NULL || (pkg[0] && is_dir(s, d)) || slurp(s, p) != NULL) {
                *dir = strcmp(root, ".") == 0 && pkg[0] ? pkg : d;
                return 0;
            }
        }
        /* Not beside the caller: where the interpreter itself looks
         * (site-packages of a pip-installed package). */
        if (pass > 0 || s->a->syspath == NULL ||
            s->a->syspath(s->a->syspath_ctx, s->l->python ? s->l->python : "python3", &path, &n) !=
                0) {
            break;
        }
    }
    return 0;
}

/* The program's folder and its @hydra.main; *hydra false: not Hydra. */
static int program(scan_t *s, const char *module, const char *script, const char **dir,
                   const char **cpath, const char **cname, bool *hydra)
{
    char *text = NULL;
    *hydra = false;
    *dir = NULL;
    *cpath = *cname = NULL;
    if (module != NULL) {
        int rc = find_module(s, module, dir, &text);
        if (rc != 0) {
            return rc;
        }
        s->module_file = text != NULL;
    } else {
        const char *slash = strrchr(script, '/');
        *dir = slash ? ar_printf(s->ar, "%.*s", (int)(slash - script), script) : ".";
        text = slurp(s, script);
    }
    if (hydra_main(s, text, cpath, cname)) {
        *hydra = true;
        return 0;
    }
    for (const struct entry *e = entries; e->module != NULL; e++) {
        char *path = ar_strdup(s->ar, e->module);
        for (char *p = path; p && *p; p++) {
            *p = *p == '.' ? '/' : *p;
        }
        if ((module && strcmp(module, e->module) == 0) ||
            (script && path && ends(script, ar_printf(s->ar, "%s.py", path)))) {
            *cpath = e->config_path;
            *cname = e->config_name;
            *hydra = true;
            s->known_entry = true;
        }
    }
    return 0;
}

/* Hydra's own flags; the rest are overrides. */
static int hydra_flags(scan_t *s, const char **cpath, const char **cname, const char **cdir)
{
    static const char *const printing[] = {"--cfg",
                                           "-c",
                                           "--help",
                                           "-h",
                                           "--hydra-help",
                                           "--version",
                                           "--info",
                                           "-i",
                                           "--shell-completion",
                                           "-sc",
                                           "--experimental-rerun",
                                           NULL};
    char name[64];
    char **ov = ar_alloc(s->ar, (size_t)(s->argc - s->i + 1) * sizeof(*ov));
    size_t n = 0;
    if (ov == NULL) {
        return nomem(s);
    }
    while (s->i < s->argc) {
        const char *arg = s->argv[s->i++];
        const char **dst = NULL;
        if (arg[0] != '-') {
            ov[n++] = (char *)arg;
            continue;
        }
        opt_name(arg, name, sizeof(name));
        if (strcmp(name, "--config-path") == 0 || strcmp(name, "-cp") == 0) {
            dst = cpath;
        } else if (strcmp(name, "--config-name") == 0 || strcmp(name, "-cn") == 0) {
            dst = cname;
        } else if (strcmp(name, "--config-dir") == 0 || strcmp(name, "-cd") == 0) {
            dst = cdir;
        } else if (in(name, printing)) {
            return bad(s, "%s: this launch line prints and exits; it runs no training", name);
        } else if (strcmp(name, "--multirun") == 0 || strcmp(name, "-m") == 0) {
            return bad(s, "%s: a multirun starts several jobs; apply one launch line per job",
                       name);
        } else if (strcmp(name, "--run") == 0 || strcmp(name, "-r") == 0 ||
                   strcmp(name, "--resolve") == 0) {
            continue;
        } else if (strcmp(name, "--package") == 0 || strcmp(name, "-p") == 0) {
            s->i += strchr(arg, '=') == NULL;
            continue;
        } else {
            return bad(s, "unrecognized arguments: %s (Hydra's command line)", arg);
        }
        const char *eq = strchr(arg, '=');
        if (eq == NULL && s->i >= s->argc) {
            return bad(s, "argument %s: expected one argument", name);
        }
        *dst = eq ? eq + 1 : s->argv[s->i++];
    }
    s->l->overrides = ov;
    s->l->n_overrides = n;
    return 0;
}

/* The config folder (hydra/_internal/utils.py:compute_search_path_dir). */
static int hydra_app(scan_t *s, const char *module, const char *script)
{
    const char *dir, *cpath, *cname, *cdir = NULL;
    bool hydra;
    int rc = program(s, module, script, &dir, &cpath, &cname, &hydra);
    if (rc == 0) {
        rc = hydra_flags(s, &cpath, &cname, &cdir);
    }
    if (rc != 0) {
        return rc;
    }
    /* A package folder without the module file stands for a checkout whose
     * code is not at hand only for verl's own entry points. */
    if (module != NULL && (dir == NULL || (!s->module_file && !s->known_entry)) &&
        (cpath == NULL || cpath[0] != '/')) {
        /* Python itself stops there (CPython Lib/runpy.py:_get_module_details,
         * "No module named"); Hydra never runs. */
        const char *py = s->l->python ? s->l->python : "python3";
        return bad(s,
                   "%s -m %s: module not found: No module named '%s' (looked in the working "
                   "folder, $PYTHONPATH, --python-path and %s's sys.path)",
                   py, module, module, py);
    }
    if (cname == NULL) {
        return bad(s, "%s: no config name (give --config-name)", s->l->what);
    }
    if (cpath == NULL || cpath[0] == '\0') {
        return bad(s, "%s: no config path (give --config-path)", s->l->what);
    }
    if (ends(cpath, ".yaml") || ends(cpath, ".yml")) {
        return bad(s, "Using config_path to specify the config name is not supported, specify the "
                      "config name via config_name.");
    }
    const char *main = cpath[0] == '/' ? cpath : ar_printf(s->ar, "%s/%s", dir, cpath);
    if (main == NULL) {
        return nomem(s);
    }
    if (!is_dir(s, main)) {
        /* config_loader_impl.py:106-131 (ensure_main_config_source_available):
         * a module's config folder is the source pkg://PACKAGE/CONFIG_PATH
         * (utils.py:138-161), a script's or an absolute one a directory. */
        if (module != NULL && cpath[0] != '/') {
            char *pkg = ar_printf(s->ar, "%.*s.%s",
                                  (int)(strrchr(module, '.') ? strrchr(module, '.') - module : 0),
                                  module, cpath);
            for (char *p = pkg; p && *p; p++) {
                *p = *p == '/' ? '.' : *p;
            }
            pkg = pkg && pkg[0] == '.' ? pkg + 1 : pkg;
            return bad(s,
                       "Primary config module '%s' not found. Check that it's correct and contains "
                       "an __init__.py file",
                       pkg ? pkg : cpath);
        }
        return bad(s,
                   "Primary config directory not found. Check that the config directory '%s' "
                   "exists and readable",
                   main);
    }
    s->l->search[s->l->n_search++] = main;
    if (cdir != NULL) {
        if (!is_dir(s, cdir)) {
            return bad(s, "Additional config directory '%s' not found", cdir);
        }
        s->l->search[s->l->n_search++] = cdir;
    }
    s->l->config_name = cname;
    s->l->kind = PD_LAUNCH_HYDRA;
    /* detect_task_name (hydra/_internal/utils.py:102-115): the script's
     * stem, or the module's last part (under -m, the module's file) */
    const char *prog = module ? module : script;
    const char *stem = strrchr(prog, module ? '.' : '/');
    stem = stem ? stem + 1 : prog;
    size_t slen = strlen(stem);
    if (module == NULL && slen > 3 && strcmp(stem + slen - 3, ".py") == 0) {
        slen -= 3;
    }
    s->l->runtime.job_name = ar_printf(s->ar, "%.*s", (int)slen, stem);
    return main ? 0 : nomem(s);
}

/* ---- Megatron-LM / MindSpeed-LLM flags --------------------------------------------- */

typedef enum { F_BOOL, F_INT, F_INTS, F_STR } ftype_t;

static const struct flag {
    const char *name;
    ftype_t type;
    bool mindspeed; /* registered by MindSpeed-LLM, not by Megatron-LM */
} flags[] = {
    {"--profile", F_BOOL, false},
    {"--use-pytorch-profiler", F_BOOL, false},
    {"--profile-step-start", F_INT, false},
    {"--profile-step-end", F_INT, false},
    {"--profile-ranks", F_INTS, false},
    {"--pytorch-profiler-collect-shapes", F_BOOL, false},
    {"--pytorch-profiler-collect-callstack", F_BOOL, false},
    {"--profile-level", F_STR, true},
    {"--profile-export-type", F_STR, true},
    {"--profile-data-simplification", F_BOOL, true},
    {"--profile-with-cpu", F_BOOL, true},
    {"--profile-with-stack", F_BOOL, true},
    {"--profile-with-memory", F_BOOL, true},
    {"--profile-record-shapes", F_BOOL, true},
    {"--profile-save-path", F_STR, true},
    {NULL, F_BOOL, false},
};

/* Arguments MindSpeed-LLM (c77308a1) registers and Megatron-LM (d98e8a64,
 * core_v0.12.1) does not: a line using one runs on MindSpeed-LLM. */
static const char *const mindspeed_only[] = {"--tokenizer-name-or-path",
                                             "--padded-vocab-size",
                                             "--shared-expert-gate",
                                             "--use-fused-rotary-pos-emb",
                                             "--no-shared-storage",
                                             "--context-parallel-algo",
                                             NULL};

static bool int_ok(const char *t, long long *v)
{
    char *end;
    errno = 0;
    *v = strtoll(t, &end, 10);
    return *t != '\0' && *end == '\0' && errno == 0;
}

/* One flag's value(s) as a node; s->i past them. */
static int flag_value(scan_t *s, const struct flag *f, const char *arg, yt_node_t **out)
{
    const char *eq = strchr(arg, '=');
    long long v;
    if (f->type == F_BOOL) {
        *out = yt_scalar("true", 4, false, 0, 0);
        return *out ? 0 : nomem(s);
    }
    if (f->type == F_INTS) {
        yt_node_t *seq = yt_new(YT_SEQ, 0, 0), *x;
        bool one = eq != NULL;
        while (seq && (one || (s->i < s->argc &&
                               (s->argv[s->i][0] != '-' || int_ok(s->argv[s->i], &v))))) {
            const char *t = one ? eq + 1 : s->argv[s->i++];
            one = false;
            if (!int_ok(t, &v)) {
                yt_free(seq);
                return bad(s, "argument %s: invalid int value: '%s'", f->name, t);
            }
            if ((x = yt_scalar(t, strlen(t), false, 0, 0)) == NULL || yt_seq_push(seq, x) != 0) {
                yt_free(seq);
                return nomem(s);
            }
        }
        if (seq != NULL && seq->n == 0) {
            yt_free(seq);
            return bad(s, "argument %s: expected at least one argument", f->name);
        }
        *out = seq;
        return seq ? 0 : nomem(s);
    }
    if (eq == NULL && s->i >= s->argc) {
        return bad(s, "argument %s: expected one argument", f->name);
    }
    const char *t = eq ? eq + 1 : s->argv[s->i++];
    if (f->type == F_INT && !int_ok(t, &v)) {
        return bad(s, "argument %s: invalid int value: '%s'", f->name, t);
    }
    *out = yt_scalar(t, strlen(t), f->type == F_STR, 0, 0);
    return *out ? 0 : nomem(s);
}

static void set_origin(yt_node_t *n, const char *origin)
{
    n->origin = origin;
    for (size_t i = 0; i < n->n; i++) {
        set_origin(n->type == YT_SEQ ? n->items[i] : n->pairs[i].value, origin);
    }
}

/* The flags after the script as top-level keys (argparse: the last wins). */
static int megatron_flags(scan_t *s, bool *mindspeed)
{
    char name[64];
    yt_node_t *root = yt_new(YT_MAP, 0, 0);
    int rc = root ? 0 : nomem(s);
    s->l->flags = root;
    while (rc == 0 && s->i < s->argc) {
        int at = s->i;
        const char *arg = s->argv[s->i++];
        const struct flag *f = flags;
        opt_name(arg, name, sizeof(name));
        *mindspeed |= in(name, mindspeed_only);
        while (f->name != NULL && strcmp(f->name, name) != 0) {
            f++;
        }
        if (f->name == NULL) {
            continue;
        }
        yt_node_t *v = NULL;
        if ((rc = flag_value(s, f, arg, &v)) != 0) {
            break;
        }
        *mindspeed |= f->mindspeed;
        const char *origin = ar_strdup(s->ar, s->argv[at]);
        for (int k = at + 1; origin != NULL && k < s->i; k++) {
            origin = ar_printf(s->ar, "%s %s", origin, s->argv[k]);
        }
        set_origin(v, origin);
        char key[64];
        snprintf(key, sizeof(key), "%s", name + 2);
        for (char *p = key; *p; p++) {
            *p = *p == '-' ? '_' : *p;
        }
        yt_map_del(root, key);
        rc = origin == NULL ? nomem(s) : yt_map_put(root, key, 0, 0, v);
    }
    return rc == PROFD_ENOMEM ? nomem(s) : rc;
}

/* MindSpeed-LLM's FSDP2 trainer: `--section.key value...` after the YAML
 * (fsdp2/utils/arguments.py:_merge_yaml_into_cmd_args: the command line
 * wins). */
static int fsdp2_flags(scan_t *s)
{
    yt_node_t *root = yt_new(YT_MAP, 0, 0);
    s->l->flags = root;
    while (root != NULL && s->i < s->argc) {
        const char *arg = s->argv[s->i++];
        const char *dot = strchr(arg, '.'), *eq = strchr(arg, '=');
        if (strncmp(arg, "--", 2) != 0 || dot == NULL || (eq && eq < dot)) {
            continue;
        }
        char sec[64], key[128];
        snprintf(sec, sizeof(sec), "%.*s", (int)(dot - arg - 2), arg + 2);
        snprintf(key, sizeof(key), "%.*s", (int)(eq ? eq - dot - 1 : (long)strlen(dot + 1)),
                 dot + 1);
        yt_node_t *v = yt_new(YT_SEQ, 0, 0), *x;
        bool one = eq != NULL;
        while (v && (one || (s->i < s->argc && strncmp(s->argv[s->i], "--", 2) != 0))) {
            const char *t = one ? eq + 1 : s->argv[s->i++];
            one = false;
            if ((x = yt_scalar(t, strlen(t), false, 0, 0)) == NULL || yt_seq_push(v, x) != 0) {
                yt_free(v);
                return nomem(s);
            }
        }
        if (v == NULL || v->n == 0) {
            yt_free(v);
            continue;
        }
        if (v->n == 1) { /* one value: the value itself */
            yt_node_t *only = v->items[0];
            v->n = 0;
            yt_free(v);
            v = only;
        }
        set_origin(v, arg);
        yt_node_t *m = yt_map_get(root, sec);
        if (m == NULL && ((m = yt_new(YT_MAP, 0, 0)) == NULL || yt_map_put(root, sec, 0, 0, m))) {
            return nomem(s);
        }
        yt_map_del(m, key);
        if (yt_map_put(m, key, 0, 0, v) != 0) {
            return nomem(s);
        }
    }
    return root ? 0 : nomem(s);
}

static int flags_app(scan_t *s, const char *script)
{
    const char *b = base(script);
    if (strcmp(b, "train_fsdp2.py") == 0) {
        if (s->i >= s->argc || !(ends(s->argv[s->i], ".yaml") || ends(s->argv[s->i], ".yml"))) {
            return bad(s, "%s: expected the YAML config as the first argument", script);
        }
        s->l->yaml = s->argv[s->i++];
        s->l->kind = PD_LAUNCH_FSDP2;
        s->l->framework = PD_FW_MINDSPEED_FSDP2;
        return fsdp2_flags(s);
    }
    bool mindspeed = false;
    int rc = megatron_flags(s, &mindspeed);
    const char *slash = strrchr(script, '/');
    const char *dir = slash ? ar_printf(s->ar, "%.*s/mindspeed_llm", (int)(slash - script), script)
                            : "mindspeed_llm";
    mindspeed |= dir != NULL && is_dir(s, dir);
    s->l->kind = PD_LAUNCH_FLAGS;
    if (s->l->framework == PD_FW_AUTO) {
        s->l->framework = mindspeed ? PD_FW_MINDSPEED_MCORE : PD_FW_MEGATRON_LM;
    }
    return rc;
}

/* ---- entry ------------------------------------------------------------------------- */

static int file_form(scan_t *s)
{
    const char *f = s->argv[0];
    const char *slash = strrchr(f, '/');
    s->l->kind = PD_LAUNCH_HYDRA;
    s->l->what = f;
    s->l->search[s->l->n_search++] = slash ? ar_printf(s->ar, "%.*s", (int)(slash - f), f) : ".";
    s->l->config_name = slash ? slash + 1 : f;
    s->l->overrides = s->argv + 1;
    s->l->n_overrides = (size_t)(s->argc - 1);
    return s->l->search[0] ? 0 : nomem(s);
}

int pd_launch_parse(const pd_launch_args_t *a, int argc, char *const *argv, pd_launch_t *out,
                    char *err, size_t errlen)
{
    ar_block_t *ar = NULL;
    pd_launch_t l = {.framework = a->framework};
    scan_t s = {
        .a = a, .l = &l, .ar = &ar, .argc = argc, .argv = argv, .err = err, .errlen = errlen};
    const char *module = NULL, *script = NULL;
    int rc;
    if (argc < 1) {
        rc = bad(&s, "no launch line given");
    } else if (a->file_form || ends(argv[0], ".yaml") || ends(argv[0], ".yml")) {
        rc = file_form(&s);
    } else if ((rc = launchers(&s, &module, &script)) == 0) {
        l.what = module ? module : script;
        bool hydra = module != NULL;
        if (script != NULL) {
            const char *d, *cp, *cn;
            rc = program(&s, NULL, script, &d, &cp, &cn, &hydra);
        }
        if (rc == 0) {
            rc = hydra ? hydra_app(&s, module, script) : flags_app(&s, script);
        }
    }
    l.pypath = a->pypath;
    l.n_pypath = a->n_pypath;
    l.syspath = a->syspath;
    l.syspath_ctx = a->syspath_ctx;
    l.mem = ar;
    if (rc != 0) {
        pd_launch_free(&l);
        return rc;
    }
    *out = l;
    return 0;
}

void pd_launch_free(pd_launch_t *l)
{
    yt_free(l->flags);
    ar_free(l->mem);
    memset(l, 0, sizeof(*l));
}

/* ---- the configuration ---------------------------------------------------------------- */

/* The FSDP2 YAML, with the command line's values set over it. */
static int fsdp2_config(const pd_launch_t *l, const hy_loader_t *ld, hy_config_t *c, char *err,
                        size_t errlen)
{
    char *text = NULL;
    size_t len = 0;
    int rc = ld->read(ld->ctx, l->yaml, &text, &len);
    if (rc != 0) {
        snprintf(err, errlen, "%s: %s", l->yaml, profd_strerror(rc));
        return rc == PROFD_ENOENT ? PROFD_ECONFIG : rc;
    }
    ar_block_t *ar = NULL;
    yt_source_t *src = ar_alloc(&ar, sizeof(*src));
    if (src == NULL || (src->name = ar_strdup(&ar, l->yaml)) == NULL) {
        ar_free(ar);
        free(text);
        return PROFD_ENOMEM;
    }
    c->sources = ar;
    rc = yt_parse(src->name, text, len, &c->root, err, errlen);
    free(text);
    if (rc != 0) {
        return rc;
    }
    yt_set_source(c->root, src);
    if (c->root->type == YT_NULL) {
        c->root->type = YT_MAP;
    }
    yt_node_t *over = yt_copy(l->flags);
    if (over == NULL) {
        return PROFD_ENOMEM;
    }
    if (c->root->type != YT_MAP) {
        yt_free(over);
        snprintf(err, errlen, "%s: the YAML is not a mapping", l->yaml);
        return PROFD_ECONFIG;
    }
    return hy_merge(c->root, over);
}

int pd_launch_config(const pd_launch_t *l, const hy_loader_t *loader, oc_env_fn env, void *env_ctx,
                     hy_config_t *out, char *err, size_t errlen)
{
    hy_config_t c = {0};
    int rc = 0;
    if (l->kind == PD_LAUNCH_HYDRA) {
        hy_compose_args_t a = {.loader = loader,
                               .search = l->search,
                               .n_search = l->n_search,
                               .config_name = l->config_name,
                               .overrides = l->overrides,
                               .n_overrides = l->n_overrides,
                               .env = env,
                               .env_ctx = env_ctx,
                               .pypath = l->pypath,
                               .n_pypath = l->n_pypath,
                               .syspath = l->syspath,
                               .syspath_ctx = l->syspath_ctx,
                               .python = l->python ? l->python : "python3",
                               .runtime = l->runtime.now != 0 ? &l->runtime : NULL};
        return hy_compose(&a, out, err, errlen);
    }
    if ((c.primary = strdup(l->kind == PD_LAUNCH_FSDP2 ? l->yaml : l->what)) == NULL) {
        return PROFD_ENOMEM;
    }
    if (l->kind == PD_LAUNCH_FSDP2) {
        rc = fsdp2_config(l, loader, &c, err, errlen);
    } else if ((c.root = yt_copy(l->flags)) == NULL) {
        rc = PROFD_ENOMEM;
    }
    if (rc == PROFD_ENOMEM) {
        snprintf(err, errlen, "out of memory");
    }
    if (rc != 0) {
        yt_one_line(err);
        hy_config_free(&c);
        return rc;
    }
    *out = c;
    return 0;
}
