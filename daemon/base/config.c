// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Daemon settings. Every key is one row of `keys[]` below: its dotted name,
 * its type and bounds, its default (written as it would be in YAML) and
 * where it lives in pd_config_t. Defaults, loading and the messages all
 * come from that table; deploy/profd.yaml documents each row.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "profd/errors.h"
#include "profd/proto.h"
#include "pu_buf.h"
#include "yamltree.h"

typedef enum ktype {
    K_STR,    /* any scalar, kept as text; null = "" */
    K_PATH,   /* a path; `min` = 1: must be absolute */
    K_URL,    /* ipc://, tcp://, tls+tcp://, inproc:// (or "") */
    K_CTLURL, /* control endpoint: ipc://, tls+tcp:// (tcp:// see cross_check) or "" */
    K_REMURL, /* remote control endpoint: tls+tcp:// (tcp:// see cross_check) or "" */
    K_LNKURL, /* node <-> coordinator link: as K_URL (tcp:// see cross_check) */
    K_NAME,   /* node or group name */
    K_INT,    /* integer min..max */
    K_BYTES,  /* integer or "64MiB" style, min..max */
    K_MODE,   /* file mode 0..0777: integer or octal string "0660" */
    K_IDS,    /* list of uids / gids */
    K_CHOICE, /* one of `choices`, stored as text */
    K_LEVEL,  /* one of `choices`, stored as its index (int) */
    K_BOOL,   /* true / false */
    K_RATIO,  /* a decimal number min/1000..max/1000, stored as double */
    K_NAMES,  /* a list of identifiers [A-Za-z0-9_-] (size: capacity, PP_MAX_NAME long) */
} ktype_t;

typedef struct ckey {
    const char *name;
    ktype_t type;
    int64_t min, max; /* numbers: bounds; strings: max = longest accepted length */
    const char *def;  /* NULL: empty / zero, or computed */
    size_t off;
    size_t size;  /* char buffer size; K_IDS: capacity */
    size_t off_n; /* K_IDS: count */
    const char *const *choices;
    const char *flag; /* the command-line flag setting it (--FLAG), NULL: none */
    char shortopt;    /* its one-letter form, 0: none */
} ckey_t;

#define F(m)   offsetof(pd_config_t, m), sizeof(((pd_config_t *)0)->m)
#define IDS(m) offsetof(pd_config_t, m), sizeof(((pd_config_t *)0)->m) / sizeof(int64_t)
#define NAMES(m)                                                                                   \
    offsetof(pd_config_t, m), sizeof(((pd_config_t *)0)->m) / sizeof(((pd_config_t *)0)->m[0])
#define KIB 1024LL
#define MIB (1024LL * 1024)
#define GIB (1024LL * 1024 * 1024)
#define PIB (1024LL * 1024 * 1024 * 1024 * 1024)
/* the clients' limit too (proto.h): a longer $PROFD_RUN_DIR is ignored by all */
#define RUN_DIR_MAX PP_RUN_DIR_MAX

static const char *const checksums[] = {"xxh64", "none", NULL};
static const char *const levels[] = {"error", "warn", "info", "debug", NULL};

