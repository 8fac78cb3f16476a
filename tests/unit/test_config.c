// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Daemon settings: defaults, every key, the documented example, exact
 * errors with line:column, atomic loads, derived values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "log.h"
#include "profd/errors.h"
#include "profd/proto.h"
#include "yamltree.h"

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = malloc(1 << 20);
    *len = fread(buf, 1, (1 << 20) - 1, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

static int load(pd_config_t *cfg, const char *text, char *err)
{
    return pd_config_load_text(cfg, "bad.yaml", text, strlen(text), err, 512);
}

/* The text is refused with exactly msg. */
static void expect_bad(pd_config_t *c, const char *text, const char *msg)
{
    char err[512];
    assert_int_equal(load(c, text, err), PROFD_ECONFIG);
    assert_string_equal(err, msg);
}

/* The settings test_config_defaults and test_config_every_key both check:
 * each field's default, and its value in every_key (below). */
typedef struct setting {
    const char *field;
    size_t off, size;
    const char *dflt_s, *every_s; /* a text field */
    int64_t dflt, every;          /* else an int64_t */
} setting_t;

#define TEXT(f, d, e)                                                                              \
    {                                                                                              \
#f, offsetof(pd_config_t, f), sizeof(((pd_config_t *)0)->f), d, e, 0, 0                    \
    }
#define I64(f, d, e)                                                                               \
    {                                                                                              \
#f, offsetof(pd_config_t, f), sizeof(((pd_config_t *)0)->f), NULL, NULL, d, e              \
    }

static const setting_t settings[] = {
    TEXT(worker_url, "", "tcp://0.0.0.0:7001"),
    TEXT(control_url, "", "tls+tcp://ctl.example:7002"),
    TEXT(control_remote_url, "", "tcp://0.0.0.0:7003"),
    TEXT(save_path, "outputs/profile", "/data/prof"),
    TEXT(spool_dir, "", "/data/prof/.incoming"),
    TEXT(node_name, "", "node-7.rack2"),
    TEXT(coordinator_url, "", "tls+tcp://coord.example:7100"),
    TEXT(coordinator_listen, "", "tcp://0.0.0.0:7100"),
    I64(max_msg_bytes, 1024 * 1024, 64 * 1024 * 1024),
    I64(max_clients, 4096, 65536),
    I64(max_windows, 64, 1),
    I64(window_byte_budget, 64LL << 30, 1024LL * 1024 * 1024),
    I64(min_free_bytes, 1LL << 30, 10000000000LL),
    I64(client_timeout_ms, 10000, 100),
    I64(watch_hold_ms, 120000, 600000),
    I64(align_margin_ms, 100, 0),
    I64(control_rate, 100, 0),
    I64(worker_rate, 10000, 1000000),
    I64(max_capture_files, 100000, 7),
    TEXT(checksum, "xxh64", "none"),
    I64(retention_max_age_hours, 720, 48),
    I64(retention_max_bytes, 0, 100LL << 30),
    TEXT(hook_command, "", "rclone copy \"$PROFD_WINDOW_PATH\" s3:b"),
    TEXT(hook_user, "", "profd-upload"),
    I64(hook_timeout_ms, 600000, 1000),
    I64(socket_mode, 0660, 0600),
    TEXT(socket_group, "", "prof_users"),
    TEXT(tls_cert_file, "", "/etc/profd/node.pem"),
    TEXT(profile_config, "", "/etc/profd/ppo.yaml"),
};

/* c holds the table's settings as the defaults set them, or as every_key
 * does (every). */
static void expect_settings(const pd_config_t *c, bool every)
{
    for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
        const setting_t *s = &settings[i];
        const char *at = (const char *)c + s->off;
        if (s->dflt_s != NULL) {
            const char *want = every ? s->every_s : s->dflt_s;
            if (strcmp(at, want) != 0) {
                fail_msg("%s: '%s', expected '%s'", s->field, at, want);
            }
        } else {
            int64_t v, want = every ? s->every : s->dflt;
            assert_int_equal(s->size, sizeof(v));
            memcpy(&v, at, sizeof(v));
            if (v != want) {
                fail_msg("%s: %lld, expected %lld", s->field, (long long)v, (long long)want);
            }
        }
    }
}

