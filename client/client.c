// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * libprofd public API: options, open/close and the training-thread calls.
 * The step calls are the hot path: with no capture due they do one atomic
 * load, one ring push and two compares (see engine.h); no syscall (the clock
 * is the vDSO), no lock, no allocation.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

int cl_mkdirs(const char *path, void *arg)
{
    char buf[PP_MAX_PATH];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof(buf)) {
        return PROFD_EINVAL;
    }
    memcpy(buf, path, n + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
                return PROFD_EIO;
            }
            *p = '/';
        }
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
        return PROFD_EIO;
    }
    return 0;
}

/* ---- step and phase markers (engine.h): only while a window runs ---- */

static int64_t markers_now(void *arg)
{
    (void)arg;
    return cl_now_us();
}

/* <dir>/profd-markers-p<part>.json, written aside and renamed; a failure
 * costs the capture its markers, nothing else. */
void cl_markers_write(const char *dir, int64_t part, const char *json, size_t len, void *arg)
{
    char name[64], path[PP_MAX_PATH + 80], tmp[PP_MAX_PATH + 96];
    (void)arg;
    snprintf(name, sizeof(name), CE_MARKERS_NAME, (long long)part);
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path) ||
        (size_t)snprintf(tmp, sizeof(tmp), "%s.part", path) >= sizeof(tmp)) {
        return;
    }
    FILE *f = fopen(tmp, "wx");
    if (f == NULL) {
        return;
    }
    bool ok = fwrite(json, 1, len, f) == len;
    if (fclose(f) != 0 || !ok || rename(tmp, path) != 0) {
        unlink(tmp);
    }
}

/* ---- options ---- */

void profd_options_init(profd_options_t *o)
{
    memset(o, 0, sizeof(*o));
    o->rank = PROFD_FROM_ENV;
    o->local_rank = PROFD_FROM_ENV;
    o->world_size = PROFD_FROM_ENV;
    o->replica_rank = PROFD_FROM_ENV;
    o->flush_ms = 50;
    o->log_level = PROFD_LOG_WARN;
}

static int64_t env_i64(const char *name, int64_t def, bool *bad)
{
    const char *s = getenv(name);
    char *end;
    if (s == NULL || *s == '\0') {
        return def;
    }
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end != '\0') {
        *bad = true;
        return def;
    }
    return v;
}

static const char *env_str(const char *name, const char *def)
{
    const char *s = getenv(name);
    return (s && *s) ? s : def;
}

/* Host names become folder names: keep identifier characters and dots. */
static void sanitize_host(char *dst, size_t len, const char *src)
{
    size_t j = 0;
    for (size_t i = 0; src[i] && j + 1 < len; i++) {
        char ch = src[i];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.';
        dst[j++] = ok ? ch : '-';
    }
    dst[j] = '\0';
    while (dst[0] == '.') {
        dst[0] = '-';
    }
    for (char *p = strstr(dst, ".."); p; p = strstr(dst, "..")) {
        p[1] = '-';
    }
    if (dst[0] == '\0') {
        snprintf(dst, len, "localhost");
    }
}

/* PROFD_ROLES: "role[:rank],..." (a role without a rank: the global rank). */
static int parse_roles(const char *s, ce_identity_t *id)
{
    char buf[1024], *save = NULL;
    if (s == NULL || *s == '\0') {
        return 0;
    }
    if (strlen(s) >= sizeof(buf)) {
        return PROFD_EINVAL;
    }
    snprintf(buf, sizeof(buf), "%s", s);
    for (char *tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
        char *colon = strchr(tok, ':'), *end;
        int64_t rank = id->rank;
        if (colon) {
            *colon = '\0';
            errno = 0;
            long long v = strtoll(colon + 1, &end, 10);
            if (errno || *end != '\0' || colon[1] == '\0' || v < 0) {
                return PROFD_EINVAL;
            }
            rank = v;
        }
        int i;
        if (!pp_ident_ok(tok) || strcmp(tok, "e2e") == 0) {
            return PROFD_EINVAL;
        }
        for (i = 0; i < id->nroles && strcmp(id->roles[i].name, tok) != 0; i++) {
        }
        if (i == id->nroles) {
            if (id->nroles == PP_MAX_ROLES) {
                return PROFD_EINVAL;
            }
            snprintf(id->roles[i].name, sizeof(id->roles[i].name), "%s", tok);
            id->nroles++;
        }
        id->roles[i].rank = rank; /* the primary role listed: its own rank */
    }
    return 0;
}

