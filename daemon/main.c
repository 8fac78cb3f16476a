// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * profd: the per-node profiling daemon.
 * Start-up order: defaults, config file, flags, then the daemon context;
 * teardown in reverse. Exit 1 with a one-line reason on bad start-up config.
 */
#include <errno.h>
#include <getopt.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon.h"
#include "profd/version.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: profd [options]\n"
            "\n"
            "The per-node profd daemon: receives step events from training workers,\n"
            "plans profiling windows, and gathers captures into one save_path tree.\n"
            "\n"
            "options:\n"
            "  -c, --config FILE          daemon settings (YAML; see deploy/profd.yaml)\n"
            "      --run-dir DIR          folder of the sockets (default: $PROFD_RUN_DIR if\n"
            "                             absolute, else /run/profd if writable, else\n"
            "                             /tmp/profd-UID)\n"
            "      --worker-url URL       worker endpoint (default ipc://RUN_DIR/worker.sock)\n"
            "      --control-url URL      control endpoint (default ipc://RUN_DIR/control.sock)\n"
            "      --control-remote-url URL  a second control endpoint, tls+tcp://HOST:PORT\n"
            "                             (client certificates signed by tls.ca_file)\n"
            "  -s, --save-path DIR        where gathered windows land (default outputs/profile)\n"
            "      --spool DIR            where workers write captures (default SAVE_PATH/.spool)\n"
            "      --node NAME            this node's name (default: the host name)\n"
            "  -p, --profile-config FILE  verl / MindSpeed / Megatron YAML to apply at start\n"
            "                             (and again on SIGHUP)\n"
            "  -l, --log-level LEVEL      error, warn, info (default) or debug\n"
            "      --metrics URL          Prometheus metrics at URL/metrics, http://HOST:PORT\n"
            "                             (listen.metrics; default off)\n"
            "\n"
            "many nodes:\n"
            "      --coordinator          plan windows for node daemons across hosts\n"
            "      --coordinator-listen URL  node endpoint of the coordinator\n"
            "                             (tls+tcp://0.0.0.0:7710 with the tls files)\n"
            "      --coordinator-url URL  run as a node daemon of this coordinator\n"
            "                             (tls+tcp://HOST:7710 with the tls files)\n"
            "      --insecure-tcp-links   allow plain tcp:// for the two above: the links are\n"
            "                             unauthenticated and unencrypted\n"
            "                             (security.insecure_tcp_links)\n"
            "      --shared-save-path     node: save_path is shared storage every node mounts\n"
            "                             (write captures there; send only the manifest data)\n"
            "      --check-config         load the settings, print them, and exit\n"
            "  -h, --help                 this help\n"
            "  -V, --version              print the version\n"
            "\n"
            "Signals: SIGINT/SIGTERM stop cleanly, SIGHUP reloads --profile-config.\n"
            "Drive it with profctl (profctl --help).\n");
}

/* systemd readiness (sd_notify protocol): one datagram to $NOTIFY_SOCKET. */
static void notify_ready(void)
{
    const char *path = getenv("NOTIFY_SOCKET");
    struct sockaddr_un sa;
    if (path == NULL || (path[0] != '/' && path[0] != '@') || strlen(path) >= sizeof(sa.sun_path)) {
        return;
    }
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, strlen(path));
    if (sa.sun_path[0] == '@') {
        sa.sun_path[0] = '\0'; /* abstract namespace */
    }
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
    static const char msg[] = "READY=1\nSTATUS=serving";
    (void)sendto(fd, msg, sizeof(msg) - 1, 0, (struct sockaddr *)&sa, len);
    close(fd);
}

/* Options that are not settings keys; every key's flag comes from the
 * key table (pd_config_flag_at). */
enum { O_CONFIG = 'c', O_HELP = 'h', O_VERSION = 'V', O_CHECK = 256, O_COORD, O_KEY_BASE };
#define MAX_OPTS 64

/* getopt's table: ours, then one per settings flag (val = O_KEY_BASE + i). */
static void options(struct option *o, char *shorts, size_t slen)
{
    static const struct option own[] = {
        {"config", required_argument, NULL, O_CONFIG}, {"check-config", no_argument, NULL, O_CHECK},
        {"coordinator", no_argument, NULL, O_COORD},   {"help", no_argument, NULL, O_HELP},
        {"version", no_argument, NULL, O_VERSION},
    };
    const char *flag, *key;
    char sh;
    bool arg;
    size_t n = 0, k = (size_t)snprintf(shorts, slen, "c:hV");
    for (; n < sizeof(own) / sizeof(own[0]); n++) {
        o[n] = own[n];
    }
    for (size_t i = 0; n < MAX_OPTS - 1 && pd_config_flag_at(i, &flag, &sh, &arg, &key); i++, n++) {
        o[n] =
            (struct option){flag, arg ? required_argument : no_argument, NULL, O_KEY_BASE + (int)i};
        if (sh && k + 3 < slen) {
            shorts[k++] = sh;
            if (arg) {
                shorts[k++] = ':';
            }
            shorts[k] = '\0';
        }
    }
    o[n] = (struct option){NULL, 0, NULL, 0};
}