static void test_config_defaults(void **state)
{
    pd_config_t c;
    char expect[64];

    setenv("PROFD_RUN_DIR", "/var/tmp/profd-test", 1);
    pd_config_defaults(&c);
    assert_string_equal(c.run_dir, "/var/tmp/profd-test");

    unsetenv("PROFD_RUN_DIR");
    pd_config_defaults(&c);
    if (access("/run/profd", W_OK | X_OK) == 0) {
        snprintf(expect, sizeof(expect), "/run/profd");
    } else if (getuid() == 0 && access("/run", W_OK | X_OK) == 0) {
        /* issue 31: root without /run/profd went to /tmp/profd-0, not
         * where the README says (and workers look first) */
        snprintf(expect, sizeof(expect), "/run/profd");
    } else {
        snprintf(expect, sizeof(expect), "/tmp/profd-%u", (unsigned)getuid());
    }
    assert_string_equal(c.run_dir, expect);
    setenv("PROFD_RUN_DIR", "relative/dir", 1); /* not absolute: ignored */
    pd_config_defaults(&c);
    assert_string_equal(c.run_dir, expect);
    char long_dir[PP_RUN_DIR_MAX + 2]; /* too long for a socket path: ignored */
    memset(long_dir, 'd', sizeof(long_dir) - 1);
    long_dir[0] = '/';
    long_dir[PP_RUN_DIR_MAX + 1] = '\0';
    setenv("PROFD_RUN_DIR", long_dir, 1);
    pd_config_defaults(&c);
    assert_string_equal(c.run_dir, expect);
    long_dir[PP_RUN_DIR_MAX] = '\0'; /* the longest taken */
    setenv("PROFD_RUN_DIR", long_dir, 1);
    pd_config_defaults(&c);
    assert_string_equal(c.run_dir, long_dir);
    unsetenv("PROFD_RUN_DIR");

    expect_settings(&c, false);
    assert_true(c.retention_max_fraction == 0.5);
    assert_false(c.insecure_tcp_control);
    assert_false(c.insecure_tcp_links);
    assert_int_equal(c.n_allow_uids, 0);
    assert_int_equal(c.n_allow_gids, 0);
    assert_int_equal(c.log_level, PD_LOG_INFO);
}

static const char every_key[] = "run_dir: /srv/profd\n"
                                "listen:\n"
                                "  worker: tcp://0.0.0.0:7001\n"
                                "  control: tls+tcp://ctl.example:7002\n"
                                "  control_remote: tcp://0.0.0.0:7003\n"
                                "  metrics: http://127.0.0.1:9464\n"
                                "save_path: /data/prof\n"
                                "spool_dir: /data/prof/.incoming\n"
                                "node_name: node-7.rack2\n"
                                "coordinator:\n"
                                "  url: tls+tcp://coord.example:7100\n"
                                "  listen: tcp://0.0.0.0:7100\n"
                                "  shared_save_path: true\n"
                                "  summary_ms: 250\n"
                                "  chunk_bytes: 4MiB\n"
                                "  node_timeout_ms: 3000\n"
                                "  max_node_requests: 2048\n"
                                "limits:\n"
                                "  max_msg_bytes: 64MiB\n"
                                "  max_clients: 65536\n"
                                "  max_clients_per_peer: 0\n"
                                "  max_connections: 9\n"
                                "  max_connections_per_peer: 3\n"
                                "  request_memory: 2MiB\n"
                                "  max_windows: 1\n"
                                "  window_byte_budget: 1 GiB\n"
                                "  min_free_bytes: 10GB\n"
                                "  client_timeout_ms: 100\n"
                                "  watch_hold_ms: 600000\n"
                                "  align_margin_ms: 0\n"
                                "  control_requests_per_s: 0\n"
                                "  worker_requests_per_s: 1000000\n"
                                "  max_capture_files: 7\n"
                                "checksum: none\n"
                                "retention:\n"
                                "  max_age_hours: 48\n"
                                "  max_bytes: 100GiB\n"
                                "  max_fraction: 0.25\n"
                                "hooks:\n"
                                "  after_window:\n"
                                "    command: rclone copy \"$PROFD_WINDOW_PATH\" s3:b\n"
                                "    user: profd-upload\n"
                                "    timeout_ms: 1000\n"
                                "security:\n"
                                "  socket_mode: \"0600\"\n"
                                "  socket_group: prof_users\n"
                                "  allow_uids: [1000, 0x3e9]\n"
                                "  allow_gids: [4294967294]\n"
                                "  insecure_tcp_control: true\n"
                                "  insecure_tcp_links: true\n"
                                "  shared_jobs: true\n"
                                "  job_certificates: true\n"
                                "  writable_save_path: true\n"
                                "tls:\n"
                                "  cert_file: /etc/profd/node.pem\n"
                                "  key_file: /etc/profd/node.key\n"
                                "  ca_file: /etc/profd/ca.pem\n"
                                "  server_name: coord.example\n"
                                "log_level: debug\n"
                                "profile_config: /etc/profd/ppo.yaml\n"
                                "tools:\n"
                                "  custom: rec,bench\n"
                                "history:\n"
                                "  steps: 4096\n"
                                "  phase_steps: 1\n"
                                "triggers:\n"
                                "  straggler:\n"
                                "    enable: true\n"
                                "    job: run-42\n"
                                "    roles: [actor, rollout]\n"
                                "    factor: 1.5\n"
                                "    score: 0.6\n"
                                "    consecutive: 5\n"
                                "    steps: 3\n"
                                "    interval_ms: 0\n"
                                "    max_bytes: 2GiB\n"
                                "    tool: sim\n";

