// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The case runner shared by the profiling-config tests (profcfg_case.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "profcfg.h"
#include "profcfg_case.h"
#include "profd/errors.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        print_error("cannot open %s\n", path);
    }
    assert_non_null(f);
    char *buf = malloc(1 << 20);
    *len = fread(buf, 1, 1 << 20, f);
    fclose(f);
    return buf;
}

/* ---- a growing string ---- */

typedef struct out {
    char buf[8192];
    size_t n;
} out_t;

static void put(out_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out_t *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(o->buf + o->n, sizeof(o->buf) - o->n, fmt, ap);
    va_end(ap);
    if (k > 0) {
        o->n += (size_t)k < sizeof(o->buf) - o->n ? (size_t)k : sizeof(o->buf) - o->n - 1;
    }
}

/* JSON with object keys sorted, no spaces: settings compare by content. */
static void canon(out_t *o, const cJSON *j)
{
    if (cJSON_IsObject(j)) {
        const cJSON *keys[64];
        int n = 0;
        for (const cJSON *c = j->child; c != NULL && n < 64; c = c->next) {
            int at = n++;
            while (at > 0 && strcmp(keys[at - 1]->string, c->string) > 0) {
                keys[at] = keys[at - 1];
                at--;
            }
            keys[at] = c;
        }
        put(o, "{");
        for (int i = 0; i < n; i++) {
            put(o, "%s\"%s\":", i ? "," : "", keys[i]->string);
            canon(o, keys[i]);
        }
        put(o, "}");
    } else if (cJSON_IsArray(j)) {
        put(o, "[");
        for (const cJSON *c = j->child; c != NULL; c = c->next) {
            put(o, "%s", c == j->child ? "" : ",");
            canon(o, c);
        }
        put(o, "]");
    } else {
        char *s = cJSON_PrintUnformatted(j);
        put(o, "%s", s);
        free(s);
    }
}

static void settings(out_t *o, const char *json)
{
    cJSON *j = cJSON_Parse(json);
    if (j == NULL) {
        put(o, "settings=<bad JSON %s>", json);
        return;
    }
    put(o, "settings=");
    canon(o, j);
    cJSON_Delete(j);
}

static void ints(out_t *o, const char *name, const int64_t *v, size_t n)
{
    if (n == 0) {
        return;
    }
    put(o, " %s=", name);
    for (size_t i = 0; i < n; i++) {
        put(o, "%s%lld", i ? "," : "", (long long)v[i]);
    }
}

static void sched(out_t *o, const pp_schedule_t *s)
{
    if (s->active > 0) {
        put(o, " schedule=%lld,%lld,%lld,%lld,%lld", (long long)s->skip_first, (long long)s->wait,
            (long long)s->warmup, (long long)s->active, (long long)s->repeat);
    }
}

static void selector(out_t *o, const pp_selector_t *s)
{
    put(o, " | %s", s->role ? s->role : "*");
    if (s->all_ranks) {
        put(o, " all");
    }
    ints(o, "ranks", s->ranks, s->ranks_n);
    ints(o, "replicas", s->replica_ranks, s->replica_ranks_n);
    for (size_t i = 0; i < s->phases_n; i++) {
        put(o, "%s%s", i ? "," : " phases=", s->phases[i]);
    }
    if (s->tool) {
        put(o, " tool=%s", s->tool);
    }
    if (s->mode != PP_MODE_NONE) {
        put(o, " mode=%s", pp_mode_name(s->mode));
    }
    if (s->settings) {
        put(o, " ");
        settings(o, s->settings);
    }
    sched(o, &s->schedule);
}

static void request(out_t *o, const pp_window_spec_t *w)
{
    if (w->steps_n > 0) {
        ints(o, "steps", w->steps, w->steps_n);
    } else {
        put(o, " start=%lld end=%lld", (long long)w->start, (long long)w->end);
    }
    if (w->continuous) {
        put(o, " continuous");
    }
    put(o, " tool=%s mode=%s ", w->tool ? w->tool : "-", pp_mode_name(w->mode));
    settings(o, w->settings ? w->settings : "{}");
    if (w->save_path) {
        put(o, " save=%s", w->save_path);
    }
    sched(o, &w->schedule);
    for (size_t i = 0; i < w->selectors_n; i++) {
        selector(o, &w->selectors[i]);
    }
}

static void render(const pd_profcfg_t *cfg, out_t *o)
{
    for (size_t i = 0; i < cfg->n_specs; i++) {
        if (i) {
            put(o, " ||");
        }
        request(o, &cfg->specs[i]);
    }
}