static int resolve(profd_client_t *c, const profd_options_t *o, const cl_rundir_t *rundir,
                   ce_identity_t *id)
{
    bool bad = false;
    char host[256];
    const char *s;

    s = o->url ? o->url : env_str("PROFD_URL", NULL);
    if (s) {
        if (strlen(s) >= sizeof(c->url)) {
            return PROFD_EINVAL;
        }
        snprintf(c->url, sizeof(c->url), "%s", s);
    } else {
        c->rundir = *rundir;
        c->url_search = rundir->n > 1;
        cl_rundir_url(&c->rundir, "worker.sock", c->url, sizeof(c->url));
    }
    s = o->job ? o->job : env_str("PROFD_JOB", "default");
    if (!pp_ident_ok(s)) {
        return PROFD_EINVAL;
    }
    snprintf(id->job, sizeof(id->job), "%s", s);
    s = o->role ? o->role : env_str("PROFD_ROLE", "worker");
    if (!pp_ident_ok(s)) {
        return PROFD_EINVAL;
    }
    snprintf(id->role, sizeof(id->role), "%s", s);
    s = o->host ? o->host : env_str("PROFD_HOST", NULL);
    if (s == NULL) {
        if (gethostname(host, sizeof(host)) != 0) {
            snprintf(host, sizeof(host), "localhost");
        }
        host[sizeof(host) - 1] = '\0';
        s = host;
    }
    sanitize_host(id->host, sizeof(id->host), s);

    id->rank = o->rank != PROFD_FROM_ENV ? o->rank : env_i64("RANK", 0, &bad);
    c->local_rank =
        o->local_rank != PROFD_FROM_ENV ? o->local_rank : env_i64("LOCAL_RANK", 0, &bad);
    c->world_size =
        o->world_size != PROFD_FROM_ENV ? o->world_size : env_i64("WORLD_SIZE", 1, &bad);
    int64_t rep = o->replica_rank != PROFD_FROM_ENV
                      ? o->replica_rank
                      : env_i64("PROFD_REPLICA_RANK", PROFD_NO_REPLICA, &bad);
    id->replica_rank = rep < 0 ? PP_NONE : rep;
    id->pid = (int64_t)getpid();
    if (bad || id->rank < 0 || c->local_rank < 0 || c->world_size < 1) {
        return PROFD_EINVAL;
    }
    snprintf(id->roles[0].name, sizeof(id->roles[0].name), "%s", id->role);
    id->roles[0].rank = id->rank;
    id->nroles = 1;
    if (parse_roles(env_str("PROFD_ROLES", NULL), id) != 0) {
        return PROFD_EINVAL;
    }
    c->flush_ms = o->flush_ms > 0 ? o->flush_ms : 50;
    c->log = o->log;
    c->log_arg = o->log_arg;
    c->log_level = o->log_level;
    return 0;
}

/* ---- results: engine -> outbox ---- */

static void emit_result(pp_result_t *res, void *arg)
{
    profd_client_t *c = arg;
    cl_result_t *node = malloc(sizeof(*node));
    if (node == NULL) {
        pp_record_free(&pp_desc_result, res);
        free(res);
        return;
    }
    node->res = res;
    node->next = atomic_load_explicit(&c->outbox, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&c->outbox, &node->next, node,
                                                  memory_order_release, memory_order_relaxed)) {
    }
    cl_io_kick(c);
}

/* An event into the ring; the background thread is woken only when it
 * sleeps (the first event after an idle pause). */
static inline void push(profd_client_t *c, int64_t kind, int64_t v)
{
    cl_ring_push(c->ring, kind, v, cl_clock_ticks(&c->clock));
    if (__builtin_expect(cl_ring_sleeping(c->ring), 0)) {
        cl_io_kick(c);
    }
}

/* ---- open / close ---- */

int profd_open(profd_client_t **out, const profd_options_t *opts)
{
    cl_rundir_t rundir;
    cl_rundir_init(&rundir);
    return cl_open(out, opts, &rundir);
}