static const ckey_t keys[] = {
    {"run_dir", K_PATH, 1, RUN_DIR_MAX, NULL, F(run_dir), 0, NULL, "run-dir", 0},
    {"listen.worker", K_URL, 0, PD_PATH_MAX - 1, NULL, F(worker_url), 0, NULL, "worker-url", 0},
    {"listen.control", K_CTLURL, 0, PD_PATH_MAX - 1, NULL, F(control_url), 0, NULL, "control-url",
     0},
    {"listen.control_remote", K_REMURL, 0, PD_PATH_MAX - 1, NULL, F(control_remote_url), 0, NULL,
     "control-remote-url", 0},
    {"save_path", K_PATH, 0, PD_PATH_MAX - 16, "outputs/profile", F(save_path), 0, NULL,
     "save-path", 's'},
    {"spool_dir", K_PATH, 0, PD_PATH_MAX - 1, NULL, F(spool_dir), 0, NULL, "spool", 0},
    {"node_name", K_NAME, 0, 255, NULL, F(node_name), 0, NULL, "node", 0},
    {"coordinator.url", K_LNKURL, 0, PD_PATH_MAX - 1, NULL, F(coordinator_url), 0, NULL,
     "coordinator-url", 0},
    {"coordinator.listen", K_LNKURL, 0, PD_PATH_MAX - 1, NULL, F(coordinator_listen), 0, NULL,
     "coordinator-listen", 0},
    {"coordinator.shared_save_path", K_BOOL, 0, 1, "false", F(shared_save_path), 0, NULL,
     "shared-save-path", 0},
    {"coordinator.summary_ms", K_INT, 10, 60000, "100", F(summary_ms), 0, NULL, NULL, 0},
    {"coordinator.chunk_bytes", K_BYTES, 4 * KIB, 64 * MIB, "1MiB", F(chunk_bytes), 0, NULL, NULL,
     0},
    {"coordinator.node_timeout_ms", K_INT, 500, 3600000, "10000", F(node_timeout_ms), 0, NULL, NULL,
     0},
    {"coordinator.max_node_requests", K_INT, 8, 65536, "1024", F(max_node_requests), 0, NULL, NULL,
     0},
    {"limits.max_msg_bytes", K_BYTES, 4 * KIB, 64 * MIB, "1MiB", F(max_msg_bytes), 0, NULL, NULL,
     0},
    {"limits.max_clients", K_INT, 1, 65536, "4096", F(max_clients), 0, NULL, NULL, 0},
    {"limits.max_clients_per_peer", K_INT, 0, 65536, "1024", F(max_clients_per_peer), 0, NULL, NULL,
     0},
    {"limits.max_connections", K_INT, 1, 1048576, "1024", F(max_connections), 0, NULL, NULL, 0},
    {"limits.max_connections_per_peer", K_INT, 0, 1048576, "256", F(max_connections_per_peer), 0,
     NULL, NULL, 0},
    {"limits.request_memory", K_BYTES, 0, 64LL * GIB, "256MiB", F(request_memory), 0, NULL, NULL,
     0},
    {"limits.max_windows", K_INT, 1, 4096, "64", F(max_windows), 0, NULL, NULL, 0},
    {"limits.window_byte_budget", K_BYTES, 0, PIB, "64GiB", F(window_byte_budget), 0, NULL, NULL,
     0},
    {"limits.min_free_bytes", K_BYTES, 0, PIB, "1GiB", F(min_free_bytes), 0, NULL, NULL, 0},
    {"limits.client_timeout_ms", K_INT, 100, 3600000, "10000", F(client_timeout_ms), 0, NULL, NULL,
     0},
    {"limits.watch_hold_ms", K_INT, 100, 600000, "120000", F(watch_hold_ms), 0, NULL, NULL, 0},
    {"limits.align_margin_ms", K_INT, 0, 600000, "100", F(align_margin_ms), 0, NULL, NULL, 0},
    {"limits.control_requests_per_s", K_INT, 0, 1000000, "100", F(control_rate), 0, NULL, NULL, 0},
    {"limits.worker_requests_per_s", K_INT, 0, 1000000, "10000", F(worker_rate), 0, NULL, NULL, 0},
    {"limits.max_capture_files", K_INT, 1, 10000000, "100000", F(max_capture_files), 0, NULL, NULL,
     0},
    {"retention.max_age_hours", K_INT, 0, 876000, "720", F(retention_max_age_hours), 0, NULL, NULL,
     0},
    {"retention.max_bytes", K_BYTES, 0, PIB, "0", F(retention_max_bytes), 0, NULL, NULL, 0},
    {"retention.max_fraction", K_RATIO, 0, 1000, "0.5", F(retention_max_fraction), 0, NULL, NULL,
     0},
    {"hooks.after_window.command", K_STR, 0, 4095, NULL, F(hook_command), 0, NULL, NULL, 0},
    {"hooks.after_window.user", K_NAME, 0, 63, NULL, F(hook_user), 0, NULL, NULL, 0},
    {"hooks.after_window.timeout_ms", K_INT, 1000, 86400000, "600000", F(hook_timeout_ms), 0, NULL,
     NULL, 0},
    {"checksum", K_CHOICE, 0, 15, "xxh64", F(checksum), 0, checksums, NULL, 0},
    {"security.socket_mode", K_MODE, 0, 0777, "0660", F(socket_mode), 0, NULL, NULL, 0},
    {"security.socket_group", K_NAME, 0, 63, NULL, F(socket_group), 0, NULL, NULL, 0},
    {"security.allow_uids", K_IDS, 0, 4294967294LL, NULL, IDS(allow_uids),
     offsetof(pd_config_t, n_allow_uids), NULL, NULL, 0},
    {"security.allow_gids", K_IDS, 0, 4294967294LL, NULL, IDS(allow_gids),
     offsetof(pd_config_t, n_allow_gids), NULL, NULL, 0},
    {"security.insecure_tcp_control", K_BOOL, 0, 1, "false", F(insecure_tcp_control), 0, NULL, NULL,
     0},
    {"security.insecure_tcp_links", K_BOOL, 0, 1, "false", F(insecure_tcp_links), 0, NULL,
     "insecure-tcp-links", 0},
    {"security.shared_jobs", K_BOOL, 0, 1, "false", F(shared_jobs), 0, NULL, NULL, 0},
    {"security.job_certificates", K_BOOL, 0, 1, "false", F(job_certificates), 0, NULL, NULL, 0},
    {"security.writable_save_path", K_BOOL, 0, 1, "false", F(writable_save_path), 0, NULL, NULL, 0},
    {"tls.cert_file", K_PATH, 0, PD_PATH_MAX - 1, NULL, F(tls_cert_file), 0, NULL, NULL, 0},
    {"tls.key_file", K_PATH, 0, PD_PATH_MAX - 1, NULL, F(tls_key_file), 0, NULL, NULL, 0},
    {"tls.ca_file", K_PATH, 0, PD_PATH_MAX - 1, NULL, F(tls_ca_file), 0, NULL, NULL, 0},
    {"tls.server_name", K_NAME, 0, 255, NULL, F(tls_server_name), 0, NULL, NULL, 0},
    {"log_level", K_LEVEL, 0, 0, "info", F(log_level), 0, levels, "log-level", 'l'},
    {"profile_config", K_PATH, 0, PD_PATH_MAX - 1, NULL, F(profile_config), 0, NULL,
     "profile-config", 'p'},
    {"listen.metrics", K_STR, 0, PD_PATH_MAX - 1, NULL, F(metrics_url), 0, NULL, "metrics", 0},
    {"tools.custom", K_STR, 0, 511, NULL, F(custom_tools), 0, NULL, "custom-tools", 0},
    {"history.steps", K_INT, 8, 4096, "128", F(history_steps), 0, NULL, NULL, 0},
    {"history.phase_steps", K_INT, 1, 1024, "64", F(history_phase_steps), 0, NULL, NULL, 0},
    {"triggers.straggler.enable", K_BOOL, 0, 1, "false", F(straggler_enable), 0, NULL, NULL, 0},
    {"triggers.straggler.job", K_NAME, 0, 64, NULL, F(straggler_job), 0, NULL, NULL, 0},
    {"triggers.straggler.roles", K_NAMES, 0, 0, NULL, NAMES(straggler_roles),
     offsetof(pd_config_t, n_straggler_roles), NULL, NULL, 0},
    {"triggers.straggler.factor", K_RATIO, 1001, 1000000, "2.0", F(straggler_factor), 0, NULL, NULL,
     0},
    {"triggers.straggler.score", K_RATIO, 1, 999, "0.9", F(straggler_score), 0, NULL, NULL, 0},
    {"triggers.straggler.consecutive", K_INT, 1, 10000, "3", F(straggler_consecutive), 0, NULL,
     NULL, 0},
    {"triggers.straggler.steps", K_INT, 1, 10000, "2", F(straggler_steps), 0, NULL, NULL, 0},
    {"triggers.straggler.interval_ms", K_INT, 0, 86400000, "600000", F(straggler_interval_ms), 0,
     NULL, NULL, 0},
    {"triggers.straggler.max_bytes", K_BYTES, 0, PIB, "0", F(straggler_max_bytes), 0, NULL, NULL,
     0},
    {"triggers.straggler.tool", K_NAME, 0, 64, "torch", F(straggler_tool), 0, NULL, NULL, 0},
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

_Static_assert(PD_LOG_ERROR == 0 && PD_LOG_DEBUG == 3, "levels[] follows PD_LOG_*");

typedef struct ctx {
    const char *file;
    char *err;
    size_t errlen;
    const yt_node_t *where[NKEYS]; /* the node of the file that set each key */
    const char *flag;              /* setting a key from this flag, not the file */
} ctx_t;

/* ---- values ----------------------------------------------------------------- */

static void *field(pd_config_t *cfg, const ckey_t *k)
{
    return (char *)cfg + k->off;
}

static void expected(const ckey_t *k, char *buf, size_t len)
{
    char a[32], b[32];
    switch (k->type) {
    case K_STR:
        snprintf(buf, len, "a string of at most %lld bytes", (long long)k->max);
        break;
    case K_PATH:
        snprintf(buf, len, "%s of at most %lld bytes", k->min ? "an absolute path" : "a path",
                 (long long)k->max);
        break;
    case K_URL:
    case K_LNKURL:
        snprintf(buf, len, "an ipc://, tcp://, tls+tcp:// or inproc:// URL");
        break;
    case K_CTLURL:
        snprintf(buf, len, "an ipc:// or tls+tcp:// URL");
        break;
    case K_REMURL:
        snprintf(buf, len, "a tls+tcp:// URL");
        break;
    case K_NAME:
        snprintf(buf, len, "a name of at most %lld characters [A-Za-z0-9_.-]", (long long)k->max);
        break;
    case K_INT:
        snprintf(buf, len, "integer %lld..%lld", (long long)k->min, (long long)k->max);
        break;
    case K_BYTES:
        pu_fmt_bytes(k->min, a, sizeof(a));
        pu_fmt_bytes(k->max, b, sizeof(b));
        snprintf(buf, len, "byte size %s..%s (integer or 64KiB, 1MiB, 1GiB...)", a, b);
        break;
    case K_MODE:
        snprintf(buf, len, "file mode \"0000\"..\"0777\" (octal)");
        break;
    case K_IDS:
        snprintf(buf, len, "a list of at most %zu ids 0..%lld", k->size, (long long)k->max);
        break;
    case K_BOOL:
        snprintf(buf, len, "true or false");
        break;
    case K_RATIO:
        snprintf(buf, len, "a number %g..%g", (double)k->min / 1000.0, (double)k->max / 1000.0);
        break;
    case K_NAMES:
        snprintf(buf, len, "a list of at most %zu names [A-Za-z0-9_-]", k->size);
        break;
    case K_CHOICE:
    case K_LEVEL: {
        size_t off = (size_t)snprintf(buf, len, "one of ");
        for (const char *const *c = k->choices; *c != NULL && off < len; c++) {
            off += (size_t)snprintf(buf + off, len - off, "%s%s", *c, c[1] ? ", " : "");
        }
        break;
    }
    }
}

/* The choices as a flag's message says them: "a, b or c". */
static void expected_choices(const ckey_t *k, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (const char *const *c = k->choices; *c != NULL && off < len; c++) {
        off += (size_t)snprintf(buf + off, len - off, "%s%s", *c,
                                c[1] == NULL ? "" : (c[2] == NULL ? " or " : ", "));
    }
}

static int bad(ctx_t *c, const ckey_t *k, const yt_node_t *v)
{
    char exp[160], found[64];
    if (c->flag) {
        if (k->choices) {
            expected_choices(k, exp, sizeof(exp));
        } else {
            expected(k, exp, sizeof(exp));
        }
        snprintf(c->err, c->errlen, "--%s: expected %s, found '%.128s'", c->flag, exp,
                 v->text ? v->text : "");
        return PROFD_ECONFIG;
    }
    expected(k, exp, sizeof(exp));
    yt_describe(v, found, sizeof(found));
    snprintf(c->err, c->errlen, "%s:%d:%d: key '%s': expected %s, found %s", c->file, v->line,
             v->col, k->name, exp, found);
    return PROFD_ECONFIG;
}

static bool is_scalar(const yt_node_t *v)
{
    return v->type != YT_SEQ && v->type != YT_MAP;
}

/* "64MiB", "1 GiB", "1000kB", "4096" -> bytes; false when malformed or out
 * of int64. */
static bool parse_bytes(const char *s, int64_t *out)
{
    static const struct {
        const char *unit;
        int64_t mul;
    } units[] = {{"", 1},      {"B", 1},           {"KiB", KIB},       {"MiB", MIB},
                 {"GiB", GIB}, {"TiB", GIB * KIB}, {"PiB", PIB},       {"kB", 1000},
                 {"KB", 1000}, {"MB", 1000000},    {"GB", 1000000000}, {"TB", 1000000000000}};
    char *end;
    if (*s < '0' || *s > '9') {
        return false;
    }
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0) {
        return false;
    }
    while (*end == ' ') {
        end++;
    }
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(end, units[i].unit) == 0) {
            if (v > (unsigned long long)(INT64_MAX / units[i].mul)) {
                return false;
            }
            *out = (int64_t)v * units[i].mul;
            return true;
        }
    }
    return false;
}

