// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The "why" part of a window's report (see reportwhy.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "htmlbuf.h"
#include "reportwhy.h"
#include "scores.h"

static void ms(pu_sbuf_t *b, int64_t us)
{
    if (us < 0) {
        pu_sbuf_str(b, "-");
    } else {
        pu_sbuf_fmt(b, "%.3f", (double)us / 1000.0);
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int64_t pd_report_section_us(const pp_steps_doc_t *doc, const pp_steps_rank_t *r, int sec)
{
    int64_t v[256];
    size_t n = 0;
    if (doc->steps_n != 2 || doc->window_n != 2 || sec < 0 || sec >= PD_SECS) {
        return -1;
    }
    int64_t first = doc->steps[0], nsteps = doc->steps[1] - doc->steps[0] + 1;
    if (r->section_us == NULL || nsteps <= 0 ||
        r->section_us_n != (size_t)PP_SECTIONS * (size_t)nsteps || r->step_us_n != (size_t)nsteps) {
        return -1;
    }
    for (int64_t i = 0; i < nsteps && n < 256; i++) {
        int64_t s = first + i, step = r->step_us[i], x[PD_SECS], sum = 0;
        bool any = false;
        if (s < doc->window[0] || s >= doc->window[1] || step <= 0) {
            continue;
        }
        for (int k = 0; k < PP_SECTIONS; k++) {
            int64_t us = r->section_us[(size_t)k * (size_t)nsteps + (size_t)i];
            any |= us >= 0;
            x[k] = us > 0 ? us : 0;
            sum += x[k];
        }
        if (!any) {
            continue;
        }
        x[PD_SEC_COMPUTE] = x[PD_SEC_FORWARD] + x[PD_SEC_BACKWARD] + x[PD_SEC_OPTIMIZER];
        x[PD_SEC_OTHER] = step > sum ? step - sum : 0;
        v[n++] = x[sec];
    }
    if (n == 0) {
        return -1;
    }
    qsort(v, n, sizeof(*v), cmp_i64);
    return v[(n - 1) / 2]; /* the lower middle, as scores.h */
}

/* the order of the columns: compute and comm first, they say who waits */
static const int cols[] = {PD_SEC_COMPUTE,  PD_SEC_COMM,      PD_SEC_DATA, PD_SEC_FORWARD,
                           PD_SEC_BACKWARD, PD_SEC_OPTIMIZER, PD_SEC_OTHER};
#define NCOLS (sizeof(cols) / sizeof(cols[0]))

static const pp_steps_rank_t *rank_of(const pp_steps_doc_t *d, const char *role, int64_t rank)
{
    for (size_t i = 0; i < d->ranks_n; i++) {
        if (d->ranks[i].rank == rank && (role == NULL || strcmp(d->ranks[i].role, role) == 0)) {
            return &d->ranks[i];
        }
    }
    return NULL;
}

static void sections_table(pu_sbuf_t *b, const pp_steps_doc_t *d)
{
    size_t n = 0;
    for (size_t i = 0; i < d->ranks_n; i++) {
        n += pd_report_section_us(d, &d->ranks[i], PD_SEC_COMPUTE) >= 0;
    }
    if (n == 0) {
        pu_sbuf_str(b, "<p class=\"muted\">No rank sent sections (where its step time goes): "
                       "PROFD_AUTO=1 measures them in PyTorch jobs, profd_section_begin/end and "
                       "Client.section() anywhere.</p>\n");
        return;
    }
    pu_sbuf_str(b, "<table id=\"sections\"><tr><th>role</th><th class=\"n\">rank</th>"
                   "<th>in window</th><th class=\"n\">step ms</th>");
    for (size_t k = 0; k < NCOLS; k++) {
        pu_sbuf_fmt(b, "<th class=\"n\">%s ms</th>", pd_sec_name(cols[k]));
    }
    pu_sbuf_str(b, "</tr>\n");
    for (size_t i = 0; i < d->ranks_n; i++) {
        const pp_steps_rank_t *r = &d->ranks[i];
        if (pd_report_section_us(d, r, PD_SEC_COMPUTE) < 0) {
            continue;
        }
        pu_sbuf_fmt(b, "<tr data-rank=\"%lld\"><td>", (long long)r->rank);
        pd_html_esc(b, r->role);
        pu_sbuf_fmt(b, "</td><td class=\"n\">%lld</td><td>%s</td><td class=\"n\">",
                    (long long)r->rank, r->member ? "yes" : "no");
        ms(b, (int64_t)(r->median_ms * 1000.0 + 0.5));
        pu_sbuf_str(b, "</td>");
        for (size_t k = 0; k < NCOLS; k++) {
            pu_sbuf_fmt(b, "<td class=\"n\" data-sec=\"%s\">", pd_sec_name(cols[k]));
            ms(b, pd_report_section_us(d, r, cols[k]));
            pu_sbuf_str(b, "</td>");
        }
        pu_sbuf_str(b, "</tr>\n");
        pd_html_spill(b, false);
    }
    pu_sbuf_str(b, "</table>\n<p class=\"muted\">Medians over the window's steps, in ms. compute = "
                   "forward + backward + optimizer; comm = time waiting in collective "
                   "communication; other = the step outside every section. In a synchronous job "
                   "every step time is the same: the straggler is the rank whose compute is slow "
                   "while the others wait (their comm grows by its extra compute).</p>\n");
}

static void why_tables(pu_sbuf_t *b, const pp_steps_doc_t *d, const pp_trace_diff_t *t)
{
    const pp_steps_rank_t *s = rank_of(d, t->role, t->slow_rank);
    const pp_steps_rank_t *p = rank_of(d, t->role, t->peer_rank);
    pu_sbuf_fmt(b, "<h2>Why: rank %lld beside rank %lld</h2>\n", (long long)t->slow_rank,
                (long long)t->peer_rank);
    if (s && p) {
        pu_sbuf_fmt(b,
                    "<table id=\"why-sections\"><tr><th>section</th><th class=\"n\">rank %lld ms"
                    "</th><th class=\"n\">rank %lld ms</th><th class=\"n\">difference ms</th>"
                    "</tr>\n",
                    (long long)t->slow_rank, (long long)t->peer_rank);
        for (size_t k = 0; k < NCOLS; k++) {
            int64_t a = pd_report_section_us(d, s, cols[k]);
            int64_t c = pd_report_section_us(d, p, cols[k]);
            pu_sbuf_fmt(b, "<tr data-sec=\"%s\"><td>%s</td><td class=\"n\">", pd_sec_name(cols[k]),
                        pd_sec_name(cols[k]));
            ms(b, a);
            pu_sbuf_str(b, "</td><td class=\"n\">");
            ms(b, c);
            pu_sbuf_str(b, "</td><td class=\"n\">");
            if (a >= 0 && c >= 0) {
                pu_sbuf_fmt(b, "%+.3f", (double)(a - c) / 1000.0);
            } else {
                pu_sbuf_str(b, "-");
            }
            pu_sbuf_str(b, "</td></tr>\n");
        }
        pu_sbuf_str(b, "</table>\n");
    }
    pu_sbuf_fmt(b,
                "<p>Operators, kernels and annotations whose self time differs most between the "
                "two ranks' traces over the window (rank %lld's extra time on top, rank %lld's "
                "at the bottom):</p>\n",
                (long long)t->slow_rank, (long long)t->peer_rank);
    pu_sbuf_fmt(b,
                "<table id=\"why-ops\"><tr><th>name</th><th>category</th><th class=\"n\">rank "
                "%lld ms</th><th class=\"n\">rank %lld ms</th><th class=\"n\">difference ms</th>"
                "<th class=\"n\">calls</th></tr>\n",
                (long long)t->slow_rank, (long long)t->peer_rank);
    for (size_t i = 0; i < t->rows_n; i++) {
        const pp_op_diff_t *o = &t->rows[i];
        pu_sbuf_str(b, "<tr class=\"op\"><td>");
        pd_html_esc(b, o->name);
        pu_sbuf_str(b, "</td><td>");
        pd_html_esc(b, o->cat ? o->cat : "-");
        pu_sbuf_str(b, "</td><td class=\"n\">");
        ms(b, o->slow_us);
        pu_sbuf_str(b, "</td><td class=\"n\">");
        ms(b, o->peer_us);
        pu_sbuf_fmt(b, "</td><td class=\"n%s\">%+.3f</td><td class=\"n\">%lld / %lld</td></tr>\n",
                    o->slow_us > o->peer_us ? " hot" : "",
                    (double)(o->slow_us - o->peer_us) / 1000.0, (long long)o->slow_n,
                    (long long)o->peer_n);
        pd_html_spill(b, false);
    }
    pu_sbuf_str(b, "<tr id=\"why-total\"><th>total</th><th></th><th class=\"n\">");
    ms(b, t->slow_total_us);
    pu_sbuf_str(b, "</th><th class=\"n\">");
    ms(b, t->peer_total_us);
    pu_sbuf_fmt(b,
                "</th><th class=\"n\">%+.3f</th><th class=\"n\">%lld / %lld</th></tr>\n</table>\n",
                (double)(t->slow_total_us - t->peer_total_us) / 1000.0, (long long)t->slow_events,
                (long long)t->peer_events);
    pu_sbuf_fmt(b,
                "<p class=\"muted\">Self time: an event's duration less those of the events "
                "nested in it on the same thread. %lld distinct name(s)%s; the numbers are in "
                "tracediff.json.</p>\n",
                (long long)t->names, t->truncated ? ", the rarest summed as (other names)" : "");
    for (size_t i = 0; i < t->warnings_n; i++) {
        pu_sbuf_str(b, "<p class=\"warn\">");
        pd_html_esc(b, t->warnings[i]);
        pu_sbuf_str(b, "</p>\n");
    }
}

static bool is_trace(const char *path)
{
    size_t n = strlen(path);
    return (n > 5 && strcmp(path + n - 5, ".json") == 0) ||
           (n > 8 && strcmp(path + n - 8, ".json.gz") == 0);
}

static void traces(pu_sbuf_t *b, const pp_manifest_t *m)
{
    size_t n = 0;
    pu_sbuf_str(b, "<ul id=\"traces\">\n");
    for (size_t i = 0; i < m->captures_n; i++) {
        const pp_capture_t *c = &m->captures[i];
        for (size_t f = 0; c->dir && f < c->files_n; f++) {
            const char *p = c->files[f].path;
            if (!is_trace(p) || strncmp(p, "profd-markers", 13) == 0) {
                continue;
            }
            pu_sbuf_fmt(b, "<li>rank %lld ", (long long)c->rank);
            pd_html_esc(b, c->role);
            pu_sbuf_str(b, ": <a href=\"");
            pd_html_esc(b, c->dir);
            pu_sbuf_str(b, "/");
            pd_html_esc(b, p);
            pu_sbuf_str(b, "\">");
            pd_html_esc(b, c->dir);
            pu_sbuf_str(b, "/");
            pd_html_esc(b, p);
            pu_sbuf_str(b, "</a></li>\n");
            pd_html_spill(b, false);
            n++;
        }
    }
    if (n == 0) {
        pu_sbuf_str(b, "<li class=\"muted\">no trace file in the window's captures</li>\n");
    }
    pu_sbuf_fmt(b,
                "<li>merged timeline of every rank on one clock: <a href=\"merged.trace.json\">"
                "merged.trace.json</a> (written by <code>profctl merge %lld</code>)</li>\n</ul>\n",
                (long long)m->window.id);
    pu_sbuf_str(b,
                "<p>Open a trace or the merged timeline in Perfetto: <a "
                "href=\"https://ui.perfetto.dev\">ui.perfetto.dev</a>, <i>Open trace file</i> (or "
                "chrome://tracing, <i>Load</i>). In TensorBoard, with the PyTorch profiler plugin "
                "(torch-tb-profiler): <code>tensorboard --logdir tensorboard</code> in this "
                "folder (its <i>tensorboard</i> folder links every rank's trace; the distributed "
                "view compares the ranks).</p>\n");
}

void pd_report_why_draw(pu_sbuf_t *b, const pp_steps_doc_t *doc, const pp_manifest_t *man,
                        const pp_trace_diff_t *diff)
{
    pu_sbuf_str(b, "<h2>Where the time goes</h2>\n");
    sections_table(b, doc);
    if (diff) {
        why_tables(b, doc, diff);
    }
    pu_sbuf_str(b, "<h2>Traces</h2>\n");
    traces(b, man);
}
