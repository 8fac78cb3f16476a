// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Daemon settings: built-in defaults, then `profd --config FILE` (YAML), then
 * command-line flags. The result is immutable once the daemon runs.
 * Every key is listed once in the key table of config.c and documented in
 * deploy/profd.yaml.
 */
#ifndef PD_CONFIG_H
#define PD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PD_PATH_MAX 1024

typedef struct pd_config {
    /* where */
    char run_dir[PD_PATH_MAX];            /* sockets; see pd_config_defaults() */
    char worker_url[PD_PATH_MAX];         /* worker endpoint; "" = ipc://<run_dir>/worker.sock */
    char control_url[PD_PATH_MAX];        /* control endpoint; "" = ipc://<run_dir>/control.sock */
    char control_remote_url[PD_PATH_MAX]; /* second control endpoint, tls+tcp://; "" = none */
    char save_path[PD_PATH_MAX];          /* gathered tree; default "outputs/profile" */
    char spool_dir[PD_PATH_MAX];          /* "" = <save_path>/.spool (same file system) */
    char node_name[256];                  /* "" = hostname */

    /* coordination of several node daemons */
    char coordinator_url[PD_PATH_MAX];    /* node daemon: dial this coordinator; "" = none */
    char coordinator_listen[PD_PATH_MAX]; /* coordinator: accept node daemons here; "" = no */

    /* limits */
    int64_t max_msg_bytes;            /* largest accepted message */
    int64_t max_clients;              /* registered ranks */
    int64_t max_clients_per_peer;     /* registered ranks of one uid / certificate / connection */
    int64_t max_connections;          /* per listener (metrics included) */
    int64_t max_connections_per_peer; /* per listener, of one uid / address; 0 = none */
    int64_t request_memory;           /* what the open connections may hold of requests; 0 = none */
    int64_t max_windows;              /* windows not yet finished */
    int64_t window_byte_budget;       /* bytes per window; 0 = unlimited */
    int64_t min_free_bytes;           /* free-disk floor on save_path; 0 = none */
    int64_t client_timeout_ms;        /* silence after which a rank is lost */
    int64_t watch_hold_ms;            /* longest a plan long-poll is held */
    int64_t align_margin_ms;          /* extra margin of on-demand windows */
    int64_t control_rate;             /* control requests per second per connection; 0 = no limit */
    int64_t worker_rate;              /* worker requests per second per connection; 0 = no limit */
    int64_t max_capture_files;        /* files (and folders) in one capture */
    char checksum[16];                /* "xxh64" or "none" */

    /* retention of the save_path tree (node/retention.c) */
    int64_t retention_max_age_hours; /* finished windows older are pruned; 0 = no limit */
    int64_t retention_max_bytes;     /* the windows together at most; 0 = no absolute limit */
    double retention_max_fraction;   /* ... at most this part of the file system; 0 = none */

    /* the after-window hook (node/hook.c) */
    char hook_command[4096]; /* run by /bin/sh -c once a manifest is written; "" = none */
    char hook_user[64];      /* run as this user; "" = the daemon's (refused as root) */
    int64_t hook_timeout_ms; /* killed (its process group) after this long */

    /* security */
    int64_t socket_mode;    /* ipc socket permissions (octal 0660) */
    char socket_group[64];  /* group owning the sockets; "" = unchanged */
    int64_t allow_uids[16]; /* mutating control requests; own uid and root always */
    size_t n_allow_uids;
    int64_t allow_gids[16];
    size_t n_allow_gids;
    bool insecure_tcp_control; /* plain tcp:// control endpoints allowed, and trusted */
    bool insecure_tcp_links;   /* plain tcp:// coordinator.url / coordinator.listen allowed */
    bool shared_jobs;          /* ranks of one job may come from several uids */
    bool job_certificates;   /* tls+tcp:// workers: a certificate's CN is the job it may register */
    bool writable_save_path; /* a save_path others may write to is accepted */
    char tls_cert_file[PD_PATH_MAX]; /* for tls+tcp:// endpoints */
    char tls_key_file[PD_PATH_MAX];
    char tls_ca_file[PD_PATH_MAX]; /* peers must present a certificate signed by it */

    /* logging */
    int log_level; /* PD_LOG_* */

    /* a profiling config (verl / MindSpeed YAML) applied at start, "" = none */
    char profile_config[PD_PATH_MAX];

    /* many nodes (with coordinator_url / coordinator_listen above) */
    bool coordinator;          /* plan for node daemons (--coordinator, or coordinator_listen) */
    bool shared_save_path;     /* node: save_path is storage every node mounts */
    int64_t summary_ms;        /* node: step summaries to the coordinator */
    int64_t chunk_bytes;       /* node: file streaming chunk size */
    int64_t node_timeout_ms;   /* coordinator: a node away this long is lost */
    int64_t max_node_requests; /* coordinator: node requests held at once (parked chunks...) */
    /* the DNS name a tls+tcp:// peer's certificate must carry (IP addresses
     * are not matched); "" = the host of the URL */
    char tls_server_name[256];

    /* Prometheus text over HTTP (http://host:port), "" = off */
    char metrics_url[PD_PATH_MAX];
    /* tools beyond the built-in ones that windows may name, comma-separated:
     * those of clients given their own backend; "" = none */
    char custom_tools[512];
    /* step-time history: steps kept per rank, and steps of phase times */
    int64_t history_steps;
    int64_t history_phase_steps;
    /* the straggler trigger (see daemon/core/straggler.h) */
    bool straggler_enable;
    char straggler_job[65];           /* "" = any */
    char straggler_roles[16][64 + 1]; /* none = every role */
    size_t n_straggler_roles;
    double straggler_factor;
    double straggler_score; /* the compute relative score under which a rank is slow */
    int64_t straggler_consecutive;
    int64_t straggler_steps;
    int64_t straggler_interval_ms;
    int64_t straggler_max_bytes; /* 0 = no limit */
    char straggler_tool[65];
} pd_config_t;

