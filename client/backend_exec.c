// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The `exec` backend: runs a shell command at start and at stop (settings
 * "start_cmd", "stop_cmd") with PROFD_* variables describing the capture.
 * The training thread only spawns it (posix_spawn) and returns; a reaper
 * thread of this file waits for it (settings "timeout_ms", default 10 s;
 * the command's process group is killed after that). A stop command whose
 * capture's start command still runs is spawned by the reaper once that one
 * ended, so the two keep their order. The capture's result waits until its
 * commands are over (cl_exec_outcome, asked by the background thread before
 * it sends the result): a command that failed or timed out fails the
 * capture with its reason, and the daemon gathers only what the stop
 * command finished writing. Commands run in the capture folder.
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
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend_exec.h"
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

/* One command: spawned by the training thread (or by the reaper, after
 * the capture's previous command), waited for by the reaper. */
typedef struct exec_job {
    char dir[PP_MAX_PATH];
    char key[16]; /* start_cmd / stop_cmd */
    char cmd[EXEC_CMD_MAX + 1];
    char vars[EXEC_VARS][PP_MAX_NAME + 8 + EXEC_VAL_MAX];
    int64_t timeout_ms, deadline_ms;
    pid_t pid; /* 0: waits for the capture's previous command */
    int state; /* 1 running or queued, 0 done, < 0 failed */
    char reason[PP_MAX_PATH + 128];
    struct exec_job *next; /* oldest first */
} exec_job_t;

static pthread_mutex_t jobs_mu = PTHREAD_MUTEX_INITIALIZER;
static exec_job_t *jobs;    /* under jobs_mu */
static bool reaper_running; /* under jobs_mu */

static int spawn(exec_job_t *j)
{
    size_t nenv = 0;
    for (char **e = environ; e && *e; e++) {
        nenv++;
    }
    char **envp = calloc(nenv + EXEC_VARS + 1, sizeof(char *));
    if (envp == NULL) {
        return ENOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < nenv; i++) {
        if (strncmp(environ[i], "PROFD_", 6) != 0) {
            envp[k++] = environ[i];
        }
    }
    for (int i = 0; i < EXEC_VARS; i++) {
        envp[k++] = j->vars[i];
    }
    envp[k] = NULL;

    /* its own process group, so that a timeout ends the whole command */
    char *argv[] = {"/bin/sh", "-c", j->cmd, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addchdir_np(&fa, j->dir);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    int rv = posix_spawn(&j->pid, "/bin/sh", &fa, &attr, argv, envp);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    free(envp);
    if (rv == 0) {
        j->deadline_ms = mono_ms() + j->timeout_ms;
    }
    return rv;
}

static bool earlier_running(const exec_job_t *j)
{
    for (const exec_job_t *o = jobs; o && o != j; o = o->next) {
        if (o->state == 1 && strcmp(o->dir, j->dir) == 0) {
            return true;
        }
    }
    return false;
}

/* Under jobs_mu: has job j ended? Sets its state and reason. */
static void reap(exec_job_t *j)
{
    int status;
    pid_t w = waitpid(j->pid, &status, WNOHANG);
    if (w == 0 && mono_ms() >= j->deadline_ms) {
        kill(-j->pid, SIGKILL);
        while (waitpid(j->pid, &status, 0) < 0 && errno == EINTR) {
        }
        snprintf(j->reason, sizeof(j->reason), "exec: %s did not finish within %lld ms", j->key,
                 (long long)j->timeout_ms);
        j->state = PROFD_ETIMEDOUT;
        return;
    }
    if (w == 0 || (w < 0 && errno == EINTR)) {
        return;
    }
    if (w < 0) {
        snprintf(j->reason, sizeof(j->reason), "exec: waiting for %s: %s", j->key, strerror(errno));
        j->state = PROFD_EBACKEND;
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(j->reason, sizeof(j->reason), "exec: %s exited with %s %d", j->key,
                 WIFEXITED(status) ? "status" : "signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        j->state = PROFD_EBACKEND;
    } else {
        j->state = 0;
    }
}

static void *reaper(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&jobs_mu);
    for (;;) {
        bool running = false;
        for (exec_job_t *j = jobs; j; j = j->next) {
            if (j->state != 1) {
                continue;
            }
            if (j->pid == 0 && !earlier_running(j)) {
                int rv = spawn(j);
                if (rv != 0) {
                    snprintf(j->reason, sizeof(j->reason), "exec: cannot run %s: %s", j->key,
                             strerror(rv));
                    j->state = PROFD_EBACKEND;
                    continue;
                }
            }
            if (j->pid > 0) {
                reap(j);
            }
            running |= j->state == 1;
        }
        if (!running) {
            reaper_running = false;
            break;
        }
        pthread_mutex_unlock(&jobs_mu);
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&jobs_mu);
    }
    pthread_mutex_unlock(&jobs_mu);
    return NULL;
}

/* Under jobs_mu: a reaper runs while a job does. */
static int reaper_ensure(void)
{
    if (reaper_running) {
        return 0;
    }
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    int rv = pthread_create(&t, &a, reaper, NULL);
    pthread_attr_destroy(&a);
    if (rv == 0) {
        reaper_running = true;
    }
    return rv;
}

static int run(const profd_capture_t *cap, const char *key, const char *event, char *reason,
               size_t reason_len)
{
    char raw[EXEC_CMD_MAX + 2];
    exec_vals_t vals[EXEC_VARS] = {
        {"event", ""}, {"dir", ""},        {"rank", ""},         {"role", ""},   {"phase", ""},
        {"step", ""},  {"first_step", ""}, {"last_step", ""},    {"window", ""}, {"tool", ""},
        {"pid", ""},   {"part", ""},       {"replica_rank", ""}, {"job", ""},
    };
    int rv;

    if (!pp_json_get_str(cap->settings_json, key, raw, sizeof(raw), NULL) || raw[0] == '\0') {
        return 0; /* nothing to run at this boundary */
    }
    if (strlen(raw) > EXEC_CMD_MAX) {
        snprintf(reason, reason_len, "exec: %s longer than %d bytes", key, EXEC_CMD_MAX);
        return PROFD_EINVAL;
    }
    if (strlen(cap->dir) >= PP_MAX_PATH) {
        snprintf(reason, reason_len, "exec: capture folder name too long");
        return PROFD_EINVAL;
    }
    exec_job_t *j = calloc(1, sizeof(*j));
    if (j == NULL) {
        snprintf(reason, reason_len, "exec: out of memory");
        return PROFD_ENOMEM;
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
    if ((rv = expand(raw, vals, j->cmd, sizeof(j->cmd), key, reason, reason_len)) != 0) {
        free(j);
        return rv;
    }
    for (int i = 0; i < EXEC_VARS; i++) {
        char name[PP_MAX_NAME + 8];
        var_name(name, sizeof(name), vals[i].name);
        snprintf(j->vars[i], sizeof(j->vars[i]), "%s=%s", name, vals[i].value);
    }
    snprintf(j->dir, sizeof(j->dir), "%s", cap->dir);
    snprintf(j->key, sizeof(j->key), "%s", key);
    int64_t timeout = pp_json_get_i64(cap->settings_json, "timeout_ms", EXEC_TIMEOUT_MS);
    j->timeout_ms = timeout > 0 ? timeout : EXEC_TIMEOUT_MS;
    j->state = 1;

    pthread_mutex_lock(&jobs_mu);
    if (!earlier_running(j) && (rv = spawn(j)) != 0) {
        pthread_mutex_unlock(&jobs_mu);
        snprintf(reason, reason_len, "exec: cannot run %s: %s", key, strerror(rv));
        free(j);
        return PROFD_EBACKEND;
    }
    if ((rv = reaper_ensure()) != 0) {
        if (j->pid > 0) { /* nobody would wait for it: do it here, bounded */
            reap(j);
            if (j->state == 1) {
                kill(-j->pid, SIGKILL);
                while (waitpid(j->pid, NULL, 0) < 0 && errno == EINTR) {
                }
            }
        }
        pthread_mutex_unlock(&jobs_mu);
        snprintf(reason, reason_len, "exec: cannot start a thread to wait for %s", key);
        free(j);
        return PROFD_EBACKEND;
    }
    exec_job_t **tail = &jobs;
    while (*tail) {
        tail = &(*tail)->next;
    }
    *tail = j;
    pthread_mutex_unlock(&jobs_mu);
    return 0;
}

static bool dir_matches(const char *abs, const char *rel)
{
    size_t la = strlen(abs), lr = strlen(rel);
    if (lr == 0 || la < lr || strcmp(abs + la - lr, rel) != 0) {
        return false;
    }
    return la == lr || abs[la - lr - 1] == '/';
}

int cl_exec_outcome(const char *dir, char *reason, size_t reason_len)
{
    int rv = 0;
    pthread_mutex_lock(&jobs_mu);
    for (exec_job_t *j = jobs; j; j = j->next) {
        if (j->state == 1 && dir_matches(j->dir, dir)) {
            pthread_mutex_unlock(&jobs_mu);
            return 1;
        }
    }
    for (exec_job_t **pp = &jobs; *pp;) {
        exec_job_t *j = *pp;
        if (!dir_matches(j->dir, dir)) {
            pp = &j->next;
            continue;
        }
        if (j->state < 0 && rv == 0) {
            rv = j->state;
            snprintf(reason, reason_len, "%s", j->reason);
        }
        *pp = j->next;
        free(j);
    }
    pthread_mutex_unlock(&jobs_mu);
    return rv;
}

static int exec_start(const profd_capture_t *cap, void *user, char *reason, size_t reason_len)
{
    return run(cap, "start_cmd", "start", reason, reason_len);
}

static int exec_stop(const profd_capture_t *cap, void *user, char *reason, size_t reason_len)
{
    return run(cap, "stop_cmd", "stop", reason, reason_len);
}

const profd_backend_t *profd_backend_exec(void)
{
    static const profd_backend_t b = {.name = "exec", .start = exec_start, .stop = exec_stop};
    return &b;
}
