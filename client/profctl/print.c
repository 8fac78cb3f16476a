// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* profctl's human tables (see profctl.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profctl.h"

const char *ctl_or_dash(const char *s)
{
    return s && *s ? s : "-";
}

static void fmt_i64(char *buf, size_t len, int64_t v)
{
    if (v == PP_NONE) {
        snprintf(buf, len, "-");
    } else {
        snprintf(buf, len, "%lld", (long long)v);
    }
}

void ctl_fmt_size(char *buf, size_t len, int64_t b, const char *sep)
{
    const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int i = 0;
    while (v >= 1024 && i < 4) {
        v /= 1024;
        i++;
    }
    snprintf(buf, len, i ? "%.1f%s%s" : "%.0f%s%s", v, sep, u[i]);
}

void ctl_fmt_steps(char *buf, size_t len, int64_t first, int64_t last)
{
    if (first == PP_NONE) {
        snprintf(buf, len, "-");
    } else if (last == PP_NONE) {
        snprintf(buf, len, "%lld-", (long long)first);
    } else if (last == first) {
        snprintf(buf, len, "%lld", (long long)first);
    } else {
        snprintf(buf, len, "%lld-%lld", (long long)first, (long long)last);
    }
}

static int cmp_rank(const void *a, const void *b)
{
    const pp_rank_t *x = a, *y = b;
    int c = strcmp(x->node ? x->node : "", y->node ? y->node : "");
    if (c) {
        return c;
    }
    c = strcmp(x->job, y->job);
    if (c) {
        return c;
    }
    return (x->rank > y->rank) - (x->rank < y->rank);
}

void ctl_print_status(const pp_status_reply_t *s)
{
    printf("node %s  version %s  save_path %s  windows %lld (%lld open)  ranks %zu\n", s->node,
           s->version, s->save_path, (long long)s->windows_kept, (long long)s->windows, s->ranks_n);
    if (s->ranks_n == 0) {
        printf("no rank registered\n");
        return;
    }
    qsort(s->ranks, s->ranks_n, sizeof(*s->ranks), cmp_rank);
    printf("%-12s %6s %-10s %7s %-16s %8s %7s %9s %-8s %6s\n", "JOB", "RANK", "ROLE", "REPLICA",
           "HOST", "PID", "STEP", "STEP_MS", "STATE", "AGE_S");
    for (size_t i = 0; i < s->ranks_n; i++) {
        const pp_rank_t *r = &s->ranks[i];
        char rep[24], step[24];
        /* a coordinator's ranks: grouped by the node daemon they are on */
        if (r->node && r->node[0] &&
            (i == 0 || !s->ranks[i - 1].node || strcmp(s->ranks[i - 1].node, r->node) != 0)) {
            size_t n = 0;
            while (i + n < s->ranks_n && s->ranks[i + n].node &&
                   strcmp(s->ranks[i + n].node, r->node) == 0) {
                n++;
            }
            printf("node %s: %zu rank(s)\n", r->node, n);
        }
        fmt_i64(rep, sizeof(rep), r->replica_rank);
        fmt_i64(step, sizeof(step), r->step);
        printf("%-12s %6lld %-10s %7s %-16s %8lld %7s %9.1f %-8s %6.1f\n", r->job,
               (long long)r->rank, r->role, rep, r->host, (long long)r->pid, step, r->step_ms,
               ctl_or_dash(pp_enum_name(&pp_enum_rank_activity, r->state)),
               (double)r->age_ms / 1000.0);
        if (r->roles_n > 1) { /* a process hosting several roles: each, with its own rank */
            printf("%-12s %6s roles", "", "");
            for (size_t k = 0; k < r->roles_n; k++) {
                const pp_role_rank_t *x = &r->roles[k];
                if (x->rank == r->rank || x->rank == PP_NONE) {
                    printf(" %s", x->role);
                } else {
                    printf(" %s:%lld", x->role, (long long)x->rank);
                }
            }
            printf("\n");
        }
    }
}

/* The ranks by node: a line per node daemon, its roles and how many of
 * its ranks are lost. */
static void print_nodes(const pp_status_reply_t *s)
{
    for (size_t i = 0; i < s->ranks_n;) {
        const char *node = s->ranks[i].node ? s->ranks[i].node : "";
        size_t n = 0, lost = 0;
        while (i + n < s->ranks_n &&
               strcmp(s->ranks[i + n].node ? s->ranks[i + n].node : "", node) == 0) {
            lost += s->ranks[i + n].state == PP_RA_LOST;
            n++;
        }
        printf("node %s: %zu rank(s)\n", node[0] ? node : s->node, n);
        printf("  roles:");
        for (size_t k = i; k < i + n; k++) {
            bool seen = false;
            for (size_t q = i; q < k && !seen; q++) {
                seen = strcmp(s->ranks[q].role, s->ranks[k].role) == 0;
            }
            if (seen) {
                continue;
            }
            size_t c = 0;
            for (size_t q = k; q < i + n; q++) {
                c += strcmp(s->ranks[q].role, s->ranks[k].role) == 0;
            }
            printf(" %s %zu", s->ranks[k].role, c);
        }
        printf("; %zu lost\n", lost);
        i += n;
    }
}