static void test_config_every_key(void **state)
{
    pd_config_t c;
    char err[512] = "";
    pd_config_defaults(&c);
    assert_int_equal(load(&c, every_key, err), 0);
    assert_string_equal(err, "");
    expect_settings(&c, true);
    assert_string_equal(c.run_dir, "/srv/profd");
    assert_true(c.shared_save_path);
    assert_int_equal(c.summary_ms, 250);
    assert_int_equal(c.chunk_bytes, 4 * 1024 * 1024);
    assert_int_equal(c.node_timeout_ms, 3000);
    assert_int_equal(c.max_node_requests, 2048);
    assert_int_equal(c.max_clients_per_peer, 0);
    assert_int_equal(c.max_connections, 9);
    assert_int_equal(c.max_connections_per_peer, 3);
    assert_int_equal(c.request_memory, 2 * 1024 * 1024);
    assert_true(c.retention_max_fraction == 0.25);
    assert_int_equal(c.n_allow_uids, 2);
    assert_int_equal(c.allow_uids[0], 1000);
    assert_int_equal(c.allow_uids[1], 1001);
    assert_int_equal(c.n_allow_gids, 1);
    assert_int_equal(c.allow_gids[0], 4294967294LL);
    assert_true(c.insecure_tcp_control);
    assert_true(c.insecure_tcp_links);
    assert_true(c.shared_jobs);
    assert_true(c.job_certificates);
    assert_true(c.writable_save_path);
    assert_string_equal(c.tls_key_file, "/etc/profd/node.key");
    assert_string_equal(c.tls_ca_file, "/etc/profd/ca.pem");
    assert_string_equal(c.tls_server_name, "coord.example");
    assert_int_equal(c.log_level, PD_LOG_DEBUG);
    assert_int_equal(c.history_steps, 4096);
    assert_int_equal(c.history_phase_steps, 1);
    assert_true(c.straggler_enable);
    assert_string_equal(c.straggler_job, "run-42");
    assert_int_equal(c.n_straggler_roles, 2);
    assert_string_equal(c.straggler_roles[0], "actor");
    assert_string_equal(c.straggler_roles[1], "rollout");
    assert_true(c.straggler_factor == 1.5);
    assert_true(c.straggler_score == 0.6);
    assert_int_equal(c.straggler_consecutive, 5);
    assert_int_equal(c.straggler_steps, 3);
    assert_int_equal(c.straggler_interval_ms, 0);
    assert_int_equal(c.straggler_max_bytes, 2LL << 30);
    assert_string_equal(c.straggler_tool, "sim");
    assert_string_equal(c.metrics_url, "http://127.0.0.1:9464");
    assert_string_equal(c.custom_tools, "rec,bench");

    /* every key of the table is in that text */
    yt_node_t *root;
    assert_int_equal(yt_parse("t", every_key, strlen(every_key), &root, err, sizeof(err)), 0);
    for (size_t i = 0; pd_config_key(i) != NULL; i++) {
        char name[64], *dot;
        const yt_node_t *n = root;
        snprintf(name, sizeof(name), "%s", pd_config_key(i));
        char *seg = name;
        while ((dot = strchr(seg, '.')) != NULL) {
            *dot = '\0';
            n = yt_map_get(n, seg);
            seg = dot + 1;
        }
        assert_non_null(yt_map_get(n, seg));
    }
    assert_non_null(pd_config_key(64));
    assert_null(pd_config_key(65));
    yt_free(root);
}