static bool url_ok(const char *s, ktype_t type)
{
    static const char *const any[] = {"ipc://", "tcp://", "tls+tcp://", "inproc://", NULL};
    static const char *const ctl[] = {"ipc://", "tls+tcp://", "tcp://", NULL};
    static const char *const rem[] = {"tls+tcp://", "tcp://", NULL};
    if (*s == '\0') {
        return true;
    }
    for (const char *const *p = type == K_URL || type == K_LNKURL ? any
                                : type == K_CTLURL                ? ctl
                                                                  : rem;
         *p != NULL; p++) {
        size_t n = strlen(*p);
        if (strncmp(s, *p, n) == 0 && s[n] != '\0') {
            return true;
        }
    }
    return false;
}

static bool name_ok(const char *s)
{
    for (; *s != '\0'; s++) {
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '-' || *s == '.')) {
            return false;
        }
    }
    return true;
}

static int set_text(ctx_t *c, pd_config_t *cfg, const ckey_t *k, const yt_node_t *v)
{
    const char *s = "";
    if (!is_scalar(v)) {
        return bad(c, k, v);
    }
    if (v->type != YT_NULL) {
        s = v->text;
    }
    size_t n = strlen(s);
    if (n > (size_t)k->max || n >= k->size) {
        return bad(c, k, v);
    }
    switch (k->type) {
    case K_PATH:
        if (k->min && s[0] != '/') {
            return bad(c, k, v);
        }
        break;
    case K_URL:
    case K_CTLURL:
    case K_REMURL:
    case K_LNKURL:
        /* a URL flag is checked with its endpoint at start
         * (pd_config_check_control / _links), whose message names it */
        if (c->flag == NULL && !url_ok(s, k->type)) {
            return bad(c, k, v);
        }
        break;
    case K_NAME:
        if (!name_ok(s)) {
            return bad(c, k, v);
        }
        break;
    case K_CHOICE: {
        const char *const *ch = k->choices;
        while (*ch != NULL && strcmp(*ch, s) != 0) {
            ch++;
        }
        if (*ch == NULL) {
            return bad(c, k, v);
        }
        break;
    }
    default:
        break;
    }
    memcpy(field(cfg, k), s, n + 1);
    return 0;
}