/* The settings flag of a one-letter option. */
static int short_key(int c)
{
    const char *flag, *key;
    char sh;
    bool arg;
    for (size_t i = 0; pd_config_flag_at(i, &flag, &sh, &arg, &key); i++) {
        if (sh == c) {
            return O_KEY_BASE + (int)i;
        }
    }
    return -1;
}

static int print_config(const pd_config_t *cfg)
{
    char err[1024];
    printf("run_dir: %s\nworker_url: %s\ncontrol_url: %s\nsave_path: %s\nspool_dir: %s\n",
           cfg->run_dir, cfg->worker_url, cfg->control_url, cfg->save_path, cfg->spool_dir);
    if (cfg->control_remote_url[0]) {
        printf("control_remote_url: %s\n", cfg->control_remote_url);
    }
    if (pd_daemon_check(cfg, err, sizeof(err)) != 0) {
        fprintf(stderr, "profd: %s\n", err);
        return 1;
    }
    return 0;
}

static int run(const pd_config_t *cfg)
{
    char err[1024];
    pd_daemon_t *d = calloc(1, sizeof(*d));
    if (d == NULL) {
        fprintf(stderr, "profd: out of memory\n");
        return 1;
    }
    /* a file-size limit (RLIMIT_FSIZE) fails a write with EFBIG, which the
     * daemon handles like a full disk (the journal holds its records and
     * the replies that wait for them), instead of killing it */
    signal(SIGXFSZ, SIG_IGN);
    if (pd_daemon_init(d, cfg, err, sizeof(err)) != 0) {
        fprintf(stderr, "profd: %s\n", err);
        free(d);
        return 1;
    }
    if (pd_daemon_signals(d) != 0) {
        fprintf(stderr, "profd: cannot install signal handlers\n");
        pd_daemon_fini(d);
        free(d);
        return 1;
    }
    notify_ready();
    d->stop_timeout_ms = 15000;
    pd_daemon_run(d);
    int rc = pd_daemon_fini(d) == 0 ? 0 : 1;
    free(d);
    return rc;
}

/*
 * A window's documents (its manifest record and text, steps.json, the
 * report) are built, written on the thread pool and freed: megabytes at
 * 16,384 ranks. glibc's default raises its mmap threshold after the first
 * such free, so the next ones land in heaps that keep their pages, one
 * heap per thread that touched them (up to 8 per core): the peak grew with
 * every window (docs/memory.md). A fixed threshold gives large blocks back
 * when they are freed, two arenas bound the heaps. 4 MiB, not lower: the
 * 1 MiB buffers of a gather's chunks stay in the heap (at 256 KiB each was
 * mapped and faulted in again: 1.1-1.3x tar|socat's CPU per GiB across
 * nodes against 0.83-0.91x, with the same peak at 4,096 ranks).
 * GLIBC_TUNABLES, when set, is the operator's to decide.
 */
static void tune_malloc(void)
{
#ifdef __GLIBC__
    if (getenv("GLIBC_TUNABLES") == NULL) {
        mallopt(M_MMAP_THRESHOLD, 4 * 1024 * 1024);
        mallopt(M_ARENA_MAX, 2);
    }
#endif
}

int main(int argc, char **argv)
{
    struct option opts[MAX_OPTS];
    char shorts[64], err[1024];
    pd_config_arg_t args[MAX_OPTS];
    size_t nargs = 0;
    const char *config_file = NULL;
    bool check = false, coordinator = false;
    int c;

    tune_malloc();
    options(opts, shorts, sizeof(shorts));
    /* one pass: flags are kept, and applied over the file by the loader */
    while ((c = getopt_long(argc, argv, shorts, opts, NULL)) != -1) {
        int key = c >= O_KEY_BASE ? c : short_key(c);
        if (key >= O_KEY_BASE && nargs < MAX_OPTS) {
            const char *flag, *name;
            char sh;
            bool arg;
            pd_config_flag_at((size_t)(key - O_KEY_BASE), &flag, &sh, &arg, &name);
            args[nargs++] = (pd_config_arg_t){flag, arg ? optarg : NULL};
            continue;
        }
        switch (c) {
        case O_CONFIG:
            config_file = optarg;
            break;
        case O_CHECK:
            check = true;
            break;
        case O_COORD:
            coordinator = true;
            break;
        case O_HELP:
            usage(stdout);
            return 0;
        case O_VERSION:
            printf("profd %s\n", PROFD_VERSION_STRING);
            return 0;
        default:
            usage(stderr);
            return 1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "profd: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 1;
    }
    pd_config_t cfg;
    pd_config_defaults(&cfg);
    if (pd_config_load_args(&cfg, config_file, args, nargs, err, sizeof(err)) != 0) {
        fprintf(stderr, "profd: %s\n", err);
        return 1;
    }
    cfg.coordinator = coordinator;
    pd_config_finish(&cfg);
    return check ? print_config(&cfg) : run(&cfg);
}