void ctl_print_status_grouped(const pp_status_reply_t *s, const pp_top_reply_t *top, bool ranks)
{
    if (ranks) {
        ctl_print_status(s);
    } else {
        printf("node %s  version %s  save_path %s  windows %lld (%lld open)  ranks %zu\n", s->node,
               s->version, s->save_path, (long long)s->windows_kept, (long long)s->windows,
               s->ranks_n);
        if (s->ranks_n == 0) {
            printf("no rank registered\n");
            return;
        }
        qsort(s->ranks, s->ranks_n, sizeof(*s->ranks), cmp_rank);
    }
    if (top && top->roles_n) {
        printf("\n");
        ctl_print_roles(top->roles, top->roles_n, true);
    }
    if (!ranks) {
        printf("\n");
        print_nodes(s);
        printf("(every rank: profctl status --ranks)\n");
    }
}

void ctl_print_windows(const pp_window_t *v, size_t n)
{
    if (n == 0) {
        printf("no window\n");
        return;
    }
    printf("%-4s %-18s %-10s %-10s %-9s %-8s %-8s %-18s %5s %5s %5s %5s %5s %9s\n", "ID", "NAME",
           "JOB", "STATE", "STEPS", "TOOL", "MODE", "ROLES", "RANKS", "OK", "FAIL", "MISS", "TRUNC",
           "BYTES");
    for (size_t i = 0; i < n; i++) {
        const pp_window_t *w = &v[i];
        char steps[48], bytes[24], roles[128] = "";
        ctl_fmt_steps(steps, sizeof(steps), w->first_step, w->last_step);
        ctl_fmt_size(bytes, sizeof(bytes), w->bytes, "");
        for (size_t k = 0; k < w->roles_n; k++) {
            size_t l = strlen(roles);
            snprintf(roles + l, sizeof(roles) - l, "%s%s", k ? "," : "", w->roles[k]);
        }
        printf("%-4lld %-18s %-10s %-10s %-9s %-8s %-8s %-18s %5lld %5lld %5lld %5lld %5lld %9s\n",
               (long long)w->id, w->name, ctl_or_dash(w->job),
               ctl_or_dash(pp_enum_name(&pp_enum_window_state, w->state)), steps,
               ctl_or_dash(w->tool), ctl_or_dash(pp_mode_name(w->mode)), roles[0] ? roles : "all",
               (long long)w->selected, (long long)w->complete, (long long)w->failed,
               (long long)w->missed, (long long)w->truncated, bytes);
    }
    for (size_t i = 0; i < n; i++) { /* what retention and the hook did */
        if (v[i].pruned) {
            printf("%lld %s: pruned: %s\n", (long long)v[i].id, v[i].name, v[i].pruned);
        }
        if (v[i].hook) {
            printf("%lld %s: hook: %s\n", (long long)v[i].id, v[i].name, v[i].hook);
        }
    }
}

void ctl_print_window_detail(const pp_window_t *w)
{
    char steps[48];
    ctl_print_windows(w, 1);
    ctl_fmt_steps(steps, sizeof(steps), w->first_step, w->last_step);
    printf("\npath      %s\n", ctl_or_dash(w->path));
    printf("source    %s\n", ctl_or_dash(w->source));
    printf("settings  %s\n", ctl_or_dash(w->settings));
    if (w->reason) {
        printf("reason    %s\n", w->reason);
    }
    if (w->hook_output) {
        printf("hook output (its end):\n%s%s", w->hook_output,
               w->hook_output[0] && w->hook_output[strlen(w->hook_output) - 1] != '\n' ? "\n" : "");
    }
    for (size_t i = 0; i < w->warnings_n; i++) {
        printf("warning   %s\n", w->warnings[i]);
    }
    if (w->ranks_n) {
        printf("\n%6s %-10s %7s %-16s %-9s\n", "RANK", "ROLE", "REPLICA", "HOST", "STATE");
        for (size_t i = 0; i < w->ranks_n; i++) {
            char rep[24];
            fmt_i64(rep, sizeof(rep), w->ranks[i].replica_rank);
            printf("%6lld %-10s %7s %-16s %-9s\n", (long long)w->ranks[i].rank, w->ranks[i].role,
                   rep, w->ranks[i].host,
                   ctl_or_dash(pp_enum_name(&pp_enum_member_state, w->ranks[i].state)));
            for (size_t k = 0; k < w->ranks[i].failures_n; k++) {
                printf("%6s %s\n", "", w->ranks[i].failures[k]);
            }
        }
    }
}