static int set_value(ctx_t *c, pd_config_t *cfg, const ckey_t *k, const yt_node_t *v)
{
    int64_t x = 0;
    switch (k->type) {
    case K_STR:
    case K_PATH:
    case K_URL:
    case K_CTLURL:
    case K_REMURL:
    case K_LNKURL:
    case K_NAME:
    case K_CHOICE:
        return set_text(c, cfg, k, v);
    case K_INT:
        if (v->type != YT_INT) {
            return bad(c, k, v);
        }
        x = v->v.i;
        break;
    case K_BYTES:
        if (v->type == YT_INT) {
            x = v->v.i;
        } else if (v->type != YT_STR || !parse_bytes(v->text, &x)) {
            return bad(c, k, v);
        }
        break;
    case K_MODE:
        /* Unquoted 0660 is already octal (YAML 1.1); a string must be octal. */
        if (v->type == YT_INT) {
            x = v->v.i;
        } else if (v->type == YT_STR && v->text[0] != '\0' &&
                   strspn(v->text, "01234567") == strlen(v->text) && strlen(v->text) <= 4) {
            x = strtoll(v->text, NULL, 8);
        } else {
            return bad(c, k, v);
        }
        break;
    case K_BOOL:
        if (v->type != YT_BOOL) {
            return bad(c, k, v);
        }
        *(bool *)field(cfg, k) = v->v.b;
        return 0;
    case K_LEVEL: {
        /* the log's own names (pd_log_level_parse: "warning" is warn too) */
        int level = v->type == YT_STR ? pd_log_level_parse(v->text) : -1;
        if (level < 0) {
            return bad(c, k, v);
        }
        *(int *)field(cfg, k) = level;
        return 0;
    }
    case K_RATIO: {
        double f = v->type == YT_INT ? (double)v->v.i : v->type == YT_FLOAT ? v->v.f : -1e300;
        if (!(f >= (double)k->min / 1000.0 && f <= (double)k->max / 1000.0)) {
            return bad(c, k, v);
        }
        *(double *)field(cfg, k) = f;
        return 0;
    }
    case K_NAMES: {
        char(*names)[PP_MAX_NAME + 1] = field(cfg, k);
        size_t *count = (size_t *)((char *)cfg + k->off_n);
        if (v->type == YT_NULL) {
            *count = 0;
            return 0;
        }
        if (v->type != YT_SEQ || v->n > k->size) {
            return bad(c, k, v);
        }
        for (size_t i = 0; i < v->n; i++) {
            if (v->items[i]->type != YT_STR || !pp_ident_ok(v->items[i]->text)) {
                return bad(c, k, v->items[i]);
            }
        }
        for (size_t i = 0; i < v->n; i++) {
            snprintf(names[i], PP_MAX_NAME + 1, "%s", v->items[i]->text);
        }
        *count = v->n;
        return 0;
    }
    case K_IDS: {
        int64_t ids[64];
        size_t n = 0;
        if (v->type == YT_NULL) {
            *(size_t *)((char *)cfg + k->off_n) = 0;
            return 0;
        }
        if (v->type != YT_SEQ || v->n > k->size) {
            return bad(c, k, v);
        }
        for (size_t i = 0; i < v->n; i++) {
            const yt_node_t *e = v->items[i];
            if (e->type != YT_INT || e->v.i < k->min || e->v.i > k->max) {
                return bad(c, k, e);
            }
            ids[n++] = e->v.i;
        }
        memcpy(field(cfg, k), ids, n * sizeof(int64_t));
        *(size_t *)((char *)cfg + k->off_n) = n;
        return 0;
    }
    }
    if (x < k->min || x > k->max) {
        return bad(c, k, v);
    }
    *(int64_t *)field(cfg, k) = x;
    return 0;
}

