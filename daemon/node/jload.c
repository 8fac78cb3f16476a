// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* A daemon's journal read back (see jload.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "clock.h"
#include "confine.h"
#include "hook.h"
#include "jload.h"
#include "jrec.h"
#include "pu_buf.h"

#define LINE_MAX_BYTES    (256u << 20)
#define JOURNAL_MAX_BYTES (1ll << 30)  /* a larger file is refused, not read */
#define LEGACY_MAX_BYTES  (64ll << 20) /* an older coordinator's state file */

/* ---- reading back ---- */

typedef struct loader {
    const pd_jload_t *j;
    char coord[64];
    pp_jrank_t *ranks; /* the latest record of each live rank */
    size_t nranks, capranks;
    pp_state_node_t *nodes; /* coordinator: the latest record of each node known */
    size_t nnodes, capnodes;
    int64_t gen, next_id;
    uint32_t id_gen;
    bool head;
} loader_t;

static int rank_slot(loader_t *l, int64_t id)
{
    for (size_t i = 0; i < l->nranks; i++) {
        if (l->ranks[i].id == id) {
            return (int)i;
        }
    }
    return -1;
}

/* A node record (coordinator): the later of a name replaces the earlier,
 * node_gone removes it. */
static int apply_node(loader_t *l, pp_jrec_t *r, char *why, size_t whylen)
{
    size_t i = 0;
    if (!l->j->role.coordinator || r->node.name == NULL || r->node.instance == NULL ||
        !pp_host_ok(r->node.name) || r->node.instance[0] == '\0' ||
        strlen(r->node.instance) >= 64) {
        snprintf(why, whylen, "a node is not valid");
        return PROFD_ECONFIG;
    }
    while (i < l->nnodes && strcmp(l->nodes[i].name, r->node.name) != 0) {
        i++;
    }
    if (i < l->nnodes) {
        pp_record_free(&pp_desc_state_node, &l->nodes[i]);
        if (r->kind == PP_JR_NODE_GONE) {
            l->nodes[i] = l->nodes[--l->nnodes];
            return 0;
        }
    } else if (r->kind == PP_JR_NODE_GONE) {
        return 0;
    } else if (PU_GROW(l->nodes, l->capnodes, l->nnodes + 1) != 0) {
        return PROFD_ENOMEM;
    } else {
        l->nnodes++;
    }
    l->nodes[i] = r->node; /* moved */
    pp_record_init(&pp_desc_state_node, &r->node);
    return 0;
}

/* An incoming file (coordinator), its path below the window's folder. */
static int apply_incoming(loader_t *l, pp_jrec_t *r, char *why, size_t whylen)
{
    pd_window_t *w = pd_windows_get(l->j->n->win, r->id);
    if (!l->j->role.coordinator || w == NULL || r->index < 0 ||
        !pd_confine_rel_ok(r->incoming.path) ||
        pd_jrec_incoming_restore(w, (size_t)r->index, &r->incoming) != 0) {
        snprintf(why, whylen, "an incoming file is not valid");
        return PROFD_ECONFIG;
    }
    return 0;
}

