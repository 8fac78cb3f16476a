// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Records of messages.def in memory, driven by their field descriptors
 * (tables.c): initialise, free and deep-copy a record, and set one field
 * from text (the command line's `name=value`).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "profd/proto.h"
#include "fields.h"

/* ---- record memory ---- */

void pp_record_init(const pp_desc_t *d, void *rec)
{
    memset(rec, 0, d->size);
    for (size_t i = 0; i < d->nfields; i++) {
        const pp_field_t *f = &d->fields[i];
        if (f->kind == PP_K_I64 && (f->flags & PP_NUL)) {
            *(int64_t *)FIELD_PTR(rec, f) = PP_NONE;
        } else if (f->kind == PP_K_OBJ) {
            pp_record_init(f->sub, FIELD_PTR(rec, f));
        }
    }
}

/* Release what one field holds and reset it to empty (not OBJ defaults:
 * pp_record_free re-initialises the whole record afterwards). */
static void pp_record_free_field(const pp_field_t *f, void *rec)
{
    void *p = FIELD_PTR(rec, f);
    switch (f->kind) {
    case PP_K_STR:
    case PP_K_JSON:
    case PP_K_I64S:
        free(*(void **)p);
        *(void **)p = NULL;
        break;
    case PP_K_STRS: {
        char **v = *(char ***)p;
        for (size_t j = 0; v && j < *FIELD_N(rec, f); j++) {
            free(v[j]);
        }
        free(v);
        *(void **)p = NULL;
        break;
    }
    case PP_K_ARR: {
        char *v = *(char **)p;
        for (size_t j = 0; v && j < *FIELD_N(rec, f); j++) {
            pp_record_free(f->sub, v + j * f->sub->size);
        }
        free(v);
        *(void **)p = NULL;
        break;
    }
    case PP_K_OBJ:
        pp_record_free(f->sub, p);
        return;
    default:
        return;
    }
    if (f->off_n) {
        *FIELD_N(rec, f) = 0;
    }
}

void pp_record_free(const pp_desc_t *d, void *rec)
{
    if (rec == NULL) {
        return;
    }
    for (size_t i = 0; i < d->nfields; i++) {
        pp_record_free_field(&d->fields[i], rec);
    }
    pp_record_init(d, rec);
}

void pp_records_free(const pp_desc_t *d, void *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        pp_record_free(d, (char *)v + i * d->size);
    }
    free(v);
}