/* ---- the tree walk ---------------------------------------------------------- */

static const ckey_t *key_find(const char *name)
{
    for (size_t i = 0; i < NKEYS; i++) {
        if (strcmp(keys[i].name, name) == 0) {
            return &keys[i];
        }
    }
    return NULL;
}

/* A section is a dotted prefix of some key ("limits"). */
static bool is_section(const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < NKEYS; i++) {
        if (strncmp(keys[i].name, name, n) == 0 && keys[i].name[n] == '.') {
            return true;
        }
    }
    return false;
}

static int walk(ctx_t *c, pd_config_t *cfg, const yt_node_t *map, const char *prefix)
{
    for (size_t i = 0; i < map->n; i++) {
        const yt_pair_t *p = &map->pairs[i];
        char name[256];
        int rc;
        snprintf(name, sizeof(name), "%s%s%s", prefix, *prefix ? "." : "", p->key);
        const ckey_t *k = key_find(name);
        if (k != NULL) {
            if ((rc = set_value(c, cfg, k, p->value)) != 0) {
                return rc;
            }
            c->where[k - keys] = p->value;
        } else if (is_section(name)) {
            if (p->value->type == YT_NULL) {
                continue;
            }
            if (p->value->type != YT_MAP) {
                char found[64];
                yt_describe(p->value, found, sizeof(found));
                snprintf(c->err, c->errlen, "%s:%d:%d: key '%s': expected a mapping, found %s",
                         c->file, p->value->line, p->value->col, name, found);
                return PROFD_ECONFIG;
            }
            if ((rc = walk(c, cfg, p->value, name)) != 0) {
                return rc;
            }
        } else {
            snprintf(c->err, c->errlen, "%s:%d:%d: key '%s': unknown key", c->file, p->line, p->col,
                     name);
            return PROFD_ECONFIG;
        }
    }
    return 0;
}

