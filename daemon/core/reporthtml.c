// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* report.html (see reporthtml.h). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "htmlbuf.h"
#include "reporthtml.h"

static void ms(pu_sbuf_t *b, double v)
{
    if (v <= 0) {
        pu_sbuf_str(b, "-");
    } else if (v < 10) {
        pu_sbuf_fmt(b, "%.2f", v);
    } else {
        pu_sbuf_fmt(b, "%.1f", v);
    }
}

/* ---- the parts ---- */

static const char *const css =
    "body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#222;"
    "background:#fff}h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px;"
    "border-bottom:1px solid #ddd;padding-bottom:4px}table{border-collapse:collapse;"
    "margin:4px 0}th,td{padding:3px 8px;text-align:left;border-bottom:1px solid #eee;"
    "font-variant-numeric:tabular-nums}th{background:#f5f5f5}td.n,th.n{text-align:right}"
    ".muted{color:#777}.st-complete{color:#1a7f37}.st-failed{color:#cf222e;font-weight:600}"
    ".st-missed{color:#9a6700;font-weight:600}.st-truncated{color:#bc4c00;font-weight:600}"
    ".hot{color:#cf222e;font-weight:600}.warn{color:#9a6700}dl{display:grid;"
    "grid-template-columns:max-content auto;gap:2px 16px;margin:8px 0}dt{color:#555}dd{margin:0}"
    "svg text{font:11px system-ui,sans-serif;fill:#333}.legend span{display:inline-block;"
    "width:14px;height:10px;margin:0 4px 0 12px;vertical-align:middle}"
    ".scroll{overflow:auto;max-width:100%;border:1px solid #eee}";

/* Green at the role's median or faster, yellow at 1.5x, red at 2x and more. */
static void cell_color(char *buf, size_t len, double ratio)
{
    double r = ratio < 1.0 ? 1.0 : ratio > 2.0 ? 2.0 : ratio;
    int hue = (int)(120.0 * (2.0 - r) + 0.5);
    snprintf(buf, len, "hsl(%d,70%%,%d%%)", hue, ratio <= 1.0 ? 55 : 50);
}

static const char *const palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
#define NPALETTE (sizeof(palette) / sizeof(palette[0]))

static const pp_steps_role_t *role_of(const pp_steps_doc_t *d, const char *role)
{
    for (size_t i = 0; i < d->roles_n; i++) {
        if (strcmp(d->roles[i].role, role) == 0) {
            return &d->roles[i];
        }
    }
    return NULL;
}

static void summary(pu_sbuf_t *b, const pp_steps_doc_t *d, const pp_manifest_t *m)
{
    const pp_manifest_window_t *w = &m->window;
    int64_t count[5] = {0};
    for (size_t i = 0; i < m->captures_n; i++) {
        int s = (int)m->captures[i].status;
        count[s >= 0 && s < 5 ? s : 0]++;
    }
    pu_sbuf_str(b, "<dl>");
    pu_sbuf_str(b, "<dt>job</dt><dd>");
    pd_html_esc(b, m->job);
    pu_sbuf_fmt(b, "</dd><dt>window</dt><dd>%lld (", (long long)w->id);
    pd_html_esc(b, w->name);
    pu_sbuf_str(b, ")</dd><dt>steps</dt><dd>");
    if (w->steps_n == 2) {
        if (w->steps[1] < 0) {
            pu_sbuf_fmt(b, "from %lld (open)", (long long)w->steps[0]);
        } else {
            pu_sbuf_fmt(b, "%lld to %lld", (long long)w->steps[0], (long long)w->steps[1] - 1);
        }
    }
    pu_sbuf_str(b, "</dd><dt>tool, mode</dt><dd>");
    pd_html_esc(b, w->tool);
    pu_sbuf_str(b, ", ");
    pd_html_esc(b, pp_mode_name(w->mode));
    pu_sbuf_str(b, "</dd><dt>roles</dt><dd>");
    for (size_t i = 0; i < w->roles_n; i++) {
        if (i) {
            pu_sbuf_str(b, ", ");
        }
        pd_html_esc(b, w->roles[i]);
    }
    if (w->roles_n == 0) {
        pu_sbuf_str(b, "all");
    }
    pu_sbuf_str(b, "</dd><dt>opened by</dt><dd id=\"source\">");
    pd_html_esc(b, w->source ? w->source : d->source);
    pu_sbuf_fmt(b,
                "</dd><dt>captures</dt><dd>%zu: <span class=\"st-complete\">%lld complete</span>, "
                "<span class=\"st-failed\">%lld failed</span>, <span class=\"st-missed\">%lld "
                "missed</span>, <span class=\"st-truncated\">%lld truncated</span></dd>",
                m->captures_n, (long long)count[PP_CAP_COMPLETE], (long long)count[PP_CAP_FAILED],
                (long long)count[PP_CAP_MISSED], (long long)count[PP_CAP_TRUNCATED]);
    pu_sbuf_fmt(b, "<dt>ranks</dt><dd>%zu in %zu role(s)</dd>", d->ranks_n, d->roles_n);
    for (size_t i = 0; i < w->warnings_n; i++) {
        pu_sbuf_str(b, "<dt class=\"warn\">warning</dt><dd class=\"warn\">");
        pd_html_esc(b, w->warnings[i]);
        pu_sbuf_str(b, "</dd>");
    }
    pu_sbuf_str(b, "</dl>\n");
}