static int apply_rec(loader_t *l, pp_jrec_t *r, char *why, size_t whylen)
{
    const pd_jload_t *j = l->j;
    pd_node_t *n = j->n;
    int i;
    if (r->gen > l->gen) {
        l->gen = r->gen;
    }
    switch (r->kind) {
    case PP_JR_HEAD:
        if (r->head.version != 1 || strlen(r->head.instance) == 0 ||
            strlen(r->head.instance) >= 24) {
            snprintf(why, whylen, "unknown version or instance");
            return PROFD_ECONFIG;
        }
        snprintf(j->instance, 24, "%s", r->head.instance);
        snprintf(l->coord, sizeof(l->coord), "%s",
                 r->head.coordinator && strlen(r->head.coordinator) < 64 ? r->head.coordinator
                                                                         : "");
        l->gen = r->head.gen > l->gen ? r->head.gen : l->gen;
        l->next_id = r->head.next_id > l->next_id ? r->head.next_id : l->next_id;
        if (r->head.id_gen > (int64_t)l->id_gen && r->head.id_gen < (1LL << 32)) {
            l->id_gen = (uint32_t)r->head.id_gen;
        }
        l->head = true;
        return 0;
    case PP_JR_RANK:
        if (r->rank.id <= 0) {
            snprintf(why, whylen, "a rank is not valid");
            return PROFD_ECONFIG;
        }
        if ((uint32_t)((uint64_t)r->rank.id >> 32) > l->id_gen) {
            l->id_gen = (uint32_t)((uint64_t)r->rank.id >> 32);
        }
        if ((i = rank_slot(l, r->rank.id)) >= 0) {
            pp_record_free(&pp_desc_jrank, &l->ranks[i]);
        } else {
            if (PU_GROW(l->ranks, l->capranks, l->nranks + 1) != 0) {
                return PROFD_ENOMEM;
            }
            i = (int)l->nranks++;
        }
        l->ranks[i] = r->rank; /* moved */
        pp_record_init(&pp_desc_jrank, &r->rank);
        return 0;
    case PP_JR_RANK_GONE:
        if ((i = rank_slot(l, r->id)) >= 0) {
            pp_record_free(&pp_desc_jrank, &l->ranks[i]);
            l->ranks[i] = l->ranks[--l->nranks];
        }
        return 0;
    case PP_JR_WINDOW: {
        const pp_state_window_t *sw = &r->window;
        if (sw->root_len < 1 || sw->dir == NULL || sw->job == NULL || sw->name == NULL ||
            !pd_confine_window_dir(sw->dir, (size_t)sw->root_len, sw->job, sw->name)) {
            snprintf(why, whylen, "window %lld: its folder is not <save_path>/<job>/<window>",
                     (long long)sw->id);
            return PROFD_ECONFIG;
        }
        pd_window_t *w = pd_windows_get(n->win, r->window.id);
        if (w) {
            if (pd_jrec_window_update(n->reg, w, &r->window, why, whylen) != 0) {
                return PROFD_ECONFIG;
            }
            return pd_hook_restore(n->hook, w, &r->window);
        }
        if ((w = pd_jrec_window_restore(n->reg, &r->window, pd_now_ms(), why, whylen)) == NULL) {
            return PROFD_ECONFIG;
        }
        pd_windows_append(n->win, w);
        if (pd_hook_restore(n->hook, w, &r->window) != 0) {
            return PROFD_ENOMEM;
        }
        if (w->id > l->next_id) {
            l->next_id = w->id;
        }
        return 0;
    }
    case PP_JR_MEMBER: {
        pd_window_t *w = pd_windows_get(n->win, r->id);
        if (w == NULL || r->index < 0 ||
            pd_jrec_member_restore(n->reg, w, (size_t)r->index, &r->member) != 0) {
            snprintf(why, whylen, "a window member is not valid");
            return PROFD_ECONFIG;
        }
        return 0;
    }
    case PP_JR_NODE:
    case PP_JR_NODE_GONE:
        return apply_node(l, r, why, whylen);
    case PP_JR_INCOMING:
        return apply_incoming(l, r, why, whylen);
    default:
        snprintf(why, whylen, "unknown record");
        return PROFD_ECONFIG;
    }
}

/* Bytes of an incoming file's .part below the window's folder; 0 none. */
static int64_t part_size(const pd_window_t *w, const char *path)
{
    char root[PD_PATH_MAX], rel[PD_PATH_MAX + 700], why[128];
    int rfd = -1, fd = -1;
    struct stat st;
    int64_t size = 0;
    snprintf(root, sizeof(root), "%.*s", (int)w->root_len, w->dir);
    snprintf(rel, sizeof(rel), "%s/%s/%s.part", w->job, w->name, path);
    if (pd_confine_root(root, &rfd, why, sizeof(why)) == 0 &&
        pd_confine_open_file(rfd, rel, &fd, &st, why, sizeof(why)) == 0) {
        size = (int64_t)st.st_size;
    }
    if (fd >= 0) {
        close(fd);
    }
    if (rfd >= 0) {
        close(rfd);
    }
    return size;
}

/* A coordinator read back: its finished windows are not kept; the members
 * of remote ranks are bound again as their nodes register their rosters
 * (pd_windows_rebind); files resume from their .part. */
static void coordinator_loaded(const pd_jload_t *j)
{
    pd_windows_trim(j->n->win, 0);
    for (pd_window_t *w = j->n->win->head; w; w = w->next) {
        for (size_t i = 0; i < w->nmembers; i++) {
            if (w->members[i].node_client) {
                w->members[i].client = 0;
            }
        }
        for (size_t i = 0; i < w->nincoming; i++) {
            pd_incoming_t *in = &w->incoming[i];
            in->have = in->done ? in->size : part_size(w, in->path);
        }
    }
}

