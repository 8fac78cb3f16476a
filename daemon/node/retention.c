// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Retention of the save_path tree and the free-disk floor (see retention.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <uv.h>

#include "confine.h"
#include "prune.h"
#include "retention.h"

#define PASS_MS  60000 /* a pass every minute */
#define FIRST_MS 1000  /* and one soon after the start (the journal restored) */
/* A finished window's measure is kept while its folder is unchanged, and
 * walked again after this at most: what its own folder's status cannot
 * show (a file put in or removed by hand below it) is seen then. */
#define REMEASURE_MS (10 * 60000)

/* A finished window's last walk, kept while nothing works on it (it stays
 * final, never busy at a pass) and reused while its folder's own status is
 * the same: every file the daemon writes into a window's folder (the
 * manifest, the report, the merged trace) is made as a .part there and
 * renamed, which changes the folder's mtime. */
typedef struct seen {
    int64_t id;
    int64_t bytes, mtime_ms; /* what the walk found */
    dev_t dev;               /* the folder's status as the walk began */
    ino_t ino;
    struct timespec mtim;
    int64_t walked_ms; /* when (the loop's clock) */
    bool keep;         /* pass_start: its window still is one to keep it for */
} seen_t;

typedef struct item {
    int64_t id;
    char dir[PP_MAX_PATH]; /* the window's folder; root: dir[0..root_len) */
    size_t root_len;
    bool final, busy;
    bool exists; /* measured: the folder is there */
    int64_t bytes, mtime_ms;
    char reason[128]; /* removing: why */
    int rv;           /* removing: 0 removed */
    bool reuse;       /* measuring: seen holds its last walk, reused if unchanged */
    seen_t seen;
    bool walked;            /* measured by a walk of its folder tree: */
    int64_t files, folders; /* the entries the walk looked at */
    struct stat st;         /* and its folder's status as it began */
    bool reused;            /* or seen's figures reused: its folder unchanged */
} item_t;

typedef struct pass {
    uv_work_t work;
    pd_retention_t *r;
    bool remove; /* measure the items, or remove them */
    item_t *items;
    size_t n;
    char save_path[PD_PATH_MAX];
    int64_t fs_size; /* the save_path file system's, 0 unknown */
} pass_t;

struct pd_retention {
    pd_node_t *n;
    uv_timer_t timer;
    bool running, again, stopping;
    pd_retention_stats_t stats;
    seen_t *seen; /* by id, ascending */
    size_t nseen, capseen;
};

static bool final_state(const pd_window_t *w)
{
    return w->state == PP_WS_DONE || w->state == PP_WS_CANCELLED || w->state == PP_WS_FAILED;
}

/* Does this daemon own w's folder in the tree (a node streaming to its
 * coordinator does not)? */
static bool owned(const pd_node_t *n, const pd_window_t *w)
{
    char root[PP_MAX_PATH];
    if (w->pruned[0] != '\0' || w->root_len == 0 || w->root_len >= sizeof(root) ||
        w->dir[w->root_len] != '/' || (w->mirror && !n->cfg->shared_save_path)) {
        return false;
    }
    /* only the daemon's save_path tree: a folder elsewhere (a request's
     * absolute save_path, a journal record naming one) is never removed */
    memcpy(root, w->dir, w->root_len);
    root[w->root_len] = '\0';
    return pd_confine_under(n->save_path, root);
}

static void human(int64_t v, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double d = (double)v;
    int u = 0;
    while (d >= 1024 && u < 5) {
        d /= 1024;
        u++;
    }
    snprintf(buf, len, u ? "%.1f%s" : "%.0f%s", d, units[u]);
}

/* ---- on the thread pool ---- */

static bool same_folder(const struct stat *st, const seen_t *s)
{
    return S_ISDIR(st->st_mode) && st->st_dev == s->dev && st->st_ino == s->ino &&
           st->st_mtim.tv_sec == s->mtim.tv_sec && st->st_mtim.tv_nsec == s->mtim.tv_nsec;
}

/* *rootfd: the descriptor of the tree root named rootname, kept from one
 * item to the next while they share it (-1: none yet). */