static void test_config_other_value_forms(void **state)
{
    pd_config_t c;
    char err[512];
    pd_config_defaults(&c);
    /* unquoted 0640 is octal (YAML 1.1); bytes as a plain integer; null = empty */
    assert_int_equal(load(&c,
                          "security:\n  socket_mode: 0640\n  socket_group:\n  allow_uids: ~\n"
                          "limits:\n  max_msg_bytes: 65536\n  window_byte_budget: 512KiB\n"
                          "node_name: 42\nlisten:\n",
                          err),
                     0);
    assert_int_equal(c.socket_mode, 0640);
    assert_string_equal(c.socket_group, "");
    assert_int_equal(c.n_allow_uids, 0);
    assert_int_equal(c.max_msg_bytes, 65536);
    assert_int_equal(c.window_byte_budget, 512 * 1024);
    assert_string_equal(c.node_name, "42");
}

/* The documented example loads and states exactly the built-in defaults. */
static void test_config_deploy_example(void **state)
{
    pd_config_t c, d;
    char err[512] = "";
    size_t len;
    char *text = read_file(PROFD_SOURCE_DIR "/deploy/profd.yaml", &len);
    pd_config_defaults(&c);
    assert_int_equal(pd_config_load(&c, PROFD_SOURCE_DIR "/deploy/profd.yaml", err, sizeof(err)),
                     0);
    assert_string_equal(err, "");
    pd_config_defaults(&d);
    snprintf(d.run_dir, sizeof(d.run_dir), "/run/profd");
    assert_memory_equal(&c, &d, sizeof(c));

    /* and it names every key */
    yt_node_t *root;
    assert_int_equal(yt_parse("profd.yaml", text, len, &root, err, sizeof(err)), 0);
    for (size_t i = 0; pd_config_key(i) != NULL; i++) {
        char name[64], *dot, *seg = name;
        const yt_node_t *n = root;
        snprintf(name, sizeof(name), "%s", pd_config_key(i));
        while ((dot = strchr(seg, '.')) != NULL) {
            *dot = '\0';
            n = yt_map_get(n, seg);
            seg = dot + 1;
        }
        if (yt_map_get(n, seg) == NULL) {
            print_error("deploy/profd.yaml lacks %s\n", pd_config_key(i));
        }
        assert_non_null(yt_map_get(n, seg));
    }
    yt_free(root);
    free(text);
}