/* Settings that only make sense together. */
static int cross_check(ctx_t *c, const pd_config_t *cfg)
{
    static const char *const urls[] = {"listen.worker", "listen.control", "listen.control_remote",
                                       "coordinator.url", "coordinator.listen"};
    bool tls = cfg->tls_cert_file[0] && cfg->tls_key_file[0] && cfg->tls_ca_file[0];
    for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
        const ckey_t *k = key_find(urls[i]);
        const char *url = (const char *)cfg + k->off;
        const yt_node_t *v = c->where[k - keys];
        if (strncmp(url, "tls+tcp://", 10) == 0 && !tls && v != NULL) {
            snprintf(c->err, c->errlen,
                     "%s:%d:%d: key '%s': tls+tcp:// needs tls.cert_file, tls.key_file and "
                     "tls.ca_file",
                     c->file, v->line, v->col, k->name);
            return PROFD_ECONFIG;
        }
        bool links = k->type == K_LNKURL;
        bool insecure = links ? cfg->insecure_tcp_links : cfg->insecure_tcp_control;
        if (k->type != K_URL && strncmp(url, "tcp://", 6) == 0 && !insecure && v != NULL) {
            snprintf(c->err, c->errlen, "%s:%d:%d: key '%s': %s", c->file, v->line, v->col, k->name,
                     links ? PD_CONFIG_TCP_LINKS : PD_CONFIG_TCP_CONTROL);
            return PROFD_ECONFIG;
        }
    }
    return 0;
}

/* ---- public ------------------------------------------------------------------- */

void pd_config_defaults(pd_config_t *cfg)
{
    ctx_t c = {.file = "<defaults>"};
    char err[256];
    c.err = err;
    c.errlen = sizeof(err);
    memset(cfg, 0, sizeof(*cfg));
    for (size_t i = 0; i < NKEYS; i++) {
        if (keys[i].def == NULL) {
            continue;
        }
        yt_node_t *v = yt_scalar(keys[i].def, strlen(keys[i].def), false, 0, 0);
        if (v == NULL || set_value(&c, cfg, &keys[i], v) != 0) {
            abort(); /* the table's own defaults are broken, or no memory at start */
        }
        yt_free(v);
    }

    const char *env = getenv("PROFD_RUN_DIR");
    if (env != NULL && env[0] == '/' && strlen(env) <= RUN_DIR_MAX) {
        snprintf(cfg->run_dir, sizeof(cfg->run_dir), "%s", env);
    } else if (access("/run/profd", W_OK | X_OK) == 0 ||
               (errno == ENOENT && access("/run", W_OK | X_OK) == 0)) {
        /* where it may write: there, or made there (root without the
         * folder yet) - where workers and profctl look first */
        snprintf(cfg->run_dir, sizeof(cfg->run_dir), "/run/profd");
    } else {
        snprintf(cfg->run_dir, sizeof(cfg->run_dir), "/tmp/profd-%u", (unsigned)getuid());
    }
}