static void measure_one(item_t *it, int *rootfd, char *rootname, size_t rootlen)
{
    char root[PP_MAX_PATH], why[256];
    const char *rel = it->dir + it->root_len + 1;
    pd_confine_usage_t u;
    struct stat st;
    snprintf(root, sizeof(root), "%.*s", (int)it->root_len, it->dir);
    it->exists = false;
    if (*rootfd < 0 || strcmp(root, rootname) != 0) {
        if (*rootfd >= 0) {
            close(*rootfd);
        }
        if (pd_confine_root(root, rootfd, why, sizeof(why)) != 0) {
            *rootfd = -1;
            return;
        }
        snprintf(rootname, rootlen, "%s", root);
    }
    /* kept: one fstatat of its folder instead of a walk of its tree */
    if (it->reuse && fstatat(*rootfd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        same_folder(&st, &it->seen)) {
        it->exists = it->reused = true;
        it->bytes = it->seen.bytes;
        it->mtime_ms = it->seen.mtime_ms;
        return;
    }
    if (pd_confine_measure(*rootfd, rel, &u) == 0) {
        it->exists = it->walked = true;
        it->bytes = u.bytes;
        it->mtime_ms = u.mtime_ms;
        it->files = u.files;
        it->folders = u.folders;
        it->st = u.st;
    }
}

static void remove_one(item_t *it)
{
    char root[PP_MAX_PATH], why[256];
    const char *rel = it->dir + it->root_len + 1, *base;
    int fd, dfd;
    snprintf(root, sizeof(root), "%.*s", (int)it->root_len, it->dir);
    it->rv = pd_confine_root(root, &fd, why, sizeof(why));
    if (it->rv != 0) {
        return;
    }
    it->rv = pd_confine_parent(fd, rel, false, &dfd, &base, why, sizeof(why));
    if (it->rv == 0) {
        it->rv = pd_confine_remove(dfd, base);
        close(dfd);
        char job[PP_MAX_PATH];
        snprintf(job, sizeof(job), "%s", rel);
        char *slash = strchr(job, '/');
        if (slash) { /* the job's folder too, once its last window is gone */
            *slash = '\0';
            pd_confine_prune(fd, job);
        }
    }
    close(fd);
}

static void pass_work(uv_work_t *wk)
{
    pass_t *p = wk->data;
    char rootname[PP_MAX_PATH] = "";
    int rootfd = -1;
    if (!p->remove) {
        struct statvfs sv;
        p->fs_size =
            statvfs(p->save_path, &sv) == 0 ? (int64_t)sv.f_blocks * (int64_t)sv.f_frsize : 0;
    }
    for (size_t i = 0; i < p->n; i++) {
        if (p->remove) {
            remove_one(&p->items[i]);
        } else if (p->items[i].final) {
            measure_one(&p->items[i], &rootfd, rootname, sizeof(rootname));
        }
    }
    if (rootfd >= 0) {
        close(rootfd);
    }
}

/* ---- on the loop ---- */

static void pass_after(uv_work_t *wk, int status);

/* The kept walk of window `id` among the first n (sorted), or NULL. */
static seen_t *seen_find(pd_retention_t *r, size_t n, int64_t id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->seen[mid].id == id) {
            return &r->seen[mid];
        }
        if (r->seen[mid].id < id) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return NULL;
}