int cl_open(profd_client_t **out, const profd_options_t *opts, const cl_rundir_t *rundir)
{
    profd_options_t defaults;
    ce_identity_t id;
    profd_client_t *c;
    int rv;

    if (out == NULL) {
        return PROFD_EINVAL;
    }
    if (opts == NULL) {
        profd_options_init(&defaults);
        opts = &defaults;
    }
    if ((c = calloc(1, sizeof(*c))) == NULL) {
        return PROFD_ENOMEM;
    }
    memset(&id, 0, sizeof(id));
    if ((rv = resolve(c, opts, rundir, &id)) != 0) {
        free(c);
        return rv;
    }
    if (c->url_search && rundir->ignored) {
        cl_log(c, PROFD_LOG_WARN,
               "profd: PROFD_RUN_DIR is not an absolute path of at most %d bytes: ignored",
               PP_RUN_DIR_MAX);
    }
    if ((c->ring = malloc(sizeof(*c->ring))) == NULL) {
        free(c);
        return PROFD_ENOMEM;
    }
    cl_ring_init(c->ring);
    cl_clock_init(&c->clock, getenv("PROFD_CLOCK"));
    c->cur_phase = -1;
    atomic_init(&c->nphase_names, 0);
    atomic_init(&c->pending, NULL);
    atomic_init(&c->adopted_seq, 0);
    atomic_init(&c->outbox, NULL);
    ce_hooks_t hooks = {cl_mkdirs, emit_result, c, markers_now, cl_markers_write};
    ce_init(&c->eng, &id, &hooks);
    pthread_mutex_init(&c->roles_mu, NULL);
    memcpy(c->roles, c->eng.id.roles, sizeof(c->roles));
    c->nroles = c->eng.id.nroles;
    atomic_init(&c->roles_gen, 1);
    if ((rv = cl_io_start(c)) != 0) {
        pthread_mutex_destroy(&c->roles_mu);
        free(c->ring);
        free(c);
        return rv;
    }
    *out = c;
    return 0;
}

static inline void adopt_pending(profd_client_t *c)
{
    cl_plan_t *p = atomic_load_explicit(&c->pending, memory_order_acquire);
    if (__builtin_expect(p != c->plan, 0)) {
        ce_set_spool(&c->eng, p->spool);
        ce_adopt(&c->eng, &p->p);
        c->plan = p;
        atomic_store_explicit(&c->adopted_seq, p->seq, memory_order_release);
        atomic_store_explicit(&c->st_plan_gen, p->p.gen, memory_order_relaxed);
        atomic_store_explicit(&c->st_windows, (int64_t)p->p.entries_n, memory_order_relaxed);
    }
}

void profd_close(profd_client_t *c)
{
    if (c == NULL) {
        return;
    }
    adopt_pending(c);
    ce_fini(&c->eng); /* ends captures on the calling (training) thread */
    cl_io_stop(c);    /* delivers results, says bye, frees plans */
    cl_result_t *r = atomic_exchange(&c->outbox, NULL);
    while (r) {
        cl_result_t *next = r->next;
        pp_record_free(&pp_desc_result, r->res);
        free(r->res);
        free(r);
        r = next;
    }
    pthread_mutex_destroy(&c->roles_mu);
    free(c->ring);
    free(c);
}

int profd_add_role(profd_client_t *c, const char *role, int64_t rank)
{
    if (c == NULL || role == NULL) {
        return PROFD_EINVAL;
    }
    if (rank == PROFD_FROM_ENV) {
        if (ce_role_index(&c->eng, role) >= 0) {
            return 0; /* declared already, with whatever rank */
        }
        rank = c->eng.id.rank;
    }
    int before = c->eng.id.nroles;
    int rv = ce_add_role(&c->eng, role, rank);
    if (rv < 0) {
        return rv;
    }
    if (c->eng.id.nroles != before) {
        pthread_mutex_lock(&c->roles_mu);
        memcpy(c->roles, c->eng.id.roles, sizeof(c->roles));
        c->nroles = c->eng.id.nroles;
        pthread_mutex_unlock(&c->roles_mu);
        atomic_fetch_add(&c->roles_gen, 1);
        cl_io_kick(c);
        cl_log(c, PROFD_LOG_DEBUG, "profd: role %s (rank %lld) added", role, (long long)rank);
    }
    return 0;
}

