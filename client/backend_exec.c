/*
 * The `exec` backend: runs a shell command at start and at stop (settings
 * "start_cmd", "stop_cmd") with PROFD_* variables describing the capture, and
 * waits for it (settings "timeout_ms", default 10 s; the command is killed
 * after that and the capture fails). Commands run in the capture folder.
 *
 * Placeholders {pid}, {rank}, {replica_rank}, {role}, {phase}, {job},
 * {window}, {tool}, {step}, {first_step}, {last_step}, {part}, {event} and
 * {dir} are replaced by the same values as the variables, so a template such
 * as "perf record -p {pid} -o {dir}/perf.data" reads naturally. A value is
 * substituted only when it holds no character the shell would interpret
 * (otherwise the capture fails and names the variable to use instead); any
 * other text in braces is left alone (awk '{print $1}', ${HOME}).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "profd/client.h"
#include "profd/proto.h"

extern char **environ;

#define EXEC_TIMEOUT_MS 10000
#define EXEC_VARS       14
#define EXEC_CMD_MAX    4095
#define EXEC_VAL_MAX    (PP_MAX_PATH + 32)

/* The capture's values, as text: variables and placeholders share them. */
typedef struct exec_vals {
    const char *name; /* placeholder name; PROFD_<NAME> is the variable */
    char value[EXEC_VAL_MAX];
} exec_vals_t;

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool shell_safe(const char *v)
{
    for (; *v; v++) {
        char ch = *v;
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || strchr("_-.,/:+@%=", ch) != NULL;
        if (!ok) {
            return false;
        }
    }
    return true;
}

/* "PROFD_FIRST_STEP" for "first_step". */
static void var_name(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "PROFD_%s", name);
    for (char *p = buf; *p; p++) {
        *p = (*p >= 'a' && *p <= 'z') ? (char)(*p - 'a' + 'A') : *p;
    }
}

/* Replace the known {name} placeholders of `in` into `out` (len bytes). */
static int expand(const char *in, const exec_vals_t *vals, char *out, size_t len, const char *key,
                  char *reason, size_t reason_len)
{
    size_t n = 0;
    while (*in) {
        const exec_vals_t *hit = NULL;
        size_t nl = 0;
        if (*in == '{') {
            for (int i = 0; i < EXEC_VARS; i++) {
                nl = strlen(vals[i].name);
                if (strncmp(in + 1, vals[i].name, nl) == 0 && in[1 + nl] == '}') {
                    hit = &vals[i];
                    break;
                }
            }
        }
        const char *piece = hit ? hit->value : in;
        size_t plen = hit ? strlen(hit->value) : 1;
        if (hit && !shell_safe(hit->value)) {
            char var[PP_MAX_NAME + 8];
            var_name(var, sizeof(var), hit->name);
            snprintf(reason, reason_len,
                     "exec: {%s} in %s holds characters the shell would interpret; use \"$%s\"",
                     hit->name, key, var);
            return PROFD_EINVAL;
        }
        if (n + plen >= len) {
            snprintf(reason, reason_len, "exec: %s longer than %d bytes once expanded", key,
                     EXEC_CMD_MAX);
            return PROFD_EINVAL;
        }
        memcpy(out + n, piece, plen);
        n += plen;
        in += hit ? nl + 2 : 1;
    }
    out[n] = '\0';
    return 0;
}

