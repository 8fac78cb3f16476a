/*
 * profd: the per-node profiling daemon.
 * Start-up order: defaults, config file, flags, then the daemon context;
 * teardown in reverse. Exit 1 with a one-line reason on bad start-up config.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon.h"
#include "profd/client.h"

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

static int set_path(char *dst, size_t len, const char *src, const char *flag)
{
    if (strlen(src) >= len) {
        fprintf(stderr, "profd: %s: value too long\n", flag);
        return -1;
    }
    snprintf(dst, len, "%s", src);
    return 0;
}

int main(int argc, char **argv)
{
    enum {
        O_RUN_DIR = 256,
        O_WORKER_URL,
        O_CONTROL_URL,
        O_SPOOL,
        O_NODE,
        O_CHECK,
        O_COORD,
        O_COORD_LISTEN,
        O_COORD_URL,
        O_SHARED,
        O_CONTROL_REMOTE,
        O_INSECURE_LINKS
    };
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'},
        {"run-dir", required_argument, NULL, O_RUN_DIR},
        {"worker-url", required_argument, NULL, O_WORKER_URL},
        {"control-url", required_argument, NULL, O_CONTROL_URL},
        {"control-remote-url", required_argument, NULL, O_CONTROL_REMOTE},
        {"save-path", required_argument, NULL, 's'},
        {"spool", required_argument, NULL, O_SPOOL},
        {"node", required_argument, NULL, O_NODE},
        {"profile-config", required_argument, NULL, 'p'},
        {"log-level", required_argument, NULL, 'l'},
        {"check-config", no_argument, NULL, O_CHECK},
        {"coordinator", no_argument, NULL, O_COORD},
        {"coordinator-listen", required_argument, NULL, O_COORD_LISTEN},
        {"coordinator-url", required_argument, NULL, O_COORD_URL},
        {"shared-save-path", no_argument, NULL, O_SHARED},
        {"insecure-tcp-links", no_argument, NULL, O_INSECURE_LINKS},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    pd_config_t cfg;
    char err[1024];
    const char *config_file = NULL;
    bool check = false;
    int c, rc = 0;

    /* the config file is read first so that flags override it */
    for (int i = 1; i < argc - 1; i++) {
        if (strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "--config") == 0) {
            config_file = argv[i + 1];
        }
    }
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--config=", 9) == 0) {
            config_file = argv[i] + 9;
        } else if (strncmp(argv[i], "-c", 2) == 0 && argv[i][2] != '\0') {
            config_file = argv[i] + 2; /* -cFILE */
        }
    }
    pd_config_defaults(&cfg);
    /* known before the file is read, which refuses a tcp:// link without it */
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--insecure-tcp-links") == 0) {
            cfg.insecure_tcp_links = true;
        }
    }
    if (config_file && pd_config_load(&cfg, config_file, err, sizeof(err)) != 0) {
        fprintf(stderr, "profd: %s\n", err);
        return 1;
    }
    while ((c = getopt_long(argc, argv, "c:s:p:l:hV", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            break;
        case O_RUN_DIR:
            rc = set_path(cfg.run_dir, sizeof(cfg.run_dir), optarg, "--run-dir");
            break;
        case O_WORKER_URL:
            rc = set_path(cfg.worker_url, sizeof(cfg.worker_url), optarg, "--worker-url");
            break;
        case O_CONTROL_URL:
            rc = set_path(cfg.control_url, sizeof(cfg.control_url), optarg, "--control-url");
            break;
        case O_CONTROL_REMOTE:
            rc = set_path(cfg.control_remote_url, sizeof(cfg.control_remote_url), optarg,
                          "--control-remote-url");
            break;
        case 's':
            rc = set_path(cfg.save_path, sizeof(cfg.save_path), optarg, "--save-path");
            break;
        case O_SPOOL:
            rc = set_path(cfg.spool_dir, sizeof(cfg.spool_dir), optarg, "--spool");
            break;
        case O_NODE:
            rc = set_path(cfg.node_name, sizeof(cfg.node_name), optarg, "--node");
            break;
        case 'p':
            rc = set_path(cfg.profile_config, sizeof(cfg.profile_config), optarg,
                          "--profile-config");
            break;
        case 'l':
            if ((cfg.log_level = pd_log_level_parse(optarg)) < 0) {
                fprintf(stderr,
                        "profd: --log-level: expected error, warn, info or debug, found "
                        "'%s'\n",
                        optarg);
                return 1;
            }
            break;
        case O_CHECK:
            check = true;
            break;
        case O_COORD:
            cfg.coordinator = true;
            break;
        case O_COORD_LISTEN:
            rc = set_path(cfg.coordinator_listen, sizeof(cfg.coordinator_listen), optarg,
                          "--coordinator-listen");
            cfg.coordinator = true;
            break;
        case O_COORD_URL:
            rc = set_path(cfg.coordinator_url, sizeof(cfg.coordinator_url), optarg,
                          "--coordinator-url");
            break;
        case O_SHARED:
            cfg.shared_save_path = true;
            break;
        case O_INSECURE_LINKS:
            cfg.insecure_tcp_links = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case 'V':
            printf("profd %s\n", PROFD_VERSION_STRING);
            return 0;
        default:
            usage(stderr);
            return 1;
        }
        if (rc != 0) {
            return 1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "profd: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 1;
    }
    pd_config_finish(&cfg);
    if (check) {
        printf("run_dir: %s\nworker_url: %s\ncontrol_url: %s\nsave_path: %s\nspool_dir: %s\n",
               cfg.run_dir, cfg.worker_url, cfg.control_url, cfg.save_path, cfg.spool_dir);
        if (cfg.control_remote_url[0]) {
            printf("control_remote_url: %s\n", cfg.control_remote_url);
        }
        if (pd_config_check_control(&cfg, err, sizeof(err)) != 0 ||
            pd_config_check_links(&cfg, err, sizeof(err)) != 0) {
            fprintf(stderr, "profd: %s\n", err);
            return 1;
        }
        return 0;
    }

    pd_daemon_t *d = calloc(1, sizeof(*d));
    if (d == NULL) {
        fprintf(stderr, "profd: out of memory\n");
        return 1;
    }
    if (pd_daemon_init(d, &cfg, err, sizeof(err)) != 0) {
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
    rc = pd_daemon_fini(d) == 0 ? 0 : 1;
    free(d);
    return rc;
}