/* Built-in defaults. run_dir: $PROFD_RUN_DIR when absolute and at most
 * PP_RUN_DIR_MAX bytes (otherwise ignored), else /run/profd when that folder
 * exists and is writable, else /tmp/profd-<uid>. Workers and profctl look in
 * the same places (client/rundir.h): $PROFD_RUN_DIR on the same terms, else
 * whichever of the other two holds the socket. */
void pd_config_defaults(pd_config_t *cfg);

/*
 * Read a YAML file over `cfg` (which holds defaults). Unknown keys, wrong
 * types and out-of-range values are errors; `err` receives
 * "FILE:LINE:COLUMN: key 'KEY': expected ..., found ...".
 * Returns 0 or PROFD_ECONFIG / PROFD_EIO; cfg is unchanged on error.
 */
int pd_config_load(pd_config_t *cfg, const char *path, char *err, size_t errlen);

/* The same from YAML text already in memory (`file` names it in messages).
 * Returns 0, PROFD_ECONFIG or PROFD_ENOMEM; cfg is unchanged on error. */
int pd_config_load_text(pd_config_t *cfg, const char *file, const char *text, size_t len, char *err,
                        size_t errlen);

/* A command-line flag that sets a settings key ("save-path", value; NULL
 * value for a flag of a boolean key: true). */
typedef struct pd_config_arg {
    const char *flag;
    const char *value;
} pd_config_arg_t;

/*
 * The file at `path` (NULL: none), then the flags over it, as Valkey turns
 * its arguments into config lines for the same loader: every flag sets its
 * key of the one key table, checked by the key's own rules; an error names
 * the flag ("--log-level: expected error, warn, info or debug, found
 * 'loud'"). Returns 0, or PROFD_ECONFIG / PROFD_EIO / PROFD_ENOMEM; cfg is
 * unchanged on error.
 */
int pd_config_load_args(pd_config_t *cfg, const char *path, const pd_config_arg_t *args,
                        size_t nargs, char *err, size_t errlen);

/* The i-th key that has a flag: the flag's name, its one-letter form (0:
 * none), whether it takes a value (a boolean key's flag does not) and the
 * key's dotted name; false past the last. */
bool pd_config_flag_at(size_t i, const char **flag, char *shortopt, bool *has_arg,
                       const char **key);

/* Dotted name of the i-th settings key ("limits.max_clients"), NULL past the
 * last one: the keys deploy/profd.yaml documents. */
const char *pd_config_key(size_t i);

/* Fill derived values (worker/control URLs, spool) after flags are applied. */
void pd_config_finish(pd_config_t *cfg);

/* Why a plain tcp:// control endpoint is refused. */
#define PD_CONFIG_TCP_CONTROL                                                                      \
    "plain tcp:// lets anyone who can connect control the daemon: use tls+tcp:// (with "           \
    "tls.ca_file, tls.cert_file and tls.key_file), or set security.insecure_tcp_control: true"

/* The control endpoints as they will listen (after flags): listen.control is
 * ipc:// or tls+tcp://, listen.control_remote tls+tcp:// or empty; tcp://
 * only with security.insecure_tcp_control. Returns 0 or PROFD_ECONFIG with
 * a one-line reason naming the endpoint. */
int pd_config_check_control(const pd_config_t *cfg, char *err, size_t errlen);

/* Why a plain tcp:// node <-> coordinator link is refused. */
#define PD_CONFIG_TCP_LINKS                                                                        \
    "plain tcp:// node links are unauthenticated and unencrypted: use tls+tcp:// (with "           \
    "tls.ca_file, tls.cert_file and tls.key_file), or set security.insecure_tcp_links: true "      \
    "(--insecure-tcp-links)"

/* The node <-> coordinator links as they will be used (after flags):
 * coordinator.url and coordinator.listen are ipc://, tls+tcp://, inproc://
 * or empty; tcp:// only with security.insecure_tcp_links. Returns 0 or
 * PROFD_ECONFIG with a one-line reason naming the link. */
int pd_config_check_links(const pd_config_t *cfg, char *err, size_t errlen);

#endif