static char *dup_str(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* The elements of an array field, copied deep; 0 or PROFD_ENOMEM. */
static int copy_array(const pp_field_t *f, void *dst, const void *src)
{
    size_t n = FIELD_CN(src, f);
    const void *sp = FIELD_CPTR(src, f);
    if (n == 0) {
        return 0;
    }
    if (f->kind == PP_K_I64S) {
        int64_t *v = malloc(n * sizeof(*v));
        if (v == NULL) {
            return PROFD_ENOMEM;
        }
        memcpy(v, *(int64_t *const *)sp, n * sizeof(*v));
        *(int64_t **)FIELD_PTR(dst, f) = v;
        *FIELD_N(dst, f) = n;
        return 0;
    }
    size_t esz = f->kind == PP_K_STRS ? sizeof(char *) : f->sub->size;
    char *v = calloc(n, esz);
    if (v == NULL) {
        return PROFD_ENOMEM;
    }
    *(char **)FIELD_PTR(dst, f) = v;
    *FIELD_N(dst, f) = n;
    for (size_t j = 0; f->kind == PP_K_ARR && j < n; j++) {
        pp_record_init(f->sub, v + j * esz);
    }
    for (size_t j = 0; j < n; j++) {
        if (f->kind == PP_K_STRS) {
            if ((((char **)(void *)v)[j] = dup_str((*(char **const *)sp)[j])) == NULL) {
                return PROFD_ENOMEM;
            }
        } else if (pp_record_copy(f->sub, v + j * esz, *(char *const *)sp + j * esz) != 0) {
            return PROFD_ENOMEM;
        }
    }
    return 0;
}

int pp_record_copy(const pp_desc_t *d, void *dst, const void *src)
{
    pp_record_init(d, dst);
    for (size_t i = 0; i < d->nfields; i++) {
        const pp_field_t *f = &d->fields[i];
        void *dp = FIELD_PTR(dst, f);
        const void *sp = FIELD_CPTR(src, f);
        int rv = 0;
        switch (f->kind) {
        case PP_K_I64:
            *(int64_t *)dp = *(const int64_t *)sp;
            break;
        case PP_K_BOOL:
            *(bool *)dp = *(const bool *)sp;
            break;
        case PP_K_F64:
            *(double *)dp = *(const double *)sp;
            break;
        case PP_K_ENUM:
            *(int *)dp = *(const int *)sp;
            break;
        case PP_K_STR:
        case PP_K_JSON:
            if (*(char *const *)sp && (*(char **)dp = dup_str(*(char *const *)sp)) == NULL) {
                rv = PROFD_ENOMEM;
            }
            break;
        case PP_K_OBJ:
            rv = pp_record_copy(f->sub, dp, sp);
            break;
        default:
            rv = copy_array(f, dst, src);
            break;
        }
        if (rv != 0) {
            pp_record_free(d, dst);
            return PROFD_ENOMEM;
        }
    }
    return 0;
}

static bool str_equal(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* Two values of one field, deep. */
static bool field_equal(const pp_field_t *f, const void *a, const void *b)
{
    const void *ap = FIELD_CPTR(a, f), *bp = FIELD_CPTR(b, f);
    switch (f->kind) {
    case PP_K_I64:
        return *(const int64_t *)ap == *(const int64_t *)bp;
    case PP_K_BOOL:
        return *(const bool *)ap == *(const bool *)bp;
    case PP_K_F64:
        return *(const double *)ap == *(const double *)bp;
    case PP_K_ENUM:
        return *(const int *)ap == *(const int *)bp;
    case PP_K_STR:
    case PP_K_JSON:
        return str_equal(*(char *const *)ap, *(char *const *)bp);
    case PP_K_OBJ:
        return pp_record_equal(f->sub, ap, bp);
    default:
        break;
    }
    size_t n = FIELD_CN(a, f);
    if (n != FIELD_CN(b, f)) {
        return false;
    }
    for (size_t j = 0; j < n; j++) {
        if (f->kind == PP_K_I64S) {
            if ((*(int64_t *const *)ap)[j] != (*(int64_t *const *)bp)[j]) {
                return false;
            }
        } else if (f->kind == PP_K_STRS) {
            if (!str_equal((*(char **const *)ap)[j], (*(char **const *)bp)[j])) {
                return false;
            }
        } else if (!pp_record_equal(f->sub, *(char *const *)ap + j * f->sub->size,
                                    *(char *const *)bp + j * f->sub->size)) {
            return false;
        }
    }
    return true;
}

bool pp_record_equal(const pp_desc_t *d, const void *a, const void *b)
{
    for (size_t i = 0; i < d->nfields; i++) {
        if (!field_equal(&d->fields[i], a, b)) {
            return false;
        }
    }
    return true;
}

/* ---- fields from text (command lines) ---- */

const pp_field_t *pp_field_find(const pp_desc_t *d, const char *name)
{
    for (size_t i = 0; name && i < d->nfields; i++) {
        if (strcmp(d->fields[i].name, name) == 0) {
            return &d->fields[i];
        }
    }
    return NULL;
}

/* An integer within +-PP_INT_MAX (a step: 0..PP_INT_MAX), as the wire
 * takes it. */
static bool text_i64(const char *s, unsigned flags, int64_t *out)
{
    char *end;
    if (*s == '\0') {
        return false;
    }
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end != '\0' || v < ((flags & PP_STEP) ? 0 : -PP_INT_MAX) || v > PP_INT_MAX) {
        return false;
    }
    *out = v;
    return true;
}

/* Comma-separated elements of a list field. */
static int set_list(const pp_field_t *f, void *rec, const char *text, char *err, size_t errlen)
{
    size_t n = 1, k = 0;
    for (const char *p = text; *p; p++) {
        n += *p == ',';
    }
    if (*text == '\0' || n > PP_MAX_ARR) {
        snprintf(err, errlen, "expected a comma-separated list");
        return PROFD_EINVAL;
    }
    char *copy = strdup(text), *save = NULL;
    void *v = calloc(n, f->kind == PP_K_I64S ? sizeof(int64_t) : sizeof(char *));
    int rv = copy && v ? 0 : PROFD_ENOMEM;
    for (char *tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && rv == 0;
         tok = strtok_r(NULL, ",", &save)) {
        if (f->kind == PP_K_I64S && !text_i64(tok, f->flags, (int64_t *)v + k)) {
            if (f->flags & PP_STEP) {
                snprintf(err, errlen, "expected steps like 1,2 (0..2^53-1), found '%.64s'", tok);
            } else {
                snprintf(err, errlen, "expected integers like 0,1, found '%.64s'", tok);
            }
            rv = PROFD_EINVAL;
        } else if (f->kind == PP_K_STRS && !pp_ident_ok(tok)) {
            snprintf(err, errlen, "expected names like a,b ([A-Za-z0-9_-]), found '%.64s'", tok);
            rv = PROFD_EINVAL;
        } else if (f->kind == PP_K_STRS && (((char **)v)[k] = strdup(tok)) == NULL) {
            rv = PROFD_ENOMEM;
        }
        k++;
    }
    free(copy);
    if (rv == 0 && k != n) { /* an empty element: "1,,2" or "1," */
        snprintf(err, errlen, "expected a comma-separated list without empty elements");
        rv = PROFD_EINVAL;
    }
    if (rv != 0) {
        for (size_t i = 0; f->kind == PP_K_STRS && v && i < n; i++) {
            free(((char **)v)[i]);
        }
        free(v);
        return rv;
    }
    pp_record_free_field(f, rec);
    *(void **)FIELD_PTR(rec, f) = v;
    *FIELD_N(rec, f) = n;
    return 0;
}

int pp_field_set_text(const pp_desc_t *d, void *rec, const char *name, const char *text, char *err,
                      size_t errlen)
{
    const pp_field_t *f = pp_field_find(d, name);
    void *p = f ? FIELD_PTR(rec, f) : NULL;
    int64_t v;
    int e;
    if (f == NULL) {
        snprintf(err, errlen, "no field '%.64s' in %s", name ? name : "", d->name);
        return PROFD_EINVAL;
    }
    switch (f->kind) {
    case PP_K_I64:
        if (!text_i64(text, f->flags, &v)) {
            snprintf(err, errlen, "expected %s, found '%.64s'",
                     (f->flags & PP_STEP) ? "a step 0..2^53-1" : "an integer", text);
            return PROFD_EINVAL;
        }
        *(int64_t *)p = v;
        return 0;
    case PP_K_BOOL:
        if (strcmp(text, "true") != 0 && strcmp(text, "false") != 0) {
            snprintf(err, errlen, "expected true or false, found '%.64s'", text);
            return PROFD_EINVAL;
        }
        *(bool *)p = strcmp(text, "true") == 0;
        return 0;
    case PP_K_ENUM:
        if ((e = pp_enum_value(f->en, text)) == 0) {
            snprintf(err, errlen, "expected a %s name, found '%.64s'", f->en->name, text);
            return PROFD_EINVAL;
        }
        *(int *)p = e;
        return 0;
    case PP_K_STR:
    case PP_K_JSON: {
        cJSON *j = f->kind == PP_K_JSON ? cJSON_Parse(text) : NULL;
        bool object = j && cJSON_IsObject(j);
        cJSON_Delete(j);
        if (f->kind == PP_K_JSON && !object) {
            snprintf(err, errlen, "expected a JSON object");
            return PROFD_EINVAL;
        }
        char *copy = strdup(text);
        if (copy == NULL) {
            return PROFD_ENOMEM;
        }
        free(*(char **)p);
        *(char **)p = copy;
        return 0;
    }
    case PP_K_I64S:
    case PP_K_STRS:
        return set_list(f, rec, text, err, errlen);
    default:
        snprintf(err, errlen, "field '%s' is not set from text", f->name);
        return PROFD_EINVAL;
    }
}