/* The expected form with its settings made canonical, spaces single. */
static void normalize(const char *want, out_t *o)
{
    const char *p = want;
    while (*p != '\0') {
        while (*p == ' ') {
            p++;
        }
        if (*p == '\0') {
            break;
        }
        size_t len = strcspn(p, " ");
        if (strncmp(p, "settings=", 9) == 0) {
            char json[2048];
            snprintf(json, sizeof(json), "%.*s", (int)(len - 9), p + 9);
            put(o, " ");
            settings(o, json);
        } else {
            put(o, " %.*s", (int)len, p);
        }
        p += len;
    }
}

/* ---- the run ---- */

static void check_warnings(const char *name, const char *what, char *const *got, size_t n,
                           const char *const *want, size_t max)
{
    size_t nw = 0;
    while (nw < max && want[nw] != NULL) {
        nw++;
    }
    for (size_t i = 0; i < n && i < nw; i++) {
        if (strcmp(got[i], want[i]) != 0) {
            print_error("%s: %s warning %zu:\n got  %s\n want %s\n", name, what, i, got[i],
                        want[i]);
        }
        assert_string_equal(got[i], want[i]);
    }
    if (n != nw) {
        print_error("%s: %zu %s warnings, expected %zu%s%s\n", name, n, what, nw,
                    n > nw ? "; first extra: " : "", n > nw ? got[nw] : "");
    }
    assert_int_equal(n, nw);
}

static void check_result(const pcase_t *c, pd_profcfg_t *out)
{
    out_t got = {.n = 0}, want = {.n = 0};
    render(out, &got);
    normalize(c->want ? c->want : "", &want);
    if (strcmp(got.buf, want.buf) != 0) {
        print_error("%s:\n got  %s\n want %s\n", c->name, got.buf, want.buf);
    }
    assert_string_equal(got.buf, want.buf);
    assert_string_equal(out->schema, c->schema);
    check_warnings(c->name, "file", out->warnings, out->n_warnings, c->warn,
                   sizeof(c->warn) / sizeof(c->warn[0]));
    char *sw[16];
    size_t nsw = 0;
    for (size_t i = 0; i < out->n_specs; i++) {
        for (size_t k = 0; k < out->specs[i].warnings_n && nsw < 16; k++) {
            sw[nsw++] = out->specs[i].warnings[k];
        }
    }
    check_warnings(c->name, "request", sw, nsw, c->swarn, sizeof(c->swarn) / sizeof(c->swarn[0]));
    if (out->n_specs == 0) {
        assert_non_null(out->no_window);
        if (c->no_window == NULL || strstr(out->no_window, c->no_window) == NULL) {
            print_error("%s: no window because '%s', expected '%s'\n", c->name, out->no_window,
                        c->no_window ? c->no_window : "(a reason to be written)");
        }
        assert_non_null(c->no_window);
        assert_non_null(strstr(out->no_window, c->no_window));
    } else {
        assert_null(out->no_window);
    }
}

void run_case(const pcase_t *c)
{
    char path[1024], err[1024] = "";
    const char *file = c->name;
    char *text = NULL;
    size_t len, nov = 0;
    pd_profcfg_t out;
    memset(&out, 0xab, sizeof(out)); /* must stay untouched on error */
    pd_profcfg_t poison = out;

    if (c->corpus) {
        snprintf(path, sizeof(path), "%s/%s", PROFD_CORPUS_DIR, c->name);
        text = slurp(path, &len);
        file = strrchr(c->name, '/') ? strrchr(c->name, '/') + 1 : c->name;
    } else {
        len = strlen(c->text);
    }
    while (nov < sizeof(c->ov) / sizeof(c->ov[0]) && c->ov[nov] != NULL) {
        nov++;
    }
    int rc = pd_profcfg_load(file, text ? text : c->text, len, (char *const *)c->ov, nov, &out, err,
                             sizeof(err));
    free(text);
    if (rc != c->rc) {
        print_error("%s: rc %d, expected %d (%s)\n", c->name, rc, c->rc, err);
    }
    assert_int_equal(rc, c->rc);
    if (rc != 0) {
        if (strcmp(err, c->err) != 0) {
            print_error("%s:\n got  %s\n want %s\n", c->name, err, c->err);
        }
        assert_string_equal(err, c->err);
        assert_memory_equal(&out, &poison, sizeof(out));
        return;
    }
    check_result(c, &out);
    pd_profcfg_free(&out);
    assert_null(out.specs);
    assert_int_equal(out.n_specs, 0);
}

void run_table(const pcase_t *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        run_case(&t[i]);
    }
}