static int run(const profd_capture_t *cap, const char *key, const char *event, char *reason,
               size_t reason_len)
{
    char raw[EXEC_CMD_MAX + 2], cmd[EXEC_CMD_MAX + 1];
    char vars[EXEC_VARS][PP_MAX_NAME + 8 + EXEC_VAL_MAX];
    exec_vals_t vals[EXEC_VARS] = {
        {"event", ""}, {"dir", ""},        {"rank", ""},         {"role", ""},   {"phase", ""},
        {"step", ""},  {"first_step", ""}, {"last_step", ""},    {"window", ""}, {"tool", ""},
        {"pid", ""},   {"part", ""},       {"replica_rank", ""}, {"job", ""},
    };
    size_t nenv = 0;
    pid_t pid;
    int status, rv;

    if (!pp_json_get_str(cap->settings_json, key, raw, sizeof(raw), NULL) || raw[0] == '\0') {
        return 0; /* nothing to run at this boundary */
    }
    if (strlen(raw) > EXEC_CMD_MAX) {
        snprintf(reason, reason_len, "exec: %s longer than %d bytes", key, EXEC_CMD_MAX);
        return PROFD_EINVAL;
    }
    snprintf(vals[0].value, sizeof(vals[0].value), "%s", event);
    snprintf(vals[1].value, sizeof(vals[1].value), "%s", cap->dir);
    snprintf(vals[2].value, sizeof(vals[2].value), "%" PRId64, cap->rank);
    snprintf(vals[3].value, sizeof(vals[3].value), "%s", cap->role);
    snprintf(vals[4].value, sizeof(vals[4].value), "%s", cap->phase ? cap->phase : "");
    snprintf(vals[5].value, sizeof(vals[5].value), "%" PRId64, cap->step);
    snprintf(vals[6].value, sizeof(vals[6].value), "%" PRId64, cap->first_step);
    snprintf(vals[7].value, sizeof(vals[7].value), "%" PRId64, cap->last_step);
    snprintf(vals[8].value, sizeof(vals[8].value), "%s", cap->window);
    snprintf(vals[9].value, sizeof(vals[9].value), "%s", cap->tool);
    snprintf(vals[10].value, sizeof(vals[10].value), "%ld", (long)getpid());
    snprintf(vals[11].value, sizeof(vals[11].value), "%" PRId64, cap->part);
    snprintf(vals[12].value, sizeof(vals[12].value), "%" PRId64, cap->replica_rank);
    snprintf(vals[13].value, sizeof(vals[13].value), "%s", cap->job ? cap->job : "");
    if ((rv = expand(raw, vals, cmd, sizeof(cmd), key, reason, reason_len)) != 0) {
        return rv;
    }
    for (int i = 0; i < EXEC_VARS; i++) {
        char name[PP_MAX_NAME + 8];
        var_name(name, sizeof(name), vals[i].name);
        snprintf(vars[i], sizeof(vars[i]), "%s=%s", name, vals[i].value);
    }

    for (char **e = environ; e && *e; e++) {
        nenv++;
    }
    char **envp = calloc(nenv + EXEC_VARS + 1, sizeof(char *));
    if (envp == NULL) {
        return PROFD_ENOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < nenv; i++) {
        if (strncmp(environ[i], "PROFD_", 6) != 0) {
            envp[k++] = environ[i];
        }
    }
    for (int i = 0; i < EXEC_VARS; i++) {
        envp[k++] = vars[i];
    }
    envp[k] = NULL;

    /* its own process group, so that a timeout ends the whole command */
    char *argv[] = {"/bin/sh", "-c", cmd, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addchdir_np(&fa, cap->dir);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    rv = posix_spawn(&pid, "/bin/sh", &fa, &attr, argv, envp);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    free(envp);
    if (rv != 0) {
        snprintf(reason, reason_len, "exec: cannot run %s: %s", key, strerror(rv));
        return PROFD_EBACKEND;
    }

    int64_t timeout = pp_json_get_i64(cap->settings_json, "timeout_ms", EXEC_TIMEOUT_MS);
    int64_t deadline = mono_ms() + (timeout > 0 ? timeout : EXEC_TIMEOUT_MS);
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) {
            break;
        }
        if (w < 0 && errno != EINTR) {
            snprintf(reason, reason_len, "exec: waiting for %s: %s", key, strerror(errno));
            return PROFD_EBACKEND;
        }
        if (mono_ms() >= deadline) {
            kill(-pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            snprintf(reason, reason_len, "exec: %s did not finish within %lld ms", key,
                     (long long)(timeout > 0 ? timeout : EXEC_TIMEOUT_MS));
            return PROFD_ETIMEDOUT;
        }
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(reason, reason_len, "exec: %s exited with %s %d", key,
                 WIFEXITED(status) ? "status" : "signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        return PROFD_EBACKEND;
    }
    return 0;
}

static int exec_start(const profd_capture_t *cap, void *user, char *reason, size_t reason_len)
{
    return run(cap, "start_cmd", "start", reason, reason_len);
}

static int exec_stop(const profd_capture_t *cap, void *user, char *reason, size_t reason_len)
{
    return run(cap, "stop_cmd", "stop", reason, reason_len);
}

static const profd_backend_t exec_backend = {
    .name = "exec",
    .flags = 0,
    .start = exec_start,
    .stop = exec_stop,
    .substep = NULL,
};

const profd_backend_t *profd_backend_exec(void)
{
    return &exec_backend;
}