static void heatmap(pu_sbuf_t *b, const pp_steps_doc_t *d)
{
    int64_t first = d->steps_n == 2 ? d->steps[0] : 0;
    int64_t nsteps = d->steps_n == 2 ? d->steps[1] - d->steps[0] + 1 : 0;
    int64_t wf = d->window_n == 2 ? d->window[0] : first;
    int64_t wl = d->window_n == 2 && d->window[1] > 0 ? d->window[1] - 1 : wf;
    size_t rows = d->ranks_n < PD_REPORT_MAX_ROWS ? d->ranks_n : PD_REPORT_MAX_ROWS;
    if (nsteps <= 0 || rows == 0) {
        pu_sbuf_str(b, "<p class=\"muted\">No step times were recorded for this job.</p>\n");
        return;
    }
    int cw = (int)(840 / nsteps);
    cw = cw < 6 ? 6 : cw > 28 ? 28 : cw;
    int rh = rows <= 128 ? 16 : rows <= 512 ? 8 : 3;
    int label = rh >= 8 ? 200 : 120, top = 28;
    int width = label + (int)nsteps * cw + 10, height = top + (int)rows * rh + 8;
    pu_sbuf_fmt(
        b,
        "<p class=\"muted\">Each cell is one step of one rank: green at or below its role's "
        "median step time for that step, yellow at 1.5x, red at 2x and more, grey where no "
        "time was recorded. The frame marks the window's steps (%lld to %lld).</p>\n",
        (long long)wf, (long long)wl);
    pu_sbuf_fmt(
        b,
        "<div class=\"scroll\"><svg id=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" "
        "width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"step times, rank by step\">\n",
        width, height);
    /* step labels */
    int every = cw >= 24 ? 1 : cw >= 12 ? 2 : cw >= 8 ? 5 : 10;
    for (int64_t i = 0; i < nsteps; i++) {
        if ((first + i) % every == 0) {
            pu_sbuf_fmt(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%lld</text>\n",
                        label + (int)i * cw + cw / 2, top - 8, (long long)(first + i));
        }
    }
    const char *prev_role = NULL;
    for (size_t k = 0; k < rows; k++) {
        const pp_steps_rank_t *r = &d->ranks[k];
        const pp_steps_role_t *ro = role_of(d, r->role);
        int y = top + (int)k * rh;
        if (rh >= 8) {
            pu_sbuf_fmt(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", label - 6, y + rh - 3);
            pd_html_esc(b, r->role);
            pu_sbuf_fmt(b, " %lld ", (long long)r->rank);
            pd_html_esc(b, r->host);
            pu_sbuf_str(b, "</text>\n");
        } else if (prev_role == NULL || strcmp(prev_role, r->role) != 0) {
            pu_sbuf_fmt(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", label - 6, y + 9);
            pd_html_esc(b, r->role);
            pu_sbuf_str(b, "</text>\n");
        }
        prev_role = r->role;
        pu_sbuf_fmt(b, "<g class=\"row\" data-rank=\"%lld\" data-role=\"", (long long)r->rank);
        pd_html_esc(b, r->role);
        pu_sbuf_str(b, "\">");
        for (int64_t i = 0; i < nsteps && (size_t)i < r->step_us_n; i++) {
            int64_t us = r->step_us[i];
            int64_t med = ro && (size_t)i < ro->p50_us_n ? ro->p50_us[i] : -1;
            char color[32] = "#ddd";
            if (us > 0 && med > 0) {
                cell_color(color, sizeof(color), (double)us / (double)med);
            }
            pu_sbuf_fmt(
                b,
                "<rect class=\"cell\" data-rank=\"%lld\" data-step=\"%lld\" x=\"%d\" y=\"%d\" "
                "width=\"%d\" height=\"%d\" fill=\"%s\"><title>",
                (long long)r->rank, (long long)(first + i), label + (int)i * cw, y,
                cw > 2 ? cw - 1 : cw, rh > 2 ? rh - 1 : rh, color);
            pd_html_esc(b, r->role);
            pu_sbuf_fmt(b, " rank %lld, step %lld: ", (long long)r->rank, (long long)(first + i));
            if (us > 0) {
                pu_sbuf_fmt(b, "%.1f ms (role median %.1f ms)", (double)us / 1000.0,
                            med > 0 ? (double)med / 1000.0 : 0.0);
            } else {
                pu_sbuf_str(b, "no time recorded");
            }
            pu_sbuf_str(b, "</title></rect>");
        }
        pu_sbuf_str(b, "</g>\n");
        pd_html_spill(b, false);
    }
    if (wl >= first && wf <= first + nsteps - 1) {
        int64_t a = wf < first ? first : wf, z = wl > first + nsteps - 1 ? first + nsteps - 1 : wl;
        pu_sbuf_fmt(b,
                    "<rect id=\"window-frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                    "fill=\"none\" stroke=\"#111\" stroke-width=\"2\"/>\n",
                    label + (int)(a - first) * cw - 1, top - 2, (int)(z - a + 1) * cw + 1,
                    (int)rows * rh + 3);
    }
    pu_sbuf_str(b, "</svg></div>\n");
    if (d->ranks_n > rows) {
        pu_sbuf_fmt(
            b,
            "<p class=\"warn\">%zu more rank(s) are not drawn (at most %d rows); steps.json "
            "has every rank.</p>\n",
            d->ranks_n - rows, PD_REPORT_MAX_ROWS);
    }
}

static void phases(pu_sbuf_t *b, const pp_steps_doc_t *d)
{
    bool any = false;
    for (size_t i = 0; i < d->roles_n; i++) {
        const pp_steps_role_t *ro = &d->roles[i];
        int64_t total = (int64_t)(ro->p50_ms * 1000.0 + 0.5), sum = 0;
        pu_sbuf_str(b, "<h3>");
        pd_html_esc(b, ro->role);
        pu_sbuf_fmt(b, " <span class=\"muted\">(%lld rank(s), median step ", (long long)ro->ranks);
        ms(b, ro->p50_ms);
        pu_sbuf_str(b, " ms)</span></h3>\n");
        if (ro->phases_n == 0) {
            pu_sbuf_str(b, "<p class=\"muted\">No phase was timed for this role.</p>\n");
            continue;
        }
        any = true;
        for (size_t q = 0; q < ro->phases_n; q++) {
            sum += ro->phase_p50_us[q] > 0 ? ro->phase_p50_us[q] : 0;
        }
        int64_t other = total > sum ? total - sum : 0;
        int64_t whole = sum + other > 0 ? sum + other : 1;
        double x = 0;
        pu_sbuf_fmt(b, "<svg class=\"phases\" xmlns=\"http://www.w3.org/2000/svg\" width=\"720\" "
                       "height=\"22\" role=\"img\" aria-label=\"phase breakdown\">");
        for (size_t q = 0; q <= ro->phases_n; q++) {
            int64_t v = q < ro->phases_n ? ro->phase_p50_us[q] : other;
            if (v <= 0) {
                continue;
            }
            double wdt = 720.0 * (double)v / (double)whole;
            pu_sbuf_fmt(b,
                        "<rect x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"20\" fill=\"%s\"><title>",
                        x, wdt, q < ro->phases_n ? palette[q % NPALETTE] : "#ccc");
            pd_html_esc(b, q < ro->phases_n ? ro->phases[q] : "other");
            pu_sbuf_fmt(b, ": %.1f ms</title></rect>", (double)v / 1000.0);
            x += wdt;
        }
        pu_sbuf_str(b, "</svg>\n<table><tr><th>phase</th><th class=\"n\">median ms per step</th>"
                       "<th class=\"n\">share</th></tr>\n");
        for (size_t q = 0; q <= ro->phases_n; q++) {
            int64_t v = q < ro->phases_n ? ro->phase_p50_us[q] : other;
            pu_sbuf_fmt(b, "<tr><td><span style=\"color:%s\">&#9632;</span> ",
                        q < ro->phases_n ? palette[q % NPALETTE] : "#ccc");
            pd_html_esc(b, q < ro->phases_n ? ro->phases[q] : "other (outside the phases)");
            pu_sbuf_str(b, "</td><td class=\"n\">");
            ms(b, (double)v / 1000.0);
            pu_sbuf_fmt(b, "</td><td class=\"n\">%.0f%%</td></tr>\n",
                        v > 0 ? 100.0 * (double)v / (double)whole : 0.0);
        }
        pu_sbuf_str(b, "</table>\n");
    }
    if (!any && d->roles_n == 0) {
        pu_sbuf_str(b, "<p class=\"muted\">No role has step times.</p>\n");
    }
}

static int cmp_ratio(const void *a, const void *b)
{
    const pp_steps_rank_t *x = *(const pp_steps_rank_t *const *)a;
    const pp_steps_rank_t *y = *(const pp_steps_rank_t *const *)b;
    if (x->ratio != y->ratio) {
        return x->ratio < y->ratio ? 1 : -1;
    }
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static void slowest(pu_sbuf_t *b, const pp_steps_doc_t *d)
{
    const pp_steps_rank_t **v = malloc((d->ranks_n ? d->ranks_n : 1) * sizeof(*v));
    size_t n = 0;
    if (v == NULL) {
        b->oom = true;
        return;
    }
    for (size_t i = 0; i < d->ranks_n; i++) {
        if (d->ranks[i].ratio > 0) {
            v[n++] = &d->ranks[i];
        }
    }
    qsort(v, n, sizeof(*v), cmp_ratio);
    if (n == 0) {
        pu_sbuf_str(b, "<p class=\"muted\">No rank has step times in the window.</p>\n");
    } else {
        pu_sbuf_str(b, "<table id=\"slowest\"><tr><th>role</th><th class=\"n\">rank</th>"
                       "<th>host</th><th class=\"n\">median ms</th><th class=\"n\">role median ms"
                       "</th><th class=\"n\">ratio</th><th>in window</th></tr>\n");
    }
    for (size_t i = 0; i < n && i < PD_REPORT_SLOWEST; i++) {
        const pp_steps_role_t *ro = role_of(d, v[i]->role);
        pu_sbuf_fmt(b, "<tr data-rank=\"%lld\"><td>", (long long)v[i]->rank);
        pd_html_esc(b, v[i]->role);
        pu_sbuf_fmt(b, "</td><td class=\"n\">%lld</td><td>", (long long)v[i]->rank);
        pd_html_esc(b, v[i]->host);
        pu_sbuf_str(b, "</td><td class=\"n\">");
        ms(b, v[i]->median_ms);
        pu_sbuf_str(b, "</td><td class=\"n\">");
        ms(b, ro ? ro->p50_ms : 0);
        pu_sbuf_fmt(b, "</td><td class=\"n%s\">%.2fx</td><td>%s</td></tr>\n",
                    v[i]->ratio >= 1.5 ? " hot" : "", v[i]->ratio, v[i]->member ? "yes" : "no");
    }
    if (n) {
        pu_sbuf_str(b, "</table>\n");
    }
    free(v);
}

static void captures(pu_sbuf_t *b, const pp_manifest_t *m)
{
    if (m->captures_n == 0) {
        pu_sbuf_str(b, "<p class=\"muted\">The window has no capture.</p>\n");
        return;
    }
    pu_sbuf_str(b,
                "<table id=\"captures\"><tr><th>role</th><th>phase</th><th class=\"n\">rank</th>"
                "<th class=\"n\">replica</th><th>host</th><th>steps</th><th>status</th>"
                "<th>reason</th><th class=\"n\">files</th><th class=\"n\">bytes</th><th>folder</th>"
                "</tr>\n");
    for (size_t i = 0; i < m->captures_n; i++) {
        const pp_capture_t *c = &m->captures[i];
        int64_t bytes = 0;
        for (size_t f = 0; f < c->files_n; f++) {
            bytes += c->files[f].bytes;
        }
        const char *st = pp_status_name(c->status);
        pu_sbuf_str(b, "<tr><td>");
        pd_html_esc(b, c->role);
        pu_sbuf_str(b, "</td><td>");
        pd_html_esc(b, c->phase);
        pu_sbuf_fmt(b, "</td><td class=\"n\">%lld</td><td class=\"n\">", (long long)c->rank);
        if (c->replica_rank == PP_NONE) {
            pu_sbuf_str(b, "-");
        } else {
            pu_sbuf_fmt(b, "%lld", (long long)c->replica_rank);
        }
        pu_sbuf_str(b, "</td><td>");
        pd_html_esc(b, c->host);
        pu_sbuf_str(b, "</td><td>");
        if (c->first_step == PP_NONE) {
            pu_sbuf_str(b, "-");
        } else if (c->last_step == PP_NONE || c->last_step == c->first_step) {
            pu_sbuf_fmt(b, "%lld", (long long)c->first_step);
        } else {
            pu_sbuf_fmt(b, "%lld-%lld", (long long)c->first_step, (long long)c->last_step);
        }
        pu_sbuf_fmt(b, "</td><td class=\"st-%s\">%s</td><td>", st ? st : "none", st ? st : "-");
        pd_html_esc(b, c->reason);
        pu_sbuf_fmt(b, "</td><td class=\"n\">%zu</td><td class=\"n\">%lld</td><td>", c->files_n,
                    (long long)bytes);
        pd_html_esc(b, c->dir);
        pu_sbuf_str(b, "</td></tr>\n");
        pd_html_spill(b, false);
    }
    pu_sbuf_str(b, "</table>\n");
}

int pd_report_html(const pp_steps_doc_t *doc, const pp_manifest_t *man, const char *version,
                   char **out, size_t *len)
{
    return pd_report_html_with(doc, man, version, NULL, out, len);
}

static void page(pd_hout_t *o, const pp_steps_doc_t *doc, const pp_manifest_t *man,
                 const char *version, const char *extra, const pd_report_part_t *part)
{
    pu_sbuf_t *b = &o->b;
    pu_sbuf_str(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                   "<title>profd report: ");
    pd_html_esc(b, man->job);
    pu_sbuf_str(b, " ");
    pd_html_esc(b, man->window.name);
    pu_sbuf_fmt(b, "</title>\n<style>%s</style></head><body>\n<h1>", css);
    pd_html_esc(b, man->job);
    pu_sbuf_str(b, " / ");
    pd_html_esc(b, man->window.name);
    pu_sbuf_str(b, "</h1>\n");
    summary(b, doc, man);
    pu_sbuf_str(b, "<h2>Step times, rank by step</h2>\n");
    heatmap(b, doc);
    pu_sbuf_str(b, "<h2>Phases per role</h2>\n");
    phases(b, doc);
    pu_sbuf_str(b, "<h2>Slowest ranks against their role's median</h2>\n");
    slowest(b, doc);
    if (extra) {
        pu_sbuf_str(b, extra);
    }
    if (part) {
        part->draw(b, part->arg);
    }
    pu_sbuf_str(b, "<h2>Captures</h2>\n");
    captures(b, man);
    pu_sbuf_str(b, "<p class=\"muted\">Step times are each rank's time from step begin to step end "
                   "on its own clock; medians over the window's steps. Written by profd ");
    pd_html_esc(b, version);
    pu_sbuf_str(b, "; the numbers are in steps.json next to this page.</p>\n</body></html>\n");
    pd_html_spill(b, true);
}

int pd_report_html_with(const pp_steps_doc_t *doc, const pp_manifest_t *man, const char *version,
                        const char *extra, char **out, size_t *len)
{
    pd_hout_t o = {.sink = NULL};
    page(&o, doc, man, version, extra, NULL);
    if (o.b.oom) {
        free(o.b.p);
        return PROFD_ENOMEM;
    }
    *out = o.b.p;
    *len = o.b.len;
    return 0;
}

int pd_report_html_to(const pp_steps_doc_t *doc, const pp_manifest_t *man, const char *version,
                      const char *extra, const pp_sink_t *sink)
{
    if (sink == NULL || sink->put == NULL) {
        return PROFD_EINVAL;
    }
    pd_hout_t o = {.sink = sink};
    page(&o, doc, man, version, extra, NULL);
    int rv = o.rv ? o.rv : o.b.oom ? PROFD_ENOMEM : 0;
    pu_sbuf_free(&o.b);
    return rv;
}

int pd_report_html_part_to(const pp_steps_doc_t *doc, const pp_manifest_t *man, const char *version,
                           const pd_report_part_t *part, const pp_sink_t *sink)
{
    if (sink == NULL || sink->put == NULL || part == NULL || part->draw == NULL) {
        return PROFD_EINVAL;
    }
    pd_hout_t o = {.sink = sink};
    page(&o, doc, man, version, NULL, part);
    int rv = o.rv ? o.rv : o.b.oom ? PROFD_ENOMEM : 0;
    pu_sbuf_free(&o.b);
    return rv;
}
