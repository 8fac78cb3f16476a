// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * libprofd: the client stub linked into every training worker.
 *
 * A worker opens one client, then marks steps, phases and sub-steps from its
 * training thread. A background thread registers with the node daemon and
 * receives the plan; the training thread starts and stops the profiler
 * backend exactly at the step, phase or sub-step boundary the plan names.
 *
 * Guarantees to the host process:
 *  - profd_step_begin/end, profd_phase_begin/end and profd_substep make no
 *    system call, take no lock and allocate nothing when no capture is due;
 *  - a missing, slow or restarting daemon turns every call into a cheap
 *    no-op and the client reconnects by itself (fail-open);
 *  - the library never aborts, exits or prints; diagnostics go to the log
 *    hook of profd_options_t when one is set.
 *
 * Threading: one client belongs to one training thread; every call except
 * profd_open/profd_close/profd_stats must come from that thread.
 */
#ifndef PROFD_CLIENT_H
#define PROFD_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profd/errors.h"
#include "profd/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Value of an integer option meaning "take it from the environment". */
#define PROFD_FROM_ENV (-2)
/* replica_rank value for a rank that is not part of an inference replica. */
#define PROFD_NO_REPLICA (-1)

typedef struct profd_client profd_client_t;

typedef enum profd_log_level {
    PROFD_LOG_ERROR = 0,
    PROFD_LOG_WARN = 1,
    PROFD_LOG_INFO = 2,
    PROFD_LOG_DEBUG = 3,
} profd_log_level_t;

typedef void (*profd_log_fn)(void *arg, int level, const char *msg);

/*
 * Options of profd_open(). Initialise with profd_options_init(), which sets
 * every field to "from the environment":
 *   url          PROFD_URL, else ipc://<run dir>/worker.sock where the run dir
 *                is PROFD_RUN_DIR when absolute (a relative one is ignored,
 *                as the daemon ignores it), else whichever of /run/profd and
 *                /tmp/profd-<uid> holds worker.sock, else /run/profd when
 *                that folder exists, else /tmp/profd-<uid>. Without
 *                PROFD_URL or PROFD_RUN_DIR the background thread looks
 *                again before each attempt to register. A tls+tcp:// URL
 *                (a node daemon reached over the network) takes the CA,
 *                this worker's certificate and key, and the DNS name the
 *                daemon's certificate must carry from PROFD_TLS_CA,
 *                PROFD_TLS_CERT, PROFD_TLS_KEY (default: in the certificate
 *                file) and PROFD_TLS_SERVER_NAME (default: the URL's host);
 *                a file that cannot be read fails profd_open (PROFD_EINVAL).
 *   job          PROFD_JOB, else "default"
 *   role         PROFD_ROLE, else "worker" (the primary role)
 *   rank         RANK, else 0;  local_rank LOCAL_RANK;  world_size WORLD_SIZE
 *   replica_rank PROFD_REPLICA_RANK, else none
 *   host         PROFD_HOST, else gethostname()
 * and from PROFD_ROLES ("role[:rank],...", e.g. "actor,rollout,ref" or
 * "critic:3"), more roles the process hosts (see profd_add_role).
 */
typedef struct profd_options {
    const char *url;
    const char *job;
    const char *role;
    int64_t rank;
    int64_t local_rank;
    int64_t world_size;
    int64_t replica_rank;
    const char *host;
    /* How often the background thread flushes step events (ms; default 50). */
    int flush_ms;
    /* Optional log hook; called from either thread, never while a lock of
     * the training thread is held. */
    profd_log_fn log;
    void *log_arg;
    int log_level;
} profd_options_t;

/* Fill `o` with the defaults described above. */
PROFD_API void profd_options_init(profd_options_t *o);

/* torch.profiler schedule in sub-steps; active == 0 means "no schedule". */
typedef struct profd_schedule {
    int64_t skip_first;
    int64_t wait;
    int64_t warmup;
    int64_t active;
    int64_t repeat;
} profd_schedule_t;

/*
 * What a backend is asked to capture. Valid only during the callback; copy
 * what you keep. `dir` exists and is empty when start() is first called for
 * a capture; write every output file below it.
 */
