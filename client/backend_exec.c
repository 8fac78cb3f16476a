/*
 * The `exec` backend: runs a shell command at start and at stop (settings
 * "start_cmd", "stop_cmd") with PROFD_* variables describing the capture, and
 * waits for it (settings "timeout_ms", default 10 s; the command is killed
 * after that and the capture fails). Commands run in the capture folder.
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
#define EXEC_VARS 13

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int run(const profd_capture_t *cap, const char *key, const char *event, char *reason,
               size_t reason_len)
{
    char cmd[4096];
    char vars[EXEC_VARS][PP_MAX_PATH + 32];
    size_t nenv = 0;
    pid_t pid;
    int status, rv;

    if (!pp_json_get_str(cap->settings_json, key, cmd, sizeof(cmd), NULL) || cmd[0] == '\0') {
        return 0; /* nothing to run at this boundary */
    }
    snprintf(vars[0], sizeof(vars[0]), "PROFD_EVENT=%s", event);
    snprintf(vars[1], sizeof(vars[1]), "PROFD_DIR=%s", cap->dir);
    snprintf(vars[2], sizeof(vars[2]), "PROFD_RANK=%" PRId64, cap->rank);
    snprintf(vars[3], sizeof(vars[3]), "PROFD_ROLE=%s", cap->role);
    snprintf(vars[4], sizeof(vars[4]), "PROFD_PHASE=%s", cap->phase ? cap->phase : "");
    snprintf(vars[5], sizeof(vars[5]), "PROFD_STEP=%" PRId64, cap->step);
    snprintf(vars[6], sizeof(vars[6]), "PROFD_FIRST_STEP=%" PRId64, cap->first_step);
    snprintf(vars[7], sizeof(vars[7]), "PROFD_LAST_STEP=%" PRId64, cap->last_step);
    snprintf(vars[8], sizeof(vars[8]), "PROFD_WINDOW=%s", cap->window);
    snprintf(vars[9], sizeof(vars[9]), "PROFD_TOOL=%s", cap->tool);
    snprintf(vars[10], sizeof(vars[10]), "PROFD_PID=%ld", (long)getpid());
    snprintf(vars[11], sizeof(vars[11]), "PROFD_PART=%" PRId64, cap->part);
    snprintf(vars[12], sizeof(vars[12]), "PROFD_REPLICA_RANK=%" PRId64, cap->replica_rank);

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

    char *argv[] = {"/bin/sh", "-c", cmd, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addchdir_np(&fa, cap->dir);
    rv = posix_spawn(&pid, "/bin/sh", &fa, NULL, argv, envp);
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
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
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
