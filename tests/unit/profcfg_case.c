/* The case runner shared by the profiling-config tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static char *specs_json(const pd_profcfg_t *out)
{
    size_t cap = 2, len = 1;
    char *s = malloc(cap);
    strcpy(s, "[");
    for (size_t i = 0; i < out->n_specs; i++) {
        char *j;
        size_t n;
        assert_int_equal(pp_record_encode(&pp_desc_window_spec, &out->specs[i], false, &j, &n), 0);
        s = realloc(s, cap = len + n + 3);
        if (i) {
            strcat(s, ",");
        }
        strcat(s, j);
        len = strlen(s);
        free(j);
    }
    s = realloc(s, len + 2);
    strcat(s, "]");
    return s;
}

static void dump_c(const char *label, const char *s)
{
    printf("    %s \"", label);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') {
            putchar('\\');
        }
        putchar(*s);
    }
    printf("\"\n");
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
    if (getenv("PROFCFG_DUMP") != NULL) {
        printf("== %s rc=%d\n", c->name, rc);
        if (rc != 0) {
            dump_c("err", err);
        } else {
            char *j = specs_json(&out);
            printf("    schema %s\n", out.schema);
            dump_c("specs", j);
            for (size_t i = 0; i < out.n_warnings; i++) {
                dump_c("warn", out.warnings[i]);
            }
            free(j);
            pd_profcfg_free(&out);
        }
        return;
    }
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
    char *j = specs_json(&out);
    if (strcmp(j, c->specs) != 0) {
        print_error("%s:\n got  %s\n want %s\n", c->name, j, c->specs);
    }
    assert_string_equal(j, c->specs);
    free(j);
    assert_string_equal(out.schema, c->schema);
    size_t nw = 0;
    while (nw < sizeof(c->warn) / sizeof(c->warn[0]) && c->warn[nw] != NULL) {
        nw++;
    }
    for (size_t i = 0; i < out.n_warnings && i < nw; i++) {
        if (strcmp(out.warnings[i], c->warn[i]) != 0) {
            print_error("%s: warning %zu:\n got  %s\n want %s\n", c->name, i, out.warnings[i],
                        c->warn[i]);
        }
        assert_string_equal(out.warnings[i], c->warn[i]);
    }
    if (out.n_warnings != nw) {
        print_error("%s: %zu warnings, expected %zu\n", c->name, out.n_warnings, nw);
    }
    assert_int_equal(out.n_warnings, nw);
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