static const struct {
    const char *text;
    const char *err;
} bad[] = {
    {"limits:\n  max_clients: lots\n",
     "bad.yaml:2:16: key 'limits.max_clients': expected integer 1..65536, found 'lots'"},
    {"limits:\n  max_clients: 0\n",
     "bad.yaml:2:16: key 'limits.max_clients': expected integer 1..65536, found '0'"},
    {"limits:\n  max_clients: 1.5\n",
     "bad.yaml:2:16: key 'limits.max_clients': expected integer 1..65536, found '1.5'"},
    {"limits:\n  max_client: 5\n", "bad.yaml:2:3: key 'limits.max_client': unknown key"},
    {"log_level: info\nlog-level: debug\n", "bad.yaml:2:1: key 'log-level': unknown key"},
    {"limits: 5\n", "bad.yaml:1:9: key 'limits': expected a mapping, found '5'"},
    {"limits:\n  max_msg_bytes: 2KiB\n",
     "bad.yaml:2:18: key 'limits.max_msg_bytes': expected byte size 4KiB..64MiB (integer or "
     "64KiB, 1MiB, 1GiB...), found '2KiB'"},
    {"limits:\n  max_msg_bytes: 12XB\n",
     "bad.yaml:2:18: key 'limits.max_msg_bytes': expected byte size 4KiB..64MiB (integer or "
     "64KiB, 1MiB, 1GiB...), found '12XB'"},
    {"limits:\n  min_free_bytes: 99999999999999999999\n",
     "bad.yaml:2:19: key 'limits.min_free_bytes': expected byte size 0..1PiB (integer or 64KiB, "
     "1MiB, 1GiB...), found '99999999999999999999'"},
    {"limits:\n  window_byte_budget: -1\n",
     "bad.yaml:2:23: key 'limits.window_byte_budget': expected byte size 0..1PiB (integer or "
     "64KiB, 1MiB, 1GiB...), found '-1'"},
    {"retention:\n  max_fraction: 1.5\n",
     "bad.yaml:2:17: key 'retention.max_fraction': expected a number 0..1, found '1.5'"},
    {"retention:\n  max_age_hours: -1\n",
     "bad.yaml:2:18: key 'retention.max_age_hours': expected integer 0..876000, found '-1'"},
    {"hooks:\n  after_window:\n    timeout_ms: 10\n",
     "bad.yaml:3:17: key 'hooks.after_window.timeout_ms': expected integer 1000..86400000, "
     "found '10'"},
    {"security:\n  socket_mode: \"0999\"\n",
     "bad.yaml:2:16: key 'security.socket_mode': expected file mode \"0000\"..\"0777\" (octal), "
     "found '0999'"},
    {"security:\n  socket_mode: 660\n",
     "bad.yaml:2:16: key 'security.socket_mode': expected file mode \"0000\"..\"0777\" (octal), "
     "found '660'"},
    {"checksum: md5\n", "bad.yaml:1:11: key 'checksum': expected one of xxh64, none, found 'md5'"},
    {"triggers:\n  straggler:\n    factor: 1\n",
     "bad.yaml:3:13: key 'triggers.straggler.factor': expected a number 1.001..1000, found '1'"},
    {"triggers:\n  straggler:\n    factor: fast\n",
     "bad.yaml:3:13: key 'triggers.straggler.factor': expected a number 1.001..1000, found "
     "'fast'"},
    {"triggers:\n  straggler:\n    roles: [actor, \"act or\"]\n",
     "bad.yaml:3:20: key 'triggers.straggler.roles': expected a list of at most 16 names "
     "[A-Za-z0-9_-], found 'act or'"},
    {"triggers:\n  straggler:\n    roles: actor\n",
     "bad.yaml:3:12: key 'triggers.straggler.roles': expected a list of at most 16 names "
     "[A-Za-z0-9_-], found 'actor'"},
    {"history:\n  steps: 4\n",
     "bad.yaml:2:10: key 'history.steps': expected integer 8..4096, found '4'"},
    {"log_level: verbose\n",
     "bad.yaml:1:12: key 'log_level': expected one of error, warn, info, debug, found 'verbose'"},
    {"log_level: [info]\n",
     "bad.yaml:1:12: key 'log_level': expected one of error, warn, info, debug, found a list"},
    {"listen:\n  control: tcp://0.0.0.0:5555\n",
     "bad.yaml:2:12: key 'listen.control': " PD_CONFIG_TCP_CONTROL},
    {"listen:\n  control: inproc://x\n",
     "bad.yaml:2:12: key 'listen.control': expected an ipc:// or tls+tcp:// URL, found "
     "'inproc://x'"},
    {"listen:\n  worker: http://x\n",
     "bad.yaml:2:11: key 'listen.worker': expected an ipc://, tcp://, tls+tcp:// or inproc:// "
     "URL, found 'http://x'"},
    {"listen:\n  control: tls+tcp://ctl:1\ntls:\n  cert_file: /c.pem\n",
     "bad.yaml:2:12: key 'listen.control': tls+tcp:// needs tls.cert_file, tls.key_file and "
     "tls.ca_file"},
    {"run_dir: run\n",
     "bad.yaml:1:10: key 'run_dir': expected an absolute path of at most 94 bytes, found 'run'"},
    {"run_dir: /a/very/long/path/that/would/not/fit/into/a/unix/socket/address/once/the/socket/"
     "name/is/added/to/it\n",
     "bad.yaml:1:10: key 'run_dir': expected an absolute path of at most 94 bytes, found "
     "'/a/very/long/path/that/would/not/fit/int...'"},
    {"security:\n  allow_uids: [1, -1]\n",
     "bad.yaml:2:19: key 'security.allow_uids': expected a list of at most 16 ids 0..4294967294, "
     "found '-1'"},
    {"security:\n  allow_gids: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]\n",
     "bad.yaml:2:15: key 'security.allow_gids': expected a list of at most 16 ids 0..4294967294, "
     "found a list"},
    {"security:\n  allow_gids: 5\n",
     "bad.yaml:2:15: key 'security.allow_gids': expected a list of at most 16 ids 0..4294967294, "
     "found '5'"},
    {"node_name: bad name\n",
     "bad.yaml:1:12: key 'node_name': expected a name of at most 255 characters [A-Za-z0-9_.-], "
     "found 'bad name'"},
    {"save_path: {a: 1}\n",
     "bad.yaml:1:12: key 'save_path': expected a path of at most 1008 bytes, found a mapping"},
    {"limits:\n  max_clients: 5\n bad\n",
     "bad.yaml:3:2: YAML syntax error: did not find expected key"},
    {"- a\n- b\n", "bad.yaml:1:1: expected a mapping of settings, found a list"},
};