static int seen_cmp(const void *a, const void *b)
{
    const seen_t *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

/* A measuring pass is over: keep the walks of the windows nothing worked on
 * as it began (final, not busy), to be reused while their folder stays as
 * the walk found it. */
static void seen_record(pd_retention_t *r, const pass_t *p, int64_t now)
{
    size_t sorted = r->nseen;
    for (size_t i = 0; i < p->n; i++) {
        const item_t *it = &p->items[i];
        if (!it->walked || !it->final || it->busy) {
            continue;
        }
        seen_t *s = seen_find(r, sorted, it->id);
        if (s == NULL) {
            if (r->nseen == r->capseen) {
                size_t cap = r->capseen ? 2 * r->capseen : 16;
                seen_t *g = realloc(r->seen, cap * sizeof(*g));
                if (g == NULL) {
                    break; /* out of memory: walked again next time */
                }
                r->seen = g;
                r->capseen = cap;
            }
            s = &r->seen[r->nseen++];
        }
        *s = (seen_t){it->id,        it->bytes,      it->mtime_ms, it->st.st_dev,
                      it->st.st_ino, it->st.st_mtim, now,          true};
    }
    if (r->nseen > sorted) { /* new ones at the end (seen_find searched the sorted part) */
        qsort(r->seen, r->nseen, sizeof(*r->seen), seen_cmp);
    }
}

static void pass_free(pass_t *p)
{
    free(p->items);
    free(p);
}

static void pass_end(pd_retention_t *r)
{
    r->running = false;
    r->stats.passes++;
    if (r->again && !r->stopping) {
        r->again = false;
        pd_retention_kick(r);
    }
}

static int pass_submit(pd_retention_t *r, pass_t *p)
{
    p->r = r;
    p->work.data = p;
    if (uv_queue_work(&r->n->loop->uv, &p->work, pass_work, pass_after) != 0) {
        pass_free(p);
        return -1;
    }
    return 0;
}

/* The limit on the windows' total: retention.max_bytes or max_fraction of
 * the file system, the smaller; 0 none. label: how the reasons name it. */
static int64_t bytes_limit(const pd_config_t *cfg, int64_t fs_size, char *label, size_t len)
{
    int64_t cap = cfg->retention_max_bytes;
    label[0] = '\0';
    if (cfg->retention_max_fraction > 0 && fs_size > 0) {
        int64_t f = (int64_t)(cfg->retention_max_fraction * (double)fs_size);
        if (cap == 0 || f < cap) {
            char h[32];
            human(f, h, sizeof(h));
            snprintf(label, len, "%g%% of the file system (%s)", cfg->retention_max_fraction * 100,
                     h);
            cap = f;
        }
    }
    return cap;
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Measured: decide, and hand the chosen to a removal pass. */
static void decide(pd_retention_t *r, pass_t *p)
{
    pd_node_t *n = r->n;
    pd_prune_item_t *items = calloc(p->n + 1, sizeof(*items));
    pd_prune_verdict_t *out = calloc(p->n + 1, sizeof(*out));
    size_t *from = calloc(p->n + 1, sizeof(*from));
    pass_t *rm = calloc(1, sizeof(*rm));
    size_t k = 0, nout = 0;
    for (size_t i = 0; items && out && from && rm && i < p->n; i++) {
        item_t *it = &p->items[i];
        pd_window_t *w = pd_windows_get(n->win, it->id);
        if (w == NULL || !owned(n, w) || (it->final && !it->exists)) {
            continue;
        }
        bool busy = w->held || w->pending > 0 || !final_state(w); /* held: its hook runs */
        items[k] = (pd_prune_item_t){
            it->id, it->mtime_ms, it->final ? it->bytes : w->bytes, it->final && final_state(w),
            busy,   w->job,       pd_windows_owner_uid(w)};
        from[k++] = i;
    }
    if (k > 0 && rm) {
        char label[96];
        pd_prune_limits_t lim = {n->cfg->retention_max_age_hours * 3600000,
                                 bytes_limit(n->cfg, p->fs_size, label, sizeof(label)), label};
        lim.max_bytes_label = label[0] ? label : NULL;
        nout = pd_prune_decide(items, k, &lim, wall_ms(), out);
    }
    if (nout > 0 && (rm->items = calloc(nout, sizeof(item_t))) != NULL) {
        for (size_t i = 0; i < nout; i++) {
            rm->items[i] = p->items[from[out[i].index]];
            snprintf(rm->items[i].reason, sizeof(rm->items[i].reason), "%s", out[i].reason);
        }
        rm->n = nout;
        rm->remove = true;
    }
    free(items);
    free(out);
    free(from);
    if (rm && rm->n > 0 && pass_submit(r, rm) == 0) {
        return; /* the removal ends the pass */
    }
    if (rm) {
        pass_free(rm);
    }
    pass_end(r);
}

/* Removed: the windows are pruned. */
static void removed(pd_retention_t *r, pass_t *p)
{
    pd_node_t *n = r->n;
    for (size_t i = 0; i < p->n; i++) {
        item_t *it = &p->items[i];
        pd_window_t *w = pd_windows_get(n->win, it->id);
        if (it->rv != 0) {
            PD_LOG(n->log, PD_LOG_WARN, "retention", "window %lld: cannot remove %s (%s)",
                   (long long)it->id, it->dir, it->reason);
            continue;
        }
        PD_LOG(n->log, PD_LOG_INFO, "retention", "window %lld pruned: %s (%lld bytes in %s)",
               (long long)it->id, it->reason, (long long)it->bytes, it->dir);
        if (w) {
            snprintf(w->pruned, sizeof(w->pruned), "%s", it->reason);
            pd_windows_touch(n->win, w, NULL);
        }
    }
    pd_node_durable(n);
}

static void pass_after(uv_work_t *wk, int status)
{
    pass_t *p = wk->data;
    pd_retention_t *r = p->r;
    if (status == 0) {
        if (p->remove) { /* also while stopping: the folders are gone */
            removed(r, p);
        } else if (!r->stopping) {
            seen_record(r, p, (int64_t)uv_now(&r->n->loop->uv));
            for (size_t i = 0; i < p->n; i++) {
                const item_t *it = &p->items[i];
                r->stats.reused_windows += it->reused;
                r->stats.walked_windows += it->walked;
                r->stats.walked_files += it->files;
                r->stats.walked_folders += it->folders;
            }
            decide(r, p);
            pass_free(p);
            return; /* decide ended the pass, or a removal runs */
        }
    }
    pass_free(p);
    pass_end(r);
}

/* A measuring pass over the windows whose folder this daemon owns. */
static void pass_start(pd_retention_t *r)
{
    pd_node_t *n = r->n;
    pass_t *p = calloc(1, sizeof(*p));
    size_t cap = 0;
    for (pd_window_t *w = n->win->head; w; w = w->next) {
        cap += owned(n, w);
    }
    if (p == NULL || (cap && (p->items = calloc(cap, sizeof(item_t))) == NULL)) {
        free(p);
        return; /* out of memory: the next pass */
    }
    int64_t now = (int64_t)uv_now(&n->loop->uv);
    for (size_t i = 0; i < r->nseen; i++) {
        r->seen[i].keep = false;
    }
    for (pd_window_t *w = n->win->head; w && p->n < cap; w = w->next) {
        if (!owned(n, w)) {
            continue;
        }
        item_t *it = &p->items[p->n++];
        it->id = w->id;
        snprintf(it->dir, sizeof(it->dir), "%s", w->dir);
        it->root_len = w->root_len;
        it->final = final_state(w);
        it->busy = w->held || w->pending > 0; /* its hook, a report's rewrite */
        seen_t *s = it->final && !it->busy ? seen_find(r, r->nseen, w->id) : NULL;
        if (s != NULL) {
            s->keep = true;
            if (now - s->walked_ms < REMEASURE_MS) {
                it->reuse = true;
                it->seen = *s;
            }
        }
    }
    /* the walks of windows gone, pruned, unfinished or busy are forgotten */
    size_t k = 0;
    for (size_t i = 0; i < r->nseen; i++) {
        if (r->seen[i].keep) {
            r->seen[k++] = r->seen[i];
        }
    }
    r->nseen = k;
    snprintf(p->save_path, sizeof(p->save_path), "%s", n->save_path);
    r->running = pass_submit(r, p) == 0;
}

void pd_retention_kick(pd_retention_t *r)
{
    if (r == NULL || r->stopping) {
        return;
    }
    if (r->running) {
        r->again = true;
        return;
    }
    const pd_config_t *cfg = r->n->cfg;
    if (cfg->retention_max_age_hours == 0 && cfg->retention_max_bytes == 0 &&
        cfg->retention_max_fraction == 0) {
        return; /* retention off */
    }
    pass_start(r);
}

static void on_timer(uv_timer_t *t)
{
    pd_retention_kick(t->data);
}

int pd_retention_init(pd_retention_t **out, pd_node_t *n)
{
    pd_retention_t *r = calloc(1, sizeof(*r));
    if (r == NULL) {
        return PROFD_ENOMEM;
    }
    r->n = n;
    uv_timer_init(&n->loop->uv, &r->timer);
    r->timer.data = r;
    uv_timer_start(&r->timer, on_timer, FIRST_MS, PASS_MS);
    uv_unref((uv_handle_t *)&r->timer);
    *out = r;
    return 0;
}

void pd_retention_stop(pd_retention_t *r)
{
    if (r == NULL || r->stopping) {
        return;
    }
    r->stopping = true;
    uv_timer_stop(&r->timer);
    uv_close((uv_handle_t *)&r->timer, NULL);
}

void pd_retention_stats(const pd_retention_t *r, pd_retention_stats_t *out)
{
    if (r == NULL) {
        memset(out, 0, sizeof(*out));
    } else {
        *out = r->stats;
    }
}

void pd_retention_fini(pd_retention_t *r)
{
    if (r != NULL) {
        free(r->seen);
    }
    free(r);
}

int pd_retention_floor(const pd_node_t *n, const char *root, char *err, size_t errlen)
{
    struct statvfs sv;
    int64_t floor = n->cfg->min_free_bytes;
    if (floor <= 0) {
        return 0;
    }
    if (statvfs(root, &sv) != 0) {
        snprintf(err, errlen, "cannot ask the file system of %.200s for its free space: %s", root,
                 strerror(errno));
        return PROFD_EIO;
    }
    int64_t avail = (int64_t)sv.f_bavail * (int64_t)sv.f_frsize;
    if (avail < floor) {
        char a[32], f[32];
        human(avail, a, sizeof(a));
        human(floor, f, sizeof(f));
        snprintf(err, errlen,
                 "save_path %.200s has %s free, below limits.min_free_bytes (%s): no new window",
                 root, a, f);
        return PROFD_ELIMIT;
    }
    return 0;
}