/* ---- the training thread's calls ---- */

int profd_step_begin(profd_client_t *c, int64_t step)
{
    if (__builtin_expect(c == NULL, 0)) {
        return PROFD_EINVAL;
    }
    adopt_pending(c);
    push(c, CL_EV_STEP_BEGIN, step);
    ce_on_step_begin(&c->eng, step);
    return 0;
}

/* ---- sections ---- */

/* The step's section totals into the ring (before its end event): the
 * timed ones in ticks (the background thread turns them into time), the
 * added ones in nanoseconds; an open section's time so far counts in this
 * step. */
static void sections_flush(profd_client_t *c, int64_t step)
{
    if (c->sec_depth > 0) {
        uint64_t now = cl_clock_ticks(&c->clock);
        int top = c->sec_open[c->sec_depth - 1];
        c->sec_ticks[top] += now - c->sec_t0;
        c->sec_used |= 1u << top;
        c->sec_t0 = now;
    }
    for (int i = 0; i < PROFD_SECTIONS; i++) {
        if (c->sec_used & (1u << i)) {
            cl_ring_push(c->ring, CL_EV_SECTION + i, step, c->sec_ticks[i]);
            c->sec_ticks[i] = 0;
        }
        if (c->sec_added & (1u << i)) {
            cl_ring_push(c->ring, CL_EV_SECTION_NS + i, step, c->sec_ns[i]);
            c->sec_ns[i] = 0;
        }
    }
    c->sec_used = c->sec_added = 0;
}

int profd_section_begin(profd_client_t *c, int section)
{
    if (c == NULL || section < 0 || section >= PROFD_SECTIONS) {
        return PROFD_EINVAL;
    }
    if (c->sec_depth == CL_SECTION_DEPTH) {
        return PROFD_ESTATE;
    }
    uint64_t now = cl_clock_ticks(&c->clock);
    if (c->sec_depth > 0) { /* the outer one pauses */
        int outer = c->sec_open[c->sec_depth - 1];
        c->sec_ticks[outer] += now - c->sec_t0;
        c->sec_used |= 1u << outer;
    }
    c->sec_open[c->sec_depth++] = section;
    c->sec_t0 = now;
    return 0;
}

int profd_section_end(profd_client_t *c, int section)
{
    if (c == NULL || section < 0 || section >= PROFD_SECTIONS) {
        return PROFD_EINVAL;
    }
    if (c->sec_depth == 0 || c->sec_open[c->sec_depth - 1] != section) {
        return PROFD_ESTATE;
    }
    uint64_t now = cl_clock_ticks(&c->clock);
    c->sec_ticks[section] += now - c->sec_t0;
    c->sec_used |= 1u << section;
    c->sec_depth--;
    c->sec_t0 = now; /* the outer one resumes */
    return 0;
}

int profd_section_add(profd_client_t *c, int section, int64_t us)
{
    if (c == NULL || section < 0 || section >= PROFD_SECTIONS || us < 0 || us > PP_INT_MAX / 1000) {
        return PROFD_EINVAL;
    }
    c->sec_ns[section] += (uint64_t)us * 1000;
    c->sec_added |= 1u << section;
    return 0;
}

int profd_step_end(profd_client_t *c, int64_t step)
{
    if (__builtin_expect(c == NULL, 0)) {
        return PROFD_EINVAL;
    }
    adopt_pending(c);
    if (__builtin_expect((c->sec_used | c->sec_added | (unsigned)c->sec_depth) != 0, 0)) {
        sections_flush(c, step);
    }
    push(c, CL_EV_STEP_END, step);
    ce_on_step_end(&c->eng, step);
    if (__builtin_expect(c->eng.captures_started != c->captures_seen, 0)) {
        c->captures_seen = c->eng.captures_started;
        atomic_store_explicit(&c->st_captures, c->captures_seen, memory_order_relaxed);
    }
    return 0;
}