/* A flag's key, by the flag's name. */
static const ckey_t *flag_key(const char *flag)
{
    for (size_t i = 0; flag && i < NKEYS; i++) {
        if (keys[i].flag && strcmp(keys[i].flag, flag) == 0) {
            return &keys[i];
        }
    }
    return NULL;
}

/* Flags after the file: the same keys, checked by the same rules. */
static int apply_args(ctx_t *c, pd_config_t *cfg, const pd_config_arg_t *args, size_t nargs)
{
    for (size_t i = 0; i < nargs; i++) {
        const ckey_t *k = flag_key(args[i].flag);
        if (k == NULL) {
            snprintf(c->err, c->errlen, "--%s: not a settings flag", args[i].flag);
            return PROFD_ECONFIG;
        }
        const char *v = k->type == K_BOOL && args[i].value == NULL ? "true" : args[i].value;
        bool text = k->type != K_INT && k->type != K_BYTES && k->type != K_MODE &&
                    k->type != K_BOOL && k->type != K_IDS && k->type != K_RATIO &&
                    k->type != K_NAMES;
        yt_node_t *node = yt_scalar(v ? v : "", v ? strlen(v) : 0, text, 0, 0);
        if (node == NULL) {
            snprintf(c->err, c->errlen, "--%s: out of memory", args[i].flag);
            return PROFD_ENOMEM;
        }
        c->flag = args[i].flag;
        int rc = set_value(c, cfg, k, node);
        c->flag = NULL;
        yt_free(node);
        if (rc != 0) {
            return rc;
        }
        c->where[k - keys] = NULL; /* a flag's value is checked at start, not at a line */
    }
    return 0;
}

/* The file's text (NULL: none) and then the flags over a copy of *cfg;
 * *cfg is replaced only when all of it is good. */
static int load(pd_config_t *cfg, const char *file, const char *text, size_t len,
                const pd_config_arg_t *args, size_t nargs, char *err, size_t errlen)
{
    ctx_t c = {.file = file, .err = err, .errlen = errlen};
    yt_node_t *root = NULL;
    int rc = text ? yt_parse(file, text, len, &root, err, errlen) : 0;
    if (rc != 0) {
        return rc;
    }
    pd_config_t *tmp = malloc(sizeof(*tmp));
    if (tmp == NULL) {
        yt_free(root);
        snprintf(err, errlen, "%s: out of memory", file ? file : "settings");
        return PROFD_ENOMEM;
    }
    *tmp = *cfg;
    if (root && root->type == YT_MAP) {
        rc = walk(&c, tmp, root, "");
    } else if (root && root->type != YT_NULL) {
        char found[64];
        yt_describe(root, found, sizeof(found));
        snprintf(err, errlen, "%s:%d:%d: expected a mapping of settings, found %s", file,
                 root->line, root->col, found);
        rc = PROFD_ECONFIG;
    }
    if (rc == 0) {
        rc = apply_args(&c, tmp, args, nargs);
    }
    if (rc == 0) {
        rc = cross_check(&c, tmp);
    }
    if (rc == 0) {
        *cfg = *tmp;
    } else {
        yt_one_line(err);
    }
    free(tmp);
    yt_free(root);
    return rc;
}

int pd_config_load_text(pd_config_t *cfg, const char *file, const char *text, size_t len, char *err,
                        size_t errlen)
{
    return load(cfg, file, text, len, NULL, 0, err, errlen);
}

/* The whole file, read; NULL with the reason in err. */
static char *read_file(const char *path, size_t *lenp, int *rv, char *err, size_t errlen)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    *rv = PROFD_EIO;
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        close(fd);
        return NULL;
    }
    if ((uint64_t)st.st_size > YT_MAX_INPUT) {
        snprintf(err, errlen, "%s: file of %lld bytes exceeds the limit of %u bytes", path,
                 (long long)st.st_size, (unsigned)YT_MAX_INPUT);
        close(fd);
        *rv = PROFD_ECONFIG;
        return NULL;
    }
    size_t len = (size_t)st.st_size, got = 0;
    char *text = malloc(len + 1);
    if (text == NULL) {
        close(fd);
        snprintf(err, errlen, "%s: out of memory", path);
        *rv = PROFD_ENOMEM;
        return NULL;
    }
    while (got < len) {
        ssize_t r = read(fd, text + got, len - got);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            snprintf(err, errlen, "%s: cannot read: %s", path, r < 0 ? strerror(errno) : "short");
            free(text);
            close(fd);
            return NULL;
        }
        got += (size_t)r;
    }
    close(fd);
    *lenp = len;
    return text;
}

