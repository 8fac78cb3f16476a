// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * profctl: the control CLI of profd. Talks to the control socket with the
 * same codec as the daemon (proto/), prints human tables by default and the
 * reply documents with --json. Exit status: 0 success; 1 error (one line on
 * stderr); 2 usage error; 3 (wait) window done but not every capture
 * complete.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profctl.h"
#include "profd/client.h"

static const ctl_command_t *const commands[] = {
    &ctl_cmd_status, &ctl_cmd_windows, &ctl_cmd_start,  &ctl_cmd_stop,
    &ctl_cmd_wait,   &ctl_cmd_apply,   &ctl_cmd_top,    &ctl_cmd_report,
    &ctl_cmd_merge,  &ctl_cmd_watch,   &ctl_cmd_doctor,
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
    fprintf(out, "usage: profctl [--url URL] [--json] [--timeout S] COMMAND [ARGS]\n"
                 "\n"
                 "commands (profctl COMMAND --help for each):\n");
    for (size_t i = 0; i < NCOMMANDS; i++) {
        fprintf(out, "  %-9s %s\n", commands[i]->name, commands[i]->summary);
    }
    fprintf(out,
            "\n"
            "options:\n"
            "  -u, --url URL     control endpoint (default $PROFD_CONTROL_URL, else\n"
            "                    ipc://RUN_DIR/control.sock: $PROFD_RUN_DIR if absolute,\n"
            "                    else /run/profd or /tmp/profd-UID, whichever holds it)\n"
            "  -j, --json        print the reply documents as JSON\n"
            "  -t, --timeout S   request timeout in seconds (default 10)\n"
            "      --tls-ca FILE           tls+tcp:// URLs: CA certificate the daemon's\n"
            "                              certificate must chain to ($PROFD_TLS_CA)\n"
            "      --tls-cert FILE         this client's certificate, signed by the CA the\n"
            "                              daemon trusts ($PROFD_TLS_CERT)\n"
            "      --tls-key FILE          its private key (default: in --tls-cert;\n"
            "                              $PROFD_TLS_KEY)\n"
            "      --tls-server-name NAME  DNS name the daemon's certificate must carry\n"
            "                              (default: the URL's host; $PROFD_TLS_SERVER_NAME)\n"
            "  -h, --help        this help\n"
            "  -V, --version     print the version\n"
            "\n"
            "exit status: 0 success, 1 error, 2 usage, 3 window done with incomplete captures\n");
}

/* The TLS files, in the order of their options O_TLS_CA.. and variables
 * tls_env[]. */
enum { O_TLS_CA = 256, O_TLS_CERT, O_TLS_KEY, O_TLS_NAME };
static const char *const tls_env[] = {"PROFD_TLS_CA", "PROFD_TLS_CERT", "PROFD_TLS_KEY",
                                      "PROFD_TLS_SERVER_NAME"};

static const char **tls_file(ctl_t *c, int i)
{
    const char **files[] = {&c->tls.ca, &c->tls.cert, &c->tls.key, &c->tls.server_name};
    return files[i];
}

/* The options before the command: 0 to go on, else the exit status + 1. */
static int global_options(ctl_t *c, int argc, char **argv)
{
    static const struct option o[] = {
        {"url", required_argument, NULL, 'u'},
        {"json", no_argument, NULL, 'j'},
        {"timeout", required_argument, NULL, 't'},
        {"tls-ca", required_argument, NULL, O_TLS_CA},
        {"tls-cert", required_argument, NULL, O_TLS_CERT},
        {"tls-key", required_argument, NULL, O_TLS_KEY},
        {"tls-server-name", required_argument, NULL, O_TLS_NAME},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {0, 0, 0, 0},
    };
    int ch;
    int64_t t;
    while ((ch = getopt_long(argc, argv, "+u:jt:hV", o, NULL)) != -1) {
        switch (ch) {
        case 'u':
            snprintf(c->url, sizeof(c->url), "%s", optarg);
            break;
        case 'j':
            c->json = true;
            break;
        case O_TLS_CA:
        case O_TLS_CERT:
        case O_TLS_KEY:
        case O_TLS_NAME:
            *tls_file(c, ch - O_TLS_CA) = optarg;
            break;
        case 't':
            if (ctl_parse_i64(optarg, &t) != 0 || t < 1) {
                return ctl_usage(NULL, "--timeout expects a positive number of seconds") + 1;
            }
            c->timeout_ms = (int)(t * 1000);
            c->timeout_set = true;
            break;
        case 'h':
            usage(stdout);
            return 1;
        case 'V':
            printf("profctl %s\n", PROFD_VERSION_STRING);
            return 1;
        default:
            usage(stderr);
            return 3;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    ctl_t c;
    memset(&c, 0, sizeof(c));
    c.timeout_ms = 10000;
    for (int i = 0; i < (int)(sizeof(tls_env) / sizeof(tls_env[0])); i++) {
        *tls_file(&c, i) = getenv(tls_env[i]);
    }
    int rv = global_options(&c, argc, argv);
    if (rv != 0) {
        return rv - 1;
    }
    if (optind >= argc) {
        usage(stderr);
        return ctl_usage(NULL, "no command given");
    }
    const char *name = argv[optind];
    if (strcmp(name, "help") == 0) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < NCOMMANDS && c.cmd == NULL; i++) {
        if (strcmp(commands[i]->name, name) == 0) {
            c.cmd = commands[i];
        }
    }
    if (c.cmd == NULL) {
        return ctl_usage(NULL, "unknown command '%s'", name);
    }
    if (c.url[0] == '\0') {
        ctl_default_url(c.url, sizeof(c.url));
    }
    int sub_argc = argc - optind;
    char **sub_argv = argv + optind;
    optind = 0; /* each command parses its own options (0: full reset in glibc) */
    rv = c.cmd->run(&c, sub_argc, sub_argv);
    ctl_close(&c);
    return rv;
}