static size_t phase_len(const char *phase)
{
    size_t n = 0;
    if (phase == NULL) {
        return 0;
    }
    for (; phase[n]; n++) {
        char ch = phase[n];
        if (n >= PP_MAX_NAME || !((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                                  (ch >= '0' && ch <= '9') || ch == '_' || ch == '-')) {
            return 0;
        }
    }
    return n;
}

/* The index of a phase (of role `ri`) in the table the background thread
 * sends with the phase events: its name, "role.phase" for a role other than
 * the primary one; -1 when the table is full. A few compares: phases are
 * few and their calls coarse. */
static int phase_index(profd_client_t *c, int ri, const char *phase, size_t n)
{
    int k = atomic_load_explicit(&c->nphase_names, memory_order_relaxed);
    for (int i = 0; i < k; i++) {
        if (c->phase_roles[i] == ri && memcmp(c->phase_keys[i], phase, n + 1) == 0) {
            return i;
        }
    }
    if (k == CL_PHASE_NAMES) {
        return -1;
    }
    memcpy(c->phase_keys[k], phase, n + 1);
    c->phase_roles[k] = ri;
    if (ri == 0) {
        memcpy(c->phase_names[k], phase, n + 1);
    } else {
        /* "role.phase": both at most PP_MAX_NAME, the table's entries hold both */
        const char *role = c->eng.id.roles[ri].name;
        size_t rl = strlen(role);
        memcpy(c->phase_names[k], role, rl);
        c->phase_names[k][rl] = '.';
        memcpy(c->phase_names[k] + rl + 1, phase, n + 1);
    }
    atomic_store_explicit(&c->nphase_names, k + 1, memory_order_release);
    return k;
}

static void phase_event(profd_client_t *c, int ri, const char *phase, size_t n)
{
    c->cur_phase = phase_index(c, ri, phase, n);
    if (c->cur_phase >= 0) {
        push(c, CL_EV_PHASE_BEGIN, c->cur_phase);
    }
}

int profd_phase_begin(profd_client_t *c, const char *phase)
{
    size_t n = phase_len(phase);
    if (c == NULL || n == 0) {
        return PROFD_EINVAL;
    }
    adopt_pending(c);
    phase_event(c, 0, phase, n);
    ce_on_phase_begin(&c->eng, 0, phase, n);
    return 0;
}

int profd_phase_begin_role(profd_client_t *c, const char *role, const char *phase)
{
    size_t n = phase_len(phase);
    int ri;
    if (c == NULL || n == 0 || (ri = ce_role_index(&c->eng, role)) < 0) {
        return PROFD_EINVAL;
    }
    adopt_pending(c);
    phase_event(c, ri, phase, n);
    ce_on_phase_begin(&c->eng, ri, phase, n);
    return 0;
}

int profd_phase_end(profd_client_t *c, const char *phase)
{
    if (c == NULL || (phase && phase_len(phase) == 0)) {
        return PROFD_EINVAL;
    }
    if (!c->eng.in_phase) {
        return PROFD_ESTATE;
    }
    if (c->cur_phase >= 0) {
        push(c, CL_EV_PHASE_END, c->cur_phase);
        c->cur_phase = -1;
    }
    ce_on_phase_end(&c->eng);
    return 0;
}

int profd_windows_active(profd_client_t *c)
{
    if (c == NULL) {
        return PROFD_EINVAL;
    }
    adopt_pending(c);
    return c->eng.busy;
}

int profd_substep(profd_client_t *c)
{
    if (c == NULL) {
        return PROFD_EINVAL;
    }
    ce_on_substep(&c->eng);
    return 0;
}

int profd_set_backend(profd_client_t *c, const profd_backend_t *b, void *user)
{
    if (c == NULL) {
        return PROFD_EINVAL;
    }
    return ce_add_backend(&c->eng, b, user);
}

int profd_stats(profd_client_t *c, profd_stats_t *out)
{
    if (c == NULL || out == NULL) {
        return PROFD_EINVAL;
    }
    memset(out, 0, sizeof(*out));
    out->connected = atomic_load(&c->st_connected) != 0;
    out->client_id = atomic_load(&c->st_client_id);
    out->plan_gen = atomic_load(&c->st_plan_gen);
    out->windows = atomic_load(&c->st_windows);
    out->captures = atomic_load(&c->st_captures);
    out->events_sent = atomic_load(&c->st_events_sent);
    out->events_dropped = (int64_t)cl_ring_dropped(c->ring);
    out->reconnects = atomic_load(&c->st_reconnects);
    return 0;
}
