// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * profctl apply: a Python interpreter's module search path, for a launch
 * line whose module is not beside the caller (pip-installed in the
 * interpreter's site-packages) and for `pkg://` search path entries. The
 * interpreter is asked, as the job would start it: `PYTHON -c` printing
 * sys.path, with the caller's environment ($PYTHONPATH, a virtualenv's
 * pyvenv.cfg). A launcher that is not Python itself (torchrun) is a script:
 * its `#!` line names the interpreter. Asked once per profctl run.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "profctl.h"
#include "profd/errors.h"
#include "pu_buf.h"

extern char **environ;

#define SYSPATH_WAIT_MS 10000

static const char *base(const char *p)
{
    const char *b = strrchr(p, '/');
    return b ? b + 1 : p;
}

/* The interpreter in the `#!` line of the launcher found on $PATH (or at
 * its path); NULL when there is none. */
static char *shebang(const char *prog)
{
    char path[4096], line[512];
    const char *dirs = strchr(prog, '/') ? "" : getenv("PATH");
    FILE *f = NULL;
    if (dirs == NULL || dirs[0] == '\0') {
        f = fopen(prog, "r");
    }
    while (f == NULL && dirs != NULL && dirs[0] != '\0') {
        size_t n = strcspn(dirs, ":");
        snprintf(path, sizeof(path), "%.*s/%s", (int)n, n ? dirs : ".", prog);
        f = fopen(path, "r");
        dirs = dirs[n] ? dirs + n + 1 : NULL;
    }
    if (f == NULL) {
        return NULL;
    }
    char *got = fgets(line, sizeof(line), f);
    fclose(f);
    if (got == NULL || strncmp(line, "#!", 2) != 0) {
        return NULL;
    }
    char *p = line + 2 + strspn(line + 2, " \t");
    p[strcspn(p, " \t\r\n")] = '\0';
    if (strcmp(base(p), "env") == 0) { /* #!/usr/bin/env python3 */
        p += strlen(p) + 1;
        p += strspn(p, " \t");
        p[strcspn(p, " \t\r\n")] = '\0';
    }
    return p[0] ? strdup(p) : NULL;
}

/* Run `python -c ...`, its standard output in *out. */
static int ask(const char *python, char **out)
{
    static const char code[] = "import sys\nfor p in sys.path: print(p)\n";
    char *argv[] = {(char *)python, "-c", (char *)code, NULL};
    int fd[2];
    if (pipe2(fd, O_CLOEXEC) != 0) {
        return PROFD_EIO;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, python, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (rc != 0) {
        close(fd[0]);
        return PROFD_ENOENT;
    }
    pu_sbuf_t out_b = {0};
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        long left =
            SYSPATH_WAIT_MS - ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
        struct pollfd p = {.fd = fd[0], .events = POLLIN};
        char *at = pu_sbuf_reserve(&out_b, 4096);
        if (at == NULL || left <= 0 || poll(&p, 1, (int)left) <= 0) {
            kill(pid, SIGKILL);
            rc = at ? PROFD_ETIMEDOUT : PROFD_ENOMEM;
            break;
        }
        ssize_t n = read(fd[0], at, 4096);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        pu_sbuf_commit(&out_b, (size_t)n);
    }
    close(fd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (rc == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        rc = PROFD_EIO;
    }
    if (rc != 0) {
        pu_sbuf_free(&out_b);
        return rc;
    }
    if ((*out = pu_sbuf_take(&out_b, NULL)) == NULL) {
        return PROFD_ENOMEM;
    }
    return 0;
}

int ctl_syspath(void *ctx, const char *python, const char *const **dirs, size_t *n)
{
    ctl_syspath_t *sp = ctx;
    if (!sp->asked) {
        sp->asked = true;
        char *interp = strncmp(base(python), "python", 6) == 0 ? strdup(python) : shebang(python);
        sp->rc = interp ? ask(interp, &sp->text) : PROFD_ENOENT;
        free(interp);
        for (char *p = sp->text, *e; sp->rc == 0 && p && *p && sp->n < CTL_MAX_SYSPATH; p = e) {
            e = p + strcspn(p, "\n");
            if (*e) {
                *e++ = '\0';
            }
            if (p[0] != '\0') { /* '': the working folder, already first */
                sp->dirs[sp->n++] = p;
            }
        }
    }
    *dirs = sp->dirs;
    *n = sp->n;
    return sp->rc;
}

void ctl_syspath_free(ctl_syspath_t *sp)
{
    free(sp->text);
    memset(sp, 0, sizeof(*sp));
}