static int64_t realtime_us(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

/* ---- an older coordinator's whole-state file, imported ---- */

static int legacy_bad(char *err, size_t errlen, const char *file, const char *what)
{
    snprintf(err, errlen, "coordinator state %s: %s (move the file away to start afresh)", file,
             what);
    return PROFD_ECONFIG;
}

/* One window of the file, as a window record (its members with it; every
 * member unbound: the file kept no rank), then its incoming files. */
static int legacy_window(loader_t *l, pp_state_window_t *s, const char *file, char *err,
                         size_t errlen)
{
    pd_node_t *n = l->j->n;
    char why[256];
    pp_state_incoming_t *inc = s->incoming;
    size_t ninc = s->incoming_n;
    s->incoming = NULL; /* a window record has none: they are records of their own */
    s->incoming_n = 0;
    int rv = 0;
    pd_window_t *w = NULL;
    if (s->root_len >= 1 && !pd_confine_window_dir(s->dir, (size_t)s->root_len, s->job, s->name)) {
        rv = legacy_bad(err, errlen, file, "a window's folder is not <save_path>/<job>/<window>");
    } else if ((w = pd_jrec_window_restore(n->reg, s, pd_now_ms(), why, sizeof(why))) == NULL) {
        rv = legacy_bad(err, errlen, file, why);
    } else {
        pd_windows_append(n->win, w);
        l->next_id = w->id > l->next_id ? w->id : l->next_id;
        for (size_t i = 0; i < w->nmembers; i++) {
            w->members[i].client = 0; /* bound again when its rank registers */
        }
    }
    for (size_t i = 0; rv == 0 && i < ninc; i++) {
        if (!pd_confine_rel_ok(inc[i].path) || pd_jrec_incoming_restore(w, i, &inc[i]) != 0) {
            rv = legacy_bad(err, errlen, file, "an incoming file is not valid");
        }
    }
    s->incoming = inc;
    s->incoming_n = ninc;
    return rv;
}

/* <save_path>/<role.legacy> when there is no journal: the nodes and
 * windows it holds, as if they were records. 0 (out->imported when there
 * was one) or PROFD_* with one line in err. */
static int legacy_import(loader_t *l, pd_journal_loaded_t *out, char *err, size_t errlen)
{
    const pd_jload_t *j = l->j;
    char path[PD_PATH_MAX + 128], e[256];
    struct stat st;
    int fd;
    pp_state_t s;
    snprintf(path, sizeof(path), "%s/%s", j->n->save_path, j->role.legacy);
    int rv =
        pd_confine_own_file("coordinator state", path, LEGACY_MAX_BYTES, &fd, &st, err, errlen);
    if (rv != 0) {
        return rv == PROFD_ENOENT ? 0 : rv;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    ssize_t got = buf ? read(fd, buf, (size_t)st.st_size) : -1;
    close(fd);
    if (got < 0) {
        free(buf);
        snprintf(err, errlen, "cannot read %s: %s", path, buf ? strerror(errno) : "out of memory");
        return buf ? PROFD_EIO : PROFD_ENOMEM;
    }
    rv = pp_record_decode(&pp_desc_state, buf, (size_t)got, &s, e, sizeof(e));
    free(buf);
    if (rv != 0) {
        return legacy_bad(err, errlen, path, e);
    }
    out->found = out->imported = true;
    if (s.version != 1 || s.instance[0] == '\0' || strlen(s.instance) >= 24) {
        rv = legacy_bad(err, errlen, path, "unknown version or instance");
    } else {
        snprintf(j->instance, 24, "%s", s.instance);
        l->next_id = s.next_id;
        l->head = true;
    }
    for (size_t i = 0; rv == 0 && i < s.nodes_n; i++) {
        pp_jrec_t r;
        char why[64];
        pp_record_init(&pp_desc_jrec, &r);
        r.kind = PP_JR_NODE;
        r.node = s.nodes[i]; /* moved */
        pp_record_init(&pp_desc_state_node, &s.nodes[i]);
        if (apply_node(l, &r, why, sizeof(why)) != 0) {
            rv = legacy_bad(err, errlen, path, "a node is not valid");
        }
        pp_record_free(&pp_desc_jrec, &r);
    }
    for (size_t i = 0; rv == 0 && i < s.windows_n; i++) {
        rv = legacy_window(l, &s.windows[i], path, err, errlen);
    }
    pp_record_free(&pp_desc_state, &s);
    return rv;
}

/* ---- the journal ---- */

static int load_end(loader_t *lp, int rv, pd_journal_loaded_t *out, char *err, size_t errlen);

int pd_jload(const pd_jload_t *j, pd_journal_loaded_t *out, char *err, size_t errlen)
{
    loader_t l = {.j = j};
    char why[256];
    int rv = 0;
    struct stat st;
    int fd;
    if ((rv = pd_confine_own_file("journal", j->path, JOURNAL_MAX_BYTES, &fd, &st, err, errlen)) !=
        0) {
        if (rv != PROFD_ENOENT) {
            return rv;
        }
        rv = j->role.legacy ? legacy_import(&l, out, err, errlen) : 0;
        if (rv == 0 && !out->found) {
            return 0;
        }
        return load_end(&l, rv, out, err, errlen);
    }
    FILE *f = fdopen(fd, "re");
    if (f == NULL) {
        close(fd);
        snprintf(err, errlen, "cannot read the journal %s: %s", j->path, strerror(errno));
        return PROFD_EIO;
    }
    out->found = true;
    char *line = NULL, *next = NULL;
    size_t cap = 0, ncap = 0;
    ssize_t len = getline(&line, &cap, f), nlen;
    for (size_t no = 1; len >= 0 && rv == 0; no++, len = nlen) {
        /* read ahead: a line that does not decode may be the torn last one */
        nlen = getline(&next, &ncap, f);
        bool last = nlen < 0;
        bool whole = len > 0 && line[len - 1] == '\n';
        pp_jrec_t r;
        why[0] = '\0';
        if ((size_t)len > LINE_MAX_BYTES) {
            rv = PROFD_ECONFIG;
            snprintf(why, sizeof(why), "a line longer than %u bytes", LINE_MAX_BYTES);
        } else if (len == 1 && line[0] == '\n') {
            /* an empty line: a write cut before its record (one byte of
             * anything else is a record cut short: torn, below) */
        } else if (pp_record_decode(&pp_desc_jrec, line, (size_t)len, &r, why, sizeof(why)) != 0) {
            if (last && !whole) {
                out->torn++; /* killed in the middle of a write */
            } else {
                rv = PROFD_ECONFIG;
            }
        } else {
            rv = apply_rec(&l, &r, why, sizeof(why));
            pp_record_free(&pp_desc_jrec, &r);
            out->lines++;
        }
        if (rv != 0) {
            snprintf(err, errlen, "journal %s:%zu: %s (move the file away to start afresh)",
                     j->path, no, why[0] ? why : "cannot read it back");
        }
        char *t = line;
        line = next;
        next = t;
        size_t tc = cap;
        cap = ncap;
        ncap = tc;
    }
    free(line);
    free(next);
    fclose(f);
    if (rv == 0 && out->lines > 0 && !l.head) {
        snprintf(err, errlen, "journal %s: no head record (move the file away to start afresh)",
                 j->path);
        rv = PROFD_ECONFIG;
    }
    return load_end(&l, rv, out, err, errlen);
}

/* What a load ends with, rv its outcome so far: the ranks, the nodes, the
 * next window id and plan generation; the loader freed. */
static int load_end(loader_t *lp, int rv, pd_journal_loaded_t *out, char *err, size_t errlen)
{
    loader_t l = *lp;
    const pd_jload_t *j = l.j;
    pd_node_t *n = j->n;
    /* the ranks, under their ids; ids are never given twice */
    pd_registry_floor(n->reg, l.id_gen);
    for (size_t i = 0; i < l.nranks; i++) {
        if (rv == 0 && pd_jrec_rank_restore(n->reg, &l.ranks[i], n->name, pd_now_ms()) == 0) {
            out->ranks++;
        }
        pp_record_free(&pp_desc_jrank, &l.ranks[i]);
    }
    free(l.ranks);
    /* the nodes known, awaited again (coordinator) */
    for (size_t i = 0; i < l.nnodes; i++) {
        if (rv == 0 && j->role.node_restore) {
            rv = j->role.node_restore(j->role.arg, l.nodes[i].name, l.nodes[i].instance);
            out->nodes += rv == 0;
            if (rv != 0) {
                snprintf(err, errlen, "out of memory");
            }
        }
        pp_record_free(&pp_desc_state_node, &l.nodes[i]);
    }
    free(l.nodes);
    if (rv != 0) {
        return rv;
    }
    if (j->role.coordinator) {
        coordinator_loaded(j);
    }
    n->win->next_id = l.next_id > n->win->next_id ? l.next_id : n->win->next_id;
    /* a generation no worker holds yet: past any of the last run */
    int64_t now = realtime_us();
    n->gen = l.gen + 1000000 > now ? l.gen + 1000000 : now;
    for (pd_window_t *w = n->win->head; w; w = w->next) {
        out->windows++;
        pd_windows_marks_clear(w);
        /* a done window's manifest is written: its captures stay there
         * (compacted again, or the first time when its records are from
         * before it was: the same state either way) */
        if (w->compact || (w->state == PP_WS_DONE && !w->mirror)) {
            pd_windows_compact(w);
        }
    }
    snprintf(out->coordinator, sizeof(out->coordinator), "%s", l.coord);
    return 0;
}