static void test_config_errors(void **state)
{
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        pd_config_t c, before;
        char err[512] = "";
        pd_config_defaults(&c);
        before = c;
        int rc = load(&c, bad[i].text, err);
        if (strcmp(err, bad[i].err) != 0) {
            print_error("case %zu:\n got  %s\n want %s\n", i, err, bad[i].err);
        }
        assert_int_equal(rc, PROFD_ECONFIG);
        assert_string_equal(err, bad[i].err);
        assert_memory_equal(&c, &before, sizeof(c));
    }
}

/* A file that sets several keys and then fails changes nothing. */
static void test_config_atomic(void **state)
{
    pd_config_t c, before;
    char err[512];
    pd_config_defaults(&c);
    before = c;
    expect_bad(&c, "save_path: /x\nlimits:\n  max_clients: 7\n  max_windows: 0\n",
               "bad.yaml:4:16: key 'limits.max_windows': expected integer 1..4096, "
               "found '0'");
    assert_memory_equal(&c, &before, sizeof(c));
    /* an empty file changes nothing and is fine */
    assert_int_equal(load(&c, "# nothing\n", err), 0);
    assert_memory_equal(&c, &before, sizeof(c));
}

static void test_config_file_errors(void **state)
{
    pd_config_t c;
    char err[512];
    pd_config_defaults(&c);
    assert_int_equal(pd_config_load(&c, "/nonexistent/profd.yaml", err, sizeof(err)), PROFD_EIO);
    assert_string_equal(err, "/nonexistent/profd.yaml: cannot open: No such file or directory");
    assert_int_equal(pd_config_load(&c, "/", err, sizeof(err)), PROFD_EIO);
    assert_string_equal(err, "/: not a regular file");
}

/* Control endpoints: plain tcp:// only with the insecure option, the
 * remote one TLS only; the same rules for URLs given as flags. */
/* The text is read without an error. */
static void expect_good(pd_config_t *c, const char *text)
{
    char err[512];
    assert_int_equal(load(c, text, err), 0);
}

/* check (pd_config_check_control or _links) accepts c, or refuses it with
 * exactly msg. */
static void expect_verdict(int (*check)(const pd_config_t *, char *, size_t), const pd_config_t *c,
                           const char *msg)
{
    char err[512];
    if (msg == NULL) {
        assert_int_equal(check(c, err, sizeof(err)), 0);
    } else {
        assert_int_equal(check(c, err, sizeof(err)), PROFD_ECONFIG);
        assert_string_equal(err, msg);
    }
}

#define SET_URL(field, url) snprintf(field, sizeof(field), "%s", url)