typedef struct profd_capture {
    int64_t window_id;
    const char *window; /* "w3-step2" */
    const char *job;
    const char *role;          /* "e2e" for end-to-end captures */
    const char *phase;         /* NULL for end-to-end captures */
    int64_t rank;              /* the rank in `role`'s numbering (e2e: the process's) */
    int64_t replica_rank;      /* PROFD_NO_REPLICA when none */
    int64_t first_step;        /* planned, inclusive */
    int64_t last_step;         /* planned, inclusive; -1: until stopped */
    int64_t step;              /* the step at which this call happens */
    int64_t substep;           /* start: first sub-step recorded (0-based);
                                  stop: one past the last one recorded */
    int64_t part;              /* recorded span number (schedule cycle) */
    const char *tool;          /* "torch", "npu", "nsys", "sim", ... */
    const char *mode;          /* "e2e" or "discrete" */
    const char *settings_json; /* tool settings, a JSON object ("{}" if none) */
    const char *dir;           /* absolute output folder */
    profd_schedule_t schedule;
} profd_capture_t;

/* Backend flags. */
#define PROFD_BACKEND_NATIVE_SCHEDULE                                                              \
    1u /* backend walks the schedule itself:                                                       \
          start/stop once per capture and                                                          \
          substep() on every sub-step */

/*
 * A profiler backend: a table of callbacks run on the training thread.
 * start/stop return 0, or a negative profd error with a one-line reason
 * written into `reason`; the capture is then marked failed with that reason
 * and no further call is made for it.
 *
 * Without PROFD_BACKEND_NATIVE_SCHEDULE, start() and stop() bracket every
 * recorded span: once per capture, or once per active cycle of a schedule.
 */
typedef struct profd_backend {
    const char *name;
    unsigned flags;
    int (*start)(const profd_capture_t *cap, void *user, char *reason, size_t reason_len);
    int (*stop)(const profd_capture_t *cap, void *user, char *reason, size_t reason_len);
    int (*substep)(const profd_capture_t *cap, void *user, char *reason, size_t reason_len);
} profd_backend_t;

/*
 * Open a client: copies the options, starts the background thread and
 * returns at once, whether or not a daemon is running (registration happens
 * in the background). NULL opts: everything from the environment.
 * Returns 0 and *out, or PROFD_EINVAL (bad option such as an invalid role
 * name), PROFD_ENOMEM; *out is untouched on failure.
 */
PROFD_API int profd_open(profd_client_t **out, const profd_options_t *opts);

/* Close: ends running captures (marked truncated), reports what it can within
 * a short bounded time, stops the thread and frees the client. NULL is a
 * no-op. */
PROFD_API void profd_close(profd_client_t *c);

/* Step boundaries. Steps count from 1 and increase. Returns 0, or
 * PROFD_EINVAL for a NULL client. Never blocks. */
PROFD_API int profd_step_begin(profd_client_t *c, int64_t step);
PROFD_API int profd_step_end(profd_client_t *c, int64_t step);

/* Phases inside a step: "generate", "compute_log_prob", "update_actor"...
 * The name must be an identifier ([A-Za-z0-9_-], at most 64 chars):
 * PROFD_EINVAL otherwise. Phases do not nest. profd_phase_begin marks a
 * phase of the primary role. */
PROFD_API int profd_phase_begin(profd_client_t *c, const char *phase);
PROFD_API int profd_phase_end(profd_client_t *c, const char *phase);

/*
 * One process, several roles (verl's hybrid engine hosts actor, rollout and
 * ref): declare each role the process hosts beyond the primary one, with
 * the process's rank in that role's own numbering (PROFD_FROM_ENV: its
 * global rank), then name the role of each phase. A window selecting a role
 * by rank tests that rank; an end-to-end window captures the process once
 * per step, whatever its roles; a discrete one once per role phase.
 * profd_add_role: 0 (also when the role is already declared with this
 * rank, or with any rank when `rank` is PROFD_FROM_ENV), PROFD_EINVAL (not an identifier, "e2e", a
 * negative rank, or declared with another rank), PROFD_ELIMIT (16 roles). The client registers
 * again in the background. Call it from the training thread, before or between steps; it takes a
 * lock (not a step-time call). profd_phase_begin_role: as profd_phase_begin for a phase of `role`
 * (NULL: the primary role); PROFD_EINVAL when the role was not declared. No system call, lock or
 * allocation.
 */
PROFD_API int profd_add_role(profd_client_t *c, const char *role, int64_t rank);
PROFD_API int profd_phase_begin_role(profd_client_t *c, const char *role, const char *phase);

