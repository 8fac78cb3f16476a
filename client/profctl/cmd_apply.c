// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * profctl apply: a training config's profiling sections as windows. The
 * config is composed here, on the caller's side (Hydra defaults lists, the
 * caller's files and environment), read by the same library the daemon
 * links, and only the resulting window requests are sent: the daemon never
 * reads the user's files.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "compose.h"
#include "launch.h"
#include "profcfg.h"
#include "profctl.h"

#define MAX_PYPATH 64

typedef struct apply_opts {
    const char *job;
    bool dry_run;
    pd_framework_t framework;
    const char *pypath[MAX_PYPATH];
    size_t n_pypath;
    bool launch; /* `--`: a launch line follows */
} apply_opts_t;

static const char *env_get(void *ctx, const char *name)
{
    (void)ctx;
    return getenv(name);
}

static int framework(const char *s, pd_framework_t *fw)
{
    static const struct {
        const char *name;
        pd_framework_t fw;
    } names[] = {{"auto", PD_FW_AUTO},
                 {"megatron", PD_FW_MEGATRON_LM},
                 {"mindspeed", PD_FW_MINDSPEED_MCORE},
                 {"mindspeed-fsdp2", PD_FW_MINDSPEED_FSDP2}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcmp(s, names[i].name) == 0) {
            *fw = names[i].fw;
            return 0;
        }
    }
    return -1;
}

/* The caller's Python path: the working folder, $PYTHONPATH, then the
 * --python-path folders. */
static void python_path(apply_opts_t *o, char *buf)
{
    o->pypath[o->n_pypath++] = ".";
    for (char *p = strtok(buf, ":"); p != NULL && o->n_pypath < MAX_PYPATH; p = strtok(NULL, ":")) {
        o->pypath[o->n_pypath++] = p;
    }
}

static int options(ctl_t *c, int argc, char **argv, apply_opts_t *o, char **extra)
{
    enum { O_DRY = 256, O_FW, O_PY };
    static const struct option opts[] = {{"job", required_argument, NULL, 'j'},
                                         {"dry-run", no_argument, NULL, O_DRY},
                                         {"json", no_argument, NULL, 'J'},
                                         {"framework", required_argument, NULL, O_FW},
                                         {"python-path", required_argument, NULL, O_PY},
                                         {"help", no_argument, NULL, 'h'},
                                         {0, 0, 0, 0}};
    int ch, nextra = 0;
    while ((ch = getopt_long(argc, argv, "+j:h", opts, NULL)) != -1) {
        if (ch == 'h') {
            return ctl_help(c) - 1;
        }
        if (ch == 'j') {
            o->job = optarg;
        } else if (ch == O_DRY) {
            o->dry_run = true;
        } else if (ch == 'J') {
            c->json = true;
        } else if (ch == O_FW && framework(optarg, &o->framework) == 0) {
            continue;
        } else if (ch == O_PY && nextra < MAX_PYPATH / 2) {
            extra[nextra++] = optarg;
        } else {
            return ctl_usage(c, ch == O_FW ? "apply: --framework: expected auto, megatron, "
                                             "mindspeed or mindspeed-fsdp2"
                                           : "apply: unknown option");
        }
    }
    if (optind >= argc) {
        return ctl_usage(c, "apply: give a YAML file, or -- and a launch line");
    }
    o->launch = optind > 1 && strcmp(argv[optind - 1], "--") == 0;
    extra[nextra] = NULL;
    return 0;
}

/* Compose and read: the requests (*cfg) and what names the config. */
static int read_config(const apply_opts_t *o, int argc, char **argv, pd_profcfg_t *cfg, char **name,
                       const char **fwname)
{
    char err[1024];
    ctl_syspath_t sp = {0};
    pd_launch_args_t la = {.loader = &hy_loader_fs,
                           .pypath = o->pypath,
                           .n_pypath = o->n_pypath,
                           .framework = o->framework,
                           .file_form = !o->launch,
                           .syspath = ctl_syspath,
                           .syspath_ctx = &sp};
    pd_launch_t l;
    hy_config_t h;
    int rc = pd_launch_parse(&la, argc, argv, &l, err, sizeof(err));
    if (rc != 0) {
        ctl_syspath_free(&sp);
        return ctl_die(1, "%s", err);
    }
    char cwd[4096];
    l.runtime.cwd = getcwd(cwd, sizeof(cwd));
    l.runtime.now = (int64_t)time(NULL);
    rc = pd_launch_config(&l, &hy_loader_fs, env_get, NULL, &h, err, sizeof(err));
    if (rc == 0) {
        pd_profcfg_opts_t po = {.framework = l.framework,
                                .env = env_get,
                                .composed = true,
                                .resolvers = hy_hydra_resolvers,
                                .resolvers_ctx = &h.hydra};
        rc = pd_profcfg_read(h.primary, h.root, &po, cfg, err, sizeof(err));
        for (size_t i = 0; rc == 0 && i < h.n_warnings; i++) {
            fprintf(stderr, "profctl: warning: %s\n", h.warnings[i]);
        }
        *name = rc == 0 ? strdup(h.primary) : NULL;
        *fwname = pd_framework_name(l.framework);
        hy_config_free(&h);
    }
    pd_launch_free(&l);
    ctl_syspath_free(&sp);
    if (rc != 0) {
        return ctl_die(1, "%s", err);
    }
    return 0;
}