static void test_config_control_endpoints(void **state)
{
    pd_config_t c;
    pd_config_defaults(&c);
    expect_bad(&c, "listen:\n  control: tcp://0.0.0.0:7002\n",
               "bad.yaml:2:12: key 'listen.control': " PD_CONFIG_TCP_CONTROL);
    expect_bad(&c, "listen:\n  control_remote: tcp://0.0.0.0:7002\n",
               "bad.yaml:2:19: key 'listen.control_remote': " PD_CONFIG_TCP_CONTROL);
    expect_good(&c, "listen:\n  control_remote: tcp://0.0.0.0:7002\n"
                    "security:\n  insecure_tcp_control: true\n");
    assert_string_equal(c.control_remote_url, "tcp://0.0.0.0:7002");
    expect_verdict(pd_config_check_control, &c, NULL);

    pd_config_defaults(&c);
    expect_bad(&c, "listen:\n  control_remote: ipc:///tmp/x.sock\n",
               "bad.yaml:2:19: key 'listen.control_remote': expected a tls+tcp:// "
               "URL, found 'ipc:///tmp/x.sock'");
    expect_bad(&c, "listen:\n  control_remote: tls+tcp://localhost:7002\n",
               "bad.yaml:2:19: key 'listen.control_remote': tls+tcp:// needs "
               "tls.cert_file, tls.key_file and tls.ca_file");

    /* flags bypass the file: checked again before listening */
    pd_config_defaults(&c);
    SET_URL(c.control_url, "tcp://127.0.0.1:7002");
    expect_verdict(pd_config_check_control, &c,
                   "control endpoint tcp://127.0.0.1:7002: " PD_CONFIG_TCP_CONTROL);
    SET_URL(c.control_url, "ipc:///tmp/c.sock");
    SET_URL(c.control_remote_url, "ipc:///tmp/r.sock");
    expect_verdict(pd_config_check_control, &c,
                   "remote control endpoint ipc:///tmp/r.sock: expected a tls+tcp:// URL");
    SET_URL(c.control_remote_url, "tls+tcp://localhost:7002");
    expect_verdict(pd_config_check_control, &c, NULL);
    c.insecure_tcp_control = true;
    SET_URL(c.control_url, "tcp://127.0.0.1:7002");
    expect_verdict(pd_config_check_control, &c, NULL);
}

/* Node <-> coordinator links: plain tcp:// only with
 * security.insecure_tcp_links (or --insecure-tcp-links, checked with the
 * flags); ipc://, inproc:// and tls+tcp:// need no option. */