/*
 * Sections: where a step's time goes. A worker (or PROFD_AUTO and the
 * framework integrations for it) marks the time its training thread spends
 * loading data, in the forward pass, the backward pass, the optimizer, and
 * waiting in collective communication; the daemon adds the step's compute
 * (forward + backward + optimizer) and the rest (the step's time outside
 * every section). Time is exclusive: a section begun inside another one
 * (a collective's wait inside the backward pass) is taken out of the outer
 * one, so the sections of a step add up to at most its time. The totals of
 * a step travel with its end event.
 *
 * profd_section_begin / _end: the section's clock starts / stops now (at
 * most 8 open sections nest; an end must name the innermost open one:
 * PROFD_ESTATE otherwise, PROFD_EINVAL for a section out of range).
 * profd_section_add: `us` microseconds measured by the caller (PROFD_EINVAL
 * when negative), added to the section as it is, taken out of no other.
 * Training-thread calls: no system call (the clock is the vDSO), lock or
 * allocation.
 */
typedef enum profd_section {
    PROFD_SECTION_DATA = 0,      /* the next batch: the DataLoader's __next__ */
    PROFD_SECTION_FORWARD = 1,   /* the forward pass */
    PROFD_SECTION_BACKWARD = 2,  /* the backward pass */
    PROFD_SECTION_OPTIMIZER = 3, /* the optimizer's step */
    PROFD_SECTION_COMM = 4,      /* waiting for collective communication */
} profd_section_t;
#define PROFD_SECTIONS 5
PROFD_API int profd_section_begin(profd_client_t *c, int section);
PROFD_API int profd_section_end(profd_client_t *c, int section);
PROFD_API int profd_section_add(profd_client_t *c, int section, int64_t us);

/* The windows running in this process at the current step, as the training
 * thread sees them: 0 when no profd window covers this step (a framework
 * may then run its own profiler without the two meeting on one thread).
 * Training-thread call: no system call, lock or allocation. PROFD_EINVAL
 * for a NULL client. */
PROFD_API int profd_windows_active(profd_client_t *c);

/* One sub-step inside the current phase (a decode step, a micro-batch):
 * drives the window's schedule. Call it after the sub-step's work. */
PROFD_API int profd_substep(profd_client_t *c);

/*
 * Register a backend for captures whose tool equals b->name; the first
 * backend set is also used for any tool without its own backend ("*" as a
 * name makes a backend the default explicitly). The table must outlive the
 * client. Returns 0, PROFD_EINVAL, or PROFD_ELIMIT (more than 8 backends).
 * Call it from the training thread, before or between steps.
 */
PROFD_API int profd_set_backend(profd_client_t *c, const profd_backend_t *b, void *user);

/* Built-in backends: the tools "sim" and "exec" (docs/profiling-config.md). */
/* sim: writes a synthetic Chrome-trace JSON of settings "bytes" (default
 * 64 KiB) per recorded span: trace-<step>[-<part>].json. */
PROFD_API const profd_backend_t *profd_backend_sim(void);
/* exec: runs the commands in settings "start_cmd" / "stop_cmd" with /bin/sh
 * in the capture folder, with PROFD_* variables (PROFD_EVENT, PROFD_DIR,
 * PROFD_RANK, PROFD_REPLICA_RANK, PROFD_ROLE, PROFD_PHASE, PROFD_JOB,
 * PROFD_STEP, PROFD_FIRST_STEP, PROFD_LAST_STEP, PROFD_PART, PROFD_WINDOW,
 * PROFD_TOOL, PROFD_PID) and the same values as {dir}, {pid}, ... placeholders
 * in the command ("perf record -p {pid} -o {dir}/perf.data &"); a placeholder
 * whose value holds shell metacharacters fails the capture (PROFD_EINVAL).
 * The training thread only spawns each command (its own process group) and
 * returns; the library waits for it on a thread of its own (settings
 * "timeout_ms", default 10 s; then the group is killed), runs a stop command
 * after its capture's start command ended, and sends the capture's result
 * once its commands are over: a non-zero exit or a timeout fails the capture
 * with the reason. */
PROFD_API const profd_backend_t *profd_backend_exec(void);
/* cuda: cudaProfilerStart/Stop from a dlopen'ed CUDA runtime, for
 * `nsys profile --capture-range=cudaProfilerApi`. */
PROFD_API const profd_backend_t *profd_backend_cuda(void);

/* Counters for tests, benchmarks and status displays. */
typedef struct profd_stats {
    bool connected;      /* registered with a daemon right now */
    int64_t client_id;   /* id the daemon gave, 0 when not registered */
    int64_t plan_gen;    /* plan generation adopted by the training thread */
    int64_t windows;     /* windows in the adopted plan */
    int64_t captures;    /* captures started */
    int64_t events_sent; /* step events delivered */
    int64_t events_dropped;
    int64_t reconnects;
} profd_stats_t;
PROFD_API int profd_stats(profd_client_t *c, profd_stats_t *out);

#ifdef __cplusplus
}
#endif
#endif
