// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The metrics endpoint's text (see metrics.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "clock.h"
#include "metrics.h"
#include "retention.h"
#include "scores.h"
#include "profd/errors.h"
#include "profd/version.h"
#include "pu_buf.h"

static void family(pu_sbuf_t *b, const char *name, const char *type, const char *help)
{
    pu_sbuf_fmt(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Registered ranks of one job and role: active, lost. */
typedef struct rank_count {
    const char *job, *role;
    int64_t n[2];
} rank_count_t;

static bool same(const char *a, const char *b)
{
    return a == b || strcmp(a, b) == 0; /* the registry's names are interned */
}

/* The ranks counted by job and role, in the order each pair is first met:
 * one pass over the ranks, the pairs (a handful) searched for each, the
 * last one met first. Before, each rank looked back over every rank before
 * it: 134 million pairs at 16,384 ranks, a second of the loop a scrape. */
static int count_ranks(const pd_registry_t *reg, rank_count_t **out, size_t *nout)
{
    rank_count_t *v = NULL;
    size_t n = 0, cap = 0, last = 0;
    for (pd_rank_t *k = pd_registry_next(reg, NULL); k; k = pd_registry_next(reg, k)) {
        size_t i = last;
        if (i >= n || !same(v[i].job, k->job) || !same(v[i].role, k->role)) {
            for (i = 0; i < n && !(same(v[i].job, k->job) && same(v[i].role, k->role)); i++) {
            }
        }
        if (i == n) {
            if (PU_GROW(v, cap, n + 1) != 0) {
                free(v);
                return PROFD_ENOMEM;
            }
            v[n++] = (rank_count_t){.job = k->job, .role = k->role};
        }
        v[i].n[k->state == PD_RANK_LOST]++;
        last = i;
    }
    *out = v;
    *nout = n;
    return 0;
}

int pd_metrics_text(pd_node_t *n, char **out, size_t *len)
{
    pu_sbuf_t b = {0};
    pp_role_stats_t *roles = NULL;
    size_t nroles = 0;
    pp_status_reply_t st;
    pp_record_init(&pp_desc_status_reply, &st);
    st.mode = "standalone";
    if (n->hooks.status) {
        n->hooks.status(n->hooks.arg, &st);
    }
    if (n->hist &&
        pd_history_stats(n->hist, NULL, pd_now_ms(), 0, false, &roles, &nroles, NULL, NULL) != 0) {
        return PROFD_ENOMEM;
    }

    family(&b, "profd_info", "gauge", "The daemon: node name, mode and version (always 1).");
    pu_sbuf_fmt(&b, "profd_info{node=\"%s\",mode=\"%s\",version=\"%s\"} 1\n", n->name, st.mode,
                PROFD_VERSION_STRING);

    /* ranks, by job, role and state */
    family(&b, "profd_ranks", "gauge", "Registered ranks by job, role and state.");
    rank_count_t *rc = NULL;
    size_t nrc = 0;
    if (count_ranks(n->reg, &rc, &nrc) != 0) {
        b.oom = true;
    }
    for (size_t i = 0; i < nrc; i++) {
        pu_sbuf_fmt(&b, "profd_ranks{job=\"%s\",role=\"%s\",state=\"active\"} %lld\n", rc[i].job,
                    rc[i].role, (long long)rc[i].n[0]);
        pu_sbuf_fmt(&b, "profd_ranks{job=\"%s\",role=\"%s\",state=\"lost\"} %lld\n", rc[i].job,
                    rc[i].role, (long long)rc[i].n[1]);
    }
    free(rc);

    /* step times, per role */
    family(&b, "profd_ranks_stalled", "gauge",
           "Ranks of a role whose current step has lasted over 4x the role's median step time "
           "(at least 2 s); a lost rank (connection closed, or silent past "
           "limits.client_timeout_ms) is not counted.");
    for (size_t i = 0; i < nroles; i++) {
        pu_sbuf_fmt(&b, "profd_ranks_stalled{job=\"%s\",role=\"%s\"} %zu\n", roles[i].job,
                    roles[i].role, roles[i].stalled_n);
    }
    family(&b, "profd_step_seconds", "gauge",
           "Step time of a role's ranks: min, median and max over the ranks of each one's median "
           "of its last 8 steps.");
    for (size_t i = 0; i < nroles; i++) {
        const char *q[3] = {"min", "p50", "max"};
        double v[3] = {roles[i].min_ms, roles[i].p50_ms, roles[i].max_ms};
        for (int k = 0; k < 3; k++) {
            pu_sbuf_fmt(&b, "profd_step_seconds{job=\"%s\",role=\"%s\",stat=\"%s\"} %.6f\n",
                        roles[i].job, roles[i].role, q[k], v[k] / 1000.0);
        }
    }
    family(&b, "profd_step", "gauge", "The newest step any rank of the role has begun.");
    for (size_t i = 0; i < nroles; i++) {
        if (roles[i].step != PP_NONE) {
            pu_sbuf_fmt(&b, "profd_step{job=\"%s\",role=\"%s\"} %lld\n", roles[i].job,
                        roles[i].role, (long long)roles[i].step);
        }
    }
    family(&b, "profd_phase_seconds", "gauge",
           "Median time per step of a phase over a role's ranks' recent steps.");
    for (size_t i = 0; i < nroles; i++) {
        for (size_t p = 0; p < roles[i].phases_n; p++) {
            pu_sbuf_fmt(&b, "profd_phase_seconds{job=\"%s\",role=\"%s\",phase=\"%s\"} %.6f\n",
                        roles[i].job, roles[i].role, roles[i].phases[p],
                        (double)roles[i].phase_us[p] / 1e6);
        }
    }
    /* where each rank's time goes, and its compute's scores (scores.h) */
    pp_rank_sections_t *sec = NULL;
    size_t nsec = 0;
    if (n->hist && pd_scores_rows(n->hist, NULL, PD_HIST_RECENT, 0, &sec, &nsec) != 0) {
        nsec = 0;
    }
    family(&b, "profd_section_seconds", "gauge",
           "Where a rank's step time goes: the median of its last 8 steps of each section "
           "(compute = forward + backward + optimizer; comm = waiting in collectives; other = "
           "the rest of the step).");
    for (size_t i = 0; i < nsec; i++) {
        const char *name[4] = {"compute", "comm", "data", "other"};
        double v[4] = {sec[i].compute_ms, sec[i].comm_ms, sec[i].data_ms, sec[i].other_ms};
        for (int k = 0; k < 4; k++) {
            if (v[k] >= 0) {
                pu_sbuf_fmt(
                    &b,
                    "profd_section_seconds{job=\"%s\",role=\"%s\",rank=\"%lld\",section=\"%s\"} "
                    "%.6f\n",
                    sec[i].job, sec[i].role, (long long)sec[i].rank, name[k], v[k] / 1000.0);
            }
        }
    }
    family(&b, "profd_compute_score", "gauge",
           "A rank's compute score as NVIDIA's straggler detector defines it: relative = the "
           "role's fastest rank's compute / this rank's; individual = its own recent best / now "
           "(1: as fast as the reference, 0.5: twice as slow).");
    for (size_t i = 0; i < nsec; i++) {
        const char *kind[2] = {"relative", "individual"};
        double score[2] = {sec[i].relative, sec[i].individual};
        for (int k = 0; k < 2; k++) {
            if (score[k] >= 0) {
                pu_sbuf_fmt(&b,
                            "profd_compute_score{job=\"%s\",role=\"%s\",rank=\"%lld\",score="
                            "\"%s\"} %.4f\n",
                            sec[i].job, sec[i].role, (long long)sec[i].rank, kind[k], score[k]);
            }
        }
    }
    free(sec);

    /* windows and captures */
    family(&b, "profd_windows", "gauge", "Windows the daemon holds, by state.");
    for (int s = PP_WS_PENDING; s <= PP_WS_FAILED; s++) {
        int64_t c = 0;
        for (pd_window_t *w = n->win->head; w; w = w->next) {
            c += (int)w->state == s;
        }
        pu_sbuf_fmt(&b, "profd_windows{state=\"%s\"} %lld\n",
                    pp_enum_name(&pp_enum_window_state, s), (long long)c);
    }
    family(&b, "profd_windows_done_total", "counter", "Windows finished (manifest written).");
    pu_sbuf_fmt(&b, "profd_windows_done_total %lld\n", (long long)n->stats.windows_done);
    family(&b, "profd_captures_total", "counter", "Captures of finished windows, by status.");
    for (int s = PP_CAP_COMPLETE; s <= PP_CAP_TRUNCATED; s++) {
        pu_sbuf_fmt(&b, "profd_captures_total{status=\"%s\"} %lld\n", pp_status_name(s),
                    (long long)n->stats.captures[s]);
    }
    family(&b, "profd_gathered_bytes_total", "counter", "Bytes gathered into finished windows.");
    pu_sbuf_fmt(&b, "profd_gathered_bytes_total %lld\n", (long long)n->stats.bytes);
    /* the free-disk floor: below it no new window starts (retention.h) */
    struct statvfs sv;
    if (statvfs(n->save_path, &sv) == 0) {
        family(&b, "profd_save_path_free_bytes", "gauge",
               "Bytes free to unprivileged users on the file system of save_path.");
        pu_sbuf_fmt(&b, "profd_save_path_free_bytes %lld\n",
                    (long long)sv.f_bavail * (long long)sv.f_frsize);
    }
    family(&b, "profd_save_path_min_free_bytes", "gauge",
           "limits.min_free_bytes: with less free on save_path no new window starts.");
    pu_sbuf_fmt(&b, "profd_save_path_min_free_bytes %lld\n", (long long)n->cfg->min_free_bytes);
    /* retention's passes: what measuring the kept windows cost (retention.h) */
    pd_retention_stats_t rs;
    pd_retention_stats(n->retention, &rs);
    family(&b, "profd_retention_passes_total", "counter",
           "Retention passes over the windows this daemon keeps in save_path.");
    pu_sbuf_fmt(&b, "profd_retention_passes_total %lld\n", (long long)rs.passes);
    family(&b, "profd_retention_windows_measured_total", "counter",
           "Finished windows retention measured: walked (every entry of its folder tree "
           "looked at) or reused (its folder unchanged since: the last walk's figures).");
    pu_sbuf_fmt(&b, "profd_retention_windows_measured_total{how=\"walked\"} %lld\n",
                (long long)rs.walked_windows);
    pu_sbuf_fmt(&b, "profd_retention_windows_measured_total{how=\"reused\"} %lld\n",
                (long long)rs.reused_windows);
    family(&b, "profd_retention_walked_entries_total", "counter",
           "Entries of window folder trees retention's walks looked at (one fstatat each).");
    pu_sbuf_fmt(&b, "profd_retention_walked_entries_total{kind=\"file\"} %lld\n",
                (long long)rs.walked_files);
    pu_sbuf_fmt(&b, "profd_retention_walked_entries_total{kind=\"folder\"} %lld\n",
                (long long)rs.walked_folders);
    family(&b, "profd_backlog_bytes", "gauge",
           "A node daemon: bytes of captures not yet streamed to its coordinator.");
    pu_sbuf_fmt(&b, "profd_backlog_bytes %lld\n", (long long)st.backlog_bytes);

    /* traffic and errors */
    family(&b, "profd_step_events_total", "counter", "Step events taken in from workers.");
    pu_sbuf_fmt(&b, "profd_step_events_total %lld\n", (long long)n->stats.events);
    family(&b, "profd_step_events_dropped_total", "counter",
           "Step events workers dropped because their event ring was full.");
    pu_sbuf_fmt(&b, "profd_step_events_dropped_total %lld\n", (long long)n->stats.dropped);
    family(&b, "profd_bad_requests_total", "counter",
           "Requests refused: malformed, unknown, too large or not permitted.");
    pu_sbuf_fmt(&b, "profd_bad_requests_total %lld\n", (long long)n->bad_requests);
    family(&b, "profd_rate_limited_total", "counter", "Requests refused by a rate limit.");
    pu_sbuf_fmt(&b, "profd_rate_limited_total %lld\n", (long long)st.rate_limited);
    family(&b, "profd_errors_total", "counter",
           "Failures writing a manifest, a report or a merged trace.");
    pu_sbuf_fmt(&b, "profd_errors_total{kind=\"manifest\"} %lld\n",
                (long long)n->stats.errors_manifest);
    pu_sbuf_fmt(&b, "profd_errors_total{kind=\"report\"} %lld\n",
                (long long)n->stats.errors_report);
    pu_sbuf_fmt(&b, "profd_errors_total{kind=\"merge\"} %lld\n", (long long)n->stats.errors_merge);
    family(&b, "profd_trigger_windows_total", "counter", "Windows the straggler trigger opened.");
    pu_sbuf_fmt(&b, "profd_trigger_windows_total %lld\n",
                (long long)(n->strag ? n->strag->fired : 0));
    family(&b, "profd_state_saves_total", "counter",
           "A coordinator: writes of its journal (the records of what changed since the last).");
    pu_sbuf_fmt(&b, "profd_state_saves_total %lld\n", (long long)n->stats.state_saves);
    family(&b, "profd_state_save_seconds_total", "counter",
           "A coordinator: time its loop spent encoding and writing its journal's records.");
    pu_sbuf_fmt(&b, "profd_state_save_seconds_total %.6f\n", (double)n->stats.state_save_us / 1e6);
    family(&b, "profd_state_members_total", "counter",
           "A coordinator: window members its journal wrote (encoded: each changed one's "
           "record; unchanged: none, a journal writes only what changed).");
    pu_sbuf_fmt(&b, "profd_state_members_total{how=\"encoded\"} %lld\n",
                (long long)n->stats.state_encoded);
    pu_sbuf_fmt(&b, "profd_state_members_total{how=\"unchanged\"} %lld\n",
                (long long)n->stats.state_cached);
    family(&b, "profd_chunks_deferred_total", "counter",
           "A coordinator: file chunks answered with no progress because it held "
           "coordinator.max_node_requests node requests (their nodes send them again later).");
    pu_sbuf_fmt(&b, "profd_chunks_deferred_total %lld\n", (long long)n->stats.chunks_deferred);
    family(&b, "profd_batches_busy_total", "counter",
           "A coordinator: requests of several files answered busy, none taken, because it "
           "was writing as many batched files as it holds at once (their nodes send them again).");
    pu_sbuf_fmt(&b, "profd_batches_busy_total %lld\n", (long long)n->stats.batches_busy);
    family(&b, "profd_plan_latency_seconds", "gauge",
           "The p99 of plan delivery to this daemon's workers.");
    pu_sbuf_fmt(&b, "profd_plan_latency_seconds %.6f\n", (double)pd_latency_p99(&n->latency) / 1e6);
    family(&b, "profd_history_ranks", "gauge", "Ranks the step-time history holds.");
    pu_sbuf_fmt(&b, "profd_history_ranks %zu\n", n->hist ? n->hist->n : 0);

    pd_history_stats_free(roles, nroles, NULL);
    if ((*out = pu_sbuf_take(&b, len)) == NULL) {
        return PROFD_ENOMEM;
    }
    return 0;
}
