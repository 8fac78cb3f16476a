/* profctl apply: a training config's profiling sections as windows. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profcfg.h"
#include "profctl.h"

/* The whole file, NUL-terminated; -1 with errno on failure. */
static int read_file(const char *path, char **out, size_t *len)
{
    FILE *f = fopen(path, "r");
    char *buf = NULL;
    size_t cap = 0, n = 0, k;
    if (f == NULL) {
        return -1;
    }
    do {
        if (n + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 16384;
            char *v = cap > PP_MAX_MSG_DEFAULT ? NULL : realloc(buf, cap);
            if (v == NULL) {
                free(buf);
                fclose(f);
                errno = cap > PP_MAX_MSG_DEFAULT ? EFBIG : ENOMEM;
                return -1;
            }
            buf = v;
        }
        k = fread(buf + n, 1, 4096, f);
        n += k;
    } while (k > 0);
    fclose(f);
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

static int run_apply(ctl_t *c, int argc, char **argv)
{
    static const struct option o[] = {
        {"job", required_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
    pp_msg_t req, rep;
    pd_profcfg_t cfg;
    char *text, err[512];
    size_t len;
    int ch;
    pp_msg_init(&req, PP_T_apply);
    while ((ch = getopt_long(argc, argv, "+j:h", o, NULL)) != -1) {
        if (ch == 'h') {
            return ctl_help(c);
        }
        if (ch != 'j') {
            return ctl_usage(c, "apply: unknown option");
        }
        req.u.apply.job = optarg;
    }
    if (optind >= argc) {
        return ctl_usage(c, "apply: give a YAML file");
    }
    const char *file = argv[optind++];
    if (read_file(file, &text, &len) != 0) {
        return ctl_die(1, "cannot read %s: %s", file, strerror(errno));
    }
    if (strlen(text) != len) {
        free(text);
        return ctl_die(1, "%s is not a text file", file);
    }
    char *const *overrides = argv + optind;
    size_t n_overrides = (size_t)(argc - optind);
    /* read here first, by the parser the daemon uses: a bad file is named
     * at its line without a round trip */
    if (pd_profcfg_load(file, text, len, overrides, n_overrides, &cfg, err, sizeof(err)) != 0) {
        free(text);
        return ctl_die(1, "%s", err);
    }
    pd_profcfg_free(&cfg);
    req.u.apply.file = (char *)file;
    req.u.apply.yaml = text;
    req.u.apply.overrides = (char **)overrides;
    req.u.apply.overrides_n = n_overrides;
    int rv = ctl_call(c, &req, &rep);
    free(text);
    if (rv != 0) {
        return 1;
    }
    if (c->json) {
        ctl_print_json(&rep);
    } else {
        ctl_print_started(&rep.u.started, "applied");
    }
    pp_msg_free(&rep);
    return 0;
}

const ctl_command_t ctl_cmd_apply = {
    "apply", run_apply, "load a verl / MindSpeed / Megatron config with Hydra-style overrides",
    "usage: profctl apply FILE.yaml [key=value ...] [--job J]\n"
    "\n"
    "Read the profiling sections of a training config as users write them (verl's\n"
    "global_profiler and per-role profiler sections, the legacy schema, MindSpeed's\n"
    "training.profile_*, Megatron's profile_step_start/end/ranks), with Hydra-style\n"
    "overrides applied first (key=value, +key=value to add, ++key=value, ~key), and open\n"
    "the windows it asks for. The file is checked here, by the same reader the daemon\n"
    "uses, before it is sent.\n"
    "\n"
    "  --job J    the job the windows belong to (default: the one every rank shares)\n"
    "  --help     this help\n"};