void ctl_print_started(const pp_started_t *s, const char *verb)
{
    for (size_t i = 0; i < s->warnings_n; i++) {
        fprintf(stderr, "warning: %s\n", s->warnings[i]);
    }
    for (size_t i = 0; i < s->windows_n; i++) {
        const pp_window_t *w = &s->windows[i];
        char steps[48];
        ctl_fmt_steps(steps, sizeof(steps), w->first_step, w->last_step);
        printf("%s window %lld %s: steps %s, %lld rank(s), tool %s, %s -> %s\n", verb,
               (long long)w->id, w->name, steps, (long long)w->selected, w->tool,
               ctl_or_dash(pp_mode_name(w->mode)), ctl_or_dash(w->path));
        for (size_t k = 0; k < w->warnings_n; k++) {
            fprintf(stderr, "warning: %s: %s\n", w->name, w->warnings[k]);
        }
    }
    if (s->windows_n == 0) {
        printf("no window %s\n", strcmp(verb, "stopping") == 0 ? "to stop" : "created");
    }
}

/* Milliseconds as top and status show them: "-" for none. */
void ctl_fmt_ms(char *buf, size_t len, double ms)
{
    if (ms <= 0) {
        snprintf(buf, len, "-");
    } else if (ms < 10) {
        snprintf(buf, len, "%.2f", ms);
    } else {
        snprintf(buf, len, "%.1f", ms);
    }
}

/* The per-role table profctl status and top share. */
void ctl_print_roles(const pp_role_stats_t *v, size_t n, bool jobs)
{
    char a[24], b[24], c[24], step[24];
    printf("%-10s %-12s %6s %8s %9s %9s %9s %7s  %s\n", "JOB", "ROLE", "RANKS", "STEP", "MIN_MS",
           "P50_MS", "MAX_MS", "STALLED", "SLOWEST (rank: ms, x median)");
    for (size_t i = 0; i < n; i++) {
        const pp_role_stats_t *r = &v[i];
        char slow[256] = "";
        for (size_t k = 0; k < r->slowest_n; k++) {
            size_t l = strlen(slow);
            ctl_fmt_ms(a, sizeof(a), r->slowest[k].step_ms);
            snprintf(slow + l, sizeof(slow) - l, "%s%lld: %s (%.2fx)", k ? ", " : "",
                     (long long)r->slowest[k].rank, a, r->slowest[k].ratio);
        }
        ctl_fmt_ms(a, sizeof(a), r->min_ms);
        ctl_fmt_ms(b, sizeof(b), r->p50_ms);
        ctl_fmt_ms(c, sizeof(c), r->max_ms);
        if (r->step == PP_NONE) {
            snprintf(step, sizeof(step), "-");
        } else {
            snprintf(step, sizeof(step), "%lld", (long long)r->step);
        }
        printf("%-10s %-12s %6lld %8s %9s %9s %9s %7zu  %s\n", jobs ? r->job : r->job, r->role,
               (long long)r->ranks, step, a, b, c, r->stalled_n, slow[0] ? slow : "-");
    }
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < v[i].stalled_n; k++) {
            const pp_rank_stat_t *s = &v[i].stalled[k];
            printf("stalled: %s rank %lld on %s%s%s%s, in step %lld for %.1f s\n", s->role,
                   (long long)s->rank, s->host, s->node ? " (node " : "", s->node ? s->node : "",
                   s->node ? ")" : "", (long long)(s->step == PP_NONE ? 0 : s->step),
                   s->in_step_ms / 1000.0);
        }
    }
}

/* The straggler trigger (watch, top). */
void ctl_print_trigger(const pp_straggler_t *t)
{
    char roles[256] = "";
    for (size_t i = 0; i < t->roles_n; i++) {
        size_t l = strlen(roles);
        snprintf(roles + l, sizeof(roles) - l, "%s%s", i ? "," : "", t->roles[i]);
    }
    if (!t->armed) {
        printf("straggler trigger: off");
    } else {
        printf("straggler trigger: armed: a rank over %.2fx its role's median for %lld step(s) "
               "(roles %s%s%s) gets a window of %lld step(s) (tool %s) with a healthy peer; "
               "at most one every %.0f s",
               t->factor, (long long)t->consecutive, roles[0] ? roles : "all",
               t->job ? ", job " : "", t->job ? t->job : "", (long long)t->steps,
               ctl_or_dash(t->tool), (double)t->interval_ms / 1000.0);
        if (t->max_bytes > 0) {
            printf(", %lld of %lld bytes used", (long long)t->bytes, (long long)t->max_bytes);
        }
    }
    printf("; %lld window(s) opened", (long long)t->fired);
    if (t->last_window != PP_NONE) {
        printf(", the last %lld", (long long)t->last_window);
    }
    printf("\n");
    if (t->last_reason) {
        printf("  last: %s\n", t->last_reason);
    }
}