static int send(ctl_t *c, const apply_opts_t *o, const char *name, pd_profcfg_t *cfg)
{
    pp_msg_t req;
    pp_msg_init(&req, PP_T_apply);
    req.u.apply.file = (char *)name;
    req.u.apply.job = (char *)o->job;
    req.u.apply.specs = cfg->specs;
    req.u.apply.specs_n = cfg->n_specs;
    req.u.apply.warnings = cfg->warnings;
    req.u.apply.warnings_n = cfg->n_warnings;
    return ctl_call_started(c, &req, "applied");
}

static int run_apply(ctl_t *c, int argc, char **argv)
{
    apply_opts_t o = {0};
    char *extra[MAX_PYPATH / 2 + 1] = {NULL}, *name = NULL;
    const char *fwname = NULL;
    pd_profcfg_t cfg;
    const char *env = getenv("PYTHONPATH");
    char *pp = strdup(env ? env : "");
    int rv = pp ? options(c, argc, argv, &o, extra) : ctl_die(1, "out of memory");
    if (rv != 0) {
        free(pp);
        return rv < 0 ? 0 : rv;
    }
    python_path(&o, pp);
    for (size_t i = 0; extra[i] != NULL && o.n_pypath < MAX_PYPATH; i++) {
        o.pypath[o.n_pypath++] = extra[i];
    }
    rv = read_config(&o, argc - optind, argv + optind, &cfg, &name, &fwname);
    if (rv == 0 && o.dry_run) {
        rv = ctl_dry_run(c, name, fwname, &cfg);
    } else if (rv == 0 && cfg.n_specs == 0) {
        for (size_t i = 0; i < cfg.n_warnings; i++) {
            fprintf(stderr, "profctl: warning: %s\n", cfg.warnings[i]);
        }
        printf("no window: %s\n", cfg.no_window ? cfg.no_window : "");
    } else if (rv == 0) {
        rv = send(c, &o, name, &cfg);
    }
    if (name != NULL) {
        pd_profcfg_free(&cfg);
    }
    free(name);
    free(pp);
    return rv;
}

const ctl_command_t ctl_cmd_apply = {
    "apply", run_apply,
    "open the windows a verl / MindSpeed / Megatron config or launch line asks for",
    "usage: profctl apply [OPTIONS] FILE.yaml [OVERRIDE ...]\n"
    "       profctl apply [OPTIONS] -- LAUNCH LINE ...\n"
    "\n"
    "Read the profiling settings of a training configuration as the framework does and\n"
    "open the windows it would profile: verl's global_profiler and per-role profiler\n"
    "sections (and the legacy schema), MindSpeed-LLM's training.profile_* keys and\n"
    "its --profile flags, Megatron-LM's --profile flags.\n"
    "\n"
    "FILE.yaml is a Hydra primary config: its defaults list is composed from its folder\n"
    "(config groups, packages, _self_, optional, override), then the overrides are\n"
    "applied with Hydra's rules: key=value, +key=value, ++key=value, ~key, and group\n"
    "choices such as model_engine=megatron, +group=option, ~group.\n"
    "\n"
    "After --, the launch line itself, as the job is started: launchers (python3,\n"
    "python -m torch.distributed.run, torchrun, uv run, nsys profile) are skipped; a\n"
    "Hydra program (python3 -m verl.trainer.main_ppo) takes --config-path/-cp,\n"
    "--config-name/-cn, --config-dir/-cd and its overrides, its config folder found\n"
    "beside the module on the Python path; train_fsdp2.py FILE.yaml --section.key V is\n"
    "MindSpeed-LLM's FSDP2 trainer; any other script's --profile, --profile-step-start,\n"
    "--profile-step-end, --profile-ranks, --profile-level... flags are Megatron-LM's or\n"
    "MindSpeed-LLM's.\n"
    "\n"
    "Everything is read here, with the caller's files and environment\n"
    "(${oc.env:VAR,default}); only the window requests are sent to the daemon.\n"
    "\n"
    "  --dry-run            print the windows instead of opening them (no daemon)\n"
    "  --json               with --dry-run: the windows as JSON (first_step, last_step,\n"
    "                       tool, mode, roles with ranks, replica_ranks and settings)\n"
    "  --job J              the job the windows belong to (default: the one every rank\n"
    "                       shares)\n"
    "  --framework F        whose flags a launch line carries: auto (default: from the\n"
    "                       flags and folders), megatron, mindspeed, mindspeed-fsdp2\n"
    "  --python-path DIR    look for -m MODULE in DIR too (after the working folder and\n"
    "                       $PYTHONPATH, before the launch line's interpreter's own\n"
    "                       sys.path); may be repeated\n"
    "  --help               this help\n"
    "\n"
    "exit status: 0 windows opened or printed, or \"no window: REASON\" for a config that\n"
    "profiles nothing; 1 the config is refused (the framework's reason, with\n"
    "file:line:column and the defaults chain) or the daemon refused; 2 usage error\n"};