static void test_config_links(void **state)
{
    pd_config_t c, before;
    pd_config_defaults(&c);
    before = c;
    expect_bad(&c, "coordinator:\n  url: tcp://coord.example:7710\n",
               "bad.yaml:2:8: key 'coordinator.url': plain tcp:// node links are "
               "unauthenticated and unencrypted: use tls+tcp:// (with tls.ca_file, "
               "tls.cert_file and tls.key_file), or set "
               "security.insecure_tcp_links: true (--insecure-tcp-links)");
    assert_memory_equal(&c, &before, sizeof(c));
    expect_bad(&c, "coordinator:\n  listen: tcp://0.0.0.0:7710\n",
               "bad.yaml:2:11: key 'coordinator.listen': " PD_CONFIG_TCP_LINKS);
    assert_memory_equal(&c, &before, sizeof(c));
    /* the control option does not allow links, nor the links option control */
    expect_bad(&c,
               "coordinator:\n  listen: tcp://0.0.0.0:7710\n"
               "security:\n  insecure_tcp_control: true\n",
               "bad.yaml:2:11: key 'coordinator.listen': " PD_CONFIG_TCP_LINKS);
    expect_bad(&c,
               "listen:\n  control: tcp://0.0.0.0:7002\n"
               "security:\n  insecure_tcp_links: true\n",
               "bad.yaml:2:12: key 'listen.control': " PD_CONFIG_TCP_CONTROL);
    assert_memory_equal(&c, &before, sizeof(c));

    expect_good(&c, "coordinator:\n  url: tcp://coord.example:7710\n"
                    "security:\n  insecure_tcp_links: true\n");
    assert_string_equal(c.coordinator_url, "tcp://coord.example:7710");
    assert_true(c.insecure_tcp_links);
    expect_verdict(pd_config_check_links, &c, NULL);
    pd_config_defaults(&c);
    expect_good(&c, "coordinator:\n  listen: tcp://0.0.0.0:7710\n"
                    "security:\n  insecure_tcp_links: true\n");
    assert_string_equal(c.coordinator_listen, "tcp://0.0.0.0:7710");
    expect_verdict(pd_config_check_links, &c, NULL);

    /* the flag is set before the file is read (main.c) */
    pd_config_defaults(&c);
    c.insecure_tcp_links = true;
    expect_good(&c, "coordinator:\n  url: tcp://coord.example:7710\n");
    assert_string_equal(c.coordinator_url, "tcp://coord.example:7710");

    /* no option needed for the others */
    pd_config_defaults(&c);
    expect_good(&c, "coordinator:\n  listen: ipc:///tmp/coord.sock\n");
    expect_good(&c, "coordinator:\n  url: inproc://coord\n");
    expect_verdict(pd_config_check_links, &c, NULL);
    expect_bad(&c, "coordinator:\n  url: http://coord\n",
               "bad.yaml:2:8: key 'coordinator.url': expected an ipc://, tcp://, "
               "tls+tcp:// or inproc:// URL, found 'http://coord'");

    /* flags bypass the file: checked again before listening or dialing */
    pd_config_defaults(&c);
    SET_URL(c.coordinator_url, "tcp://127.0.0.1:7710");
    expect_verdict(pd_config_check_links, &c,
                   "coordinator URL tcp://127.0.0.1:7710: plain tcp:// node links are "
                   "unauthenticated and unencrypted: use tls+tcp:// (with tls.ca_file, "
                   "tls.cert_file and tls.key_file), or set "
                   "security.insecure_tcp_links: true (--insecure-tcp-links)");
    c.coordinator_url[0] = '\0';
    SET_URL(c.coordinator_listen, "tcp://0.0.0.0:7710");
    expect_verdict(pd_config_check_links, &c,
                   "coordinator listen endpoint tcp://0.0.0.0:7710: " PD_CONFIG_TCP_LINKS);
    SET_URL(c.coordinator_listen, "tcp4://0.0.0.0:7710");
    expect_verdict(pd_config_check_links, &c,
                   "coordinator listen endpoint tcp4://0.0.0.0:7710: expected an ipc://, "
                   "tcp://, tls+tcp:// or inproc:// URL");
    SET_URL(c.coordinator_listen, "tls+tcp://0.0.0.0:7710");
    expect_verdict(pd_config_check_links, &c, NULL);
    c.insecure_tcp_links = true;
    SET_URL(c.coordinator_listen, "tcp://0.0.0.0:7710");
    SET_URL(c.coordinator_url, "tcp://127.0.0.1:7710");
    expect_verdict(pd_config_check_links, &c, NULL);
}

static void test_config_finish(void **state)
{
    pd_config_t c;
    pd_config_defaults(&c);
    snprintf(c.run_dir, sizeof(c.run_dir), "/run/profd");
    pd_config_finish(&c);
    assert_string_equal(c.worker_url, "ipc:///run/profd/worker.sock");
    assert_string_equal(c.control_url, "ipc:///run/profd/control.sock");
    assert_string_equal(c.spool_dir, "outputs/profile/.spool");

    /* explicit values stay */
    snprintf(c.worker_url, sizeof(c.worker_url), "tcp://127.0.0.1:9");
    snprintf(c.spool_dir, sizeof(c.spool_dir), "/fast/spool");
    c.control_url[0] = '\0';
    snprintf(c.run_dir, sizeof(c.run_dir), "/tmp/p");
    pd_config_finish(&c);
    assert_string_equal(c.worker_url, "tcp://127.0.0.1:9");
    assert_string_equal(c.control_url, "ipc:///tmp/p/control.sock");
    assert_string_equal(c.spool_dir, "/fast/spool");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_defaults),
        cmocka_unit_test(test_config_every_key),
        cmocka_unit_test(test_config_other_value_forms),
        cmocka_unit_test(test_config_deploy_example),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_config_atomic),
        cmocka_unit_test(test_config_file_errors),
        cmocka_unit_test(test_config_control_endpoints),
        cmocka_unit_test(test_config_links),
        cmocka_unit_test(test_config_finish),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