int pd_config_load_args(pd_config_t *cfg, const char *path, const pd_config_arg_t *args,
                        size_t nargs, char *err, size_t errlen)
{
    size_t len = 0;
    int rv = 0;
    char *text = path ? read_file(path, &len, &rv, err, errlen) : NULL;
    if (path && text == NULL) {
        return rv;
    }
    rv = load(cfg, path, text, len, args, nargs, err, errlen);
    free(text);
    return rv;
}

int pd_config_load(pd_config_t *cfg, const char *path, char *err, size_t errlen)
{
    return pd_config_load_args(cfg, path, NULL, 0, err, errlen);
}

bool pd_config_flag_at(size_t i, const char **flag, char *shortopt, bool *has_arg, const char **key)
{
    for (size_t k = 0; k < NKEYS; k++) {
        if (keys[k].flag == NULL || i-- > 0) {
            continue;
        }
        *flag = keys[k].flag;
        *shortopt = keys[k].shortopt;
        *has_arg = keys[k].type != K_BOOL;
        *key = keys[k].name;
        return true;
    }
    return false;
}

const char *pd_config_key(size_t i)
{
    return i < NKEYS ? keys[i].name : NULL;
}

/* Paths longer than the loader accepts (possible only through flags) are
 * cut, never overflowed. */
void pd_config_finish(pd_config_t *cfg)
{
    cfg->coordinator = cfg->coordinator || cfg->coordinator_listen[0] != '\0';
    if (cfg->worker_url[0] == '\0') {
        snprintf(cfg->worker_url, sizeof(cfg->worker_url), "ipc://%.*s/worker.sock", RUN_DIR_MAX,
                 cfg->run_dir);
    }
    if (cfg->control_url[0] == '\0') {
        snprintf(cfg->control_url, sizeof(cfg->control_url), "ipc://%.*s/control.sock", RUN_DIR_MAX,
                 cfg->run_dir);
    }
    if (cfg->spool_dir[0] == '\0' && cfg->shared_save_path) {
        /* the save_path is shared by every node: one spool each */
        char host[256];
        const char *node = cfg->node_name;
        if (node[0] == '\0') {
            node = gethostname(host, sizeof(host)) == 0 ? host : "node";
            host[sizeof(host) - 1] = '\0';
        }
        snprintf(cfg->spool_dir, sizeof(cfg->spool_dir), "%.*s/.spool/%.64s",
                 (int)sizeof(cfg->save_path) - 80, cfg->save_path, node);
    } else if (cfg->spool_dir[0] == '\0') {
        snprintf(cfg->spool_dir, sizeof(cfg->spool_dir), "%.*s/.spool",
                 (int)sizeof(cfg->save_path) - 16, cfg->save_path);
    }
}

/* Endpoints as set after the flags: the scheme their type allows, and plain
 * tcp:// only with the insecure option of that kind. */
typedef struct endpoint {
    const char *name, *url;
    ktype_t type;
} endpoint_t;

static int check_endpoints(const pd_config_t *cfg, const endpoint_t *eps, size_t n, char *err,
                           size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        const char *url = eps[i].url;
        bool links = eps[i].type == K_LNKURL;
        if (!url_ok(url, eps[i].type)) {
            const ckey_t k = {.type = eps[i].type};
            char want[128];
            expected(&k, want, sizeof(want));
            snprintf(err, errlen, "%s %s: expected %s", eps[i].name, url, want);
            return PROFD_ECONFIG;
        }
        if (strncmp(url, "tcp://", 6) == 0 &&
            !(links ? cfg->insecure_tcp_links : cfg->insecure_tcp_control)) {
            snprintf(err, errlen, "%s %s: %s", eps[i].name, url,
                     links ? PD_CONFIG_TCP_LINKS : PD_CONFIG_TCP_CONTROL);
            return PROFD_ECONFIG;
        }
    }
    return 0;
}

int pd_config_check_control(const pd_config_t *cfg, char *err, size_t errlen)
{
    const endpoint_t eps[] = {{"control endpoint", cfg->control_url, K_CTLURL},
                              {"remote control endpoint", cfg->control_remote_url, K_REMURL}};
    return check_endpoints(cfg, eps, sizeof(eps) / sizeof(eps[0]), err, errlen);
}

int pd_config_check_links(const pd_config_t *cfg, char *err, size_t errlen)
{
    const endpoint_t eps[] = {{"coordinator URL", cfg->coordinator_url, K_LNKURL},
                              {"coordinator listen endpoint", cfg->coordinator_listen, K_LNKURL}};
    return check_endpoints(cfg, eps, sizeof(eps) / sizeof(eps[0]), err, errlen);
}
