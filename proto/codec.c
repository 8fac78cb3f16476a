// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The one codec: JSON <-> the C records of messages.def, driven by the field
 * descriptors generated below. This is the only file that reads or writes
 * message JSON; no cJSON type leaves it.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "profd/proto.h"

/* ---- enumerations ---- */

#define PP_ENUM_NAME(c, name) name,
#define PP_DEF_ENUM(id)                                                                            \
    static const char *const pp_names_##id[] = {PP_ENUM_##id(PP_ENUM_NAME)};                       \
    const pp_enum_t pp_enum_##id = {#id, pp_names_##id,                                            \
                                    (int)(sizeof(pp_names_##id) / sizeof(pp_names_##id[0]))};
PP_ENUMS(PP_DEF_ENUM)
#undef PP_DEF_ENUM
#undef PP_ENUM_NAME

const char *pp_enum_name(const pp_enum_t *e, int v)
{
    return v > 0 && v < e->count ? e->names[v] : NULL;
}

int pp_enum_value(const pp_enum_t *e, const char *name)
{
    for (int i = 1; name && i < e->count; i++) {
        if (strcmp(e->names[i], name) == 0) {
            return i;
        }
    }
    return 0;
}

/* ---- descriptors ---- */

#define PP_FD_I64(T, n, fl, s)  {#n, PP_K_I64, fl, offsetof(T, n), 0, NULL, NULL},
#define PP_FD_BOOL(T, n, fl, s) {#n, PP_K_BOOL, fl, offsetof(T, n), 0, NULL, NULL},
#define PP_FD_F64(T, n, fl, s)  {#n, PP_K_F64, fl, offsetof(T, n), 0, NULL, NULL},
#define PP_FD_STR(T, n, fl, s)  {#n, PP_K_STR, fl, offsetof(T, n), 0, NULL, NULL},
#define PP_FD_JSON(T, n, fl, s) {#n, PP_K_JSON, fl, offsetof(T, n), 0, NULL, NULL},
#define PP_FD_ENUM(T, n, fl, s) {#n, PP_K_ENUM, fl, offsetof(T, n), 0, NULL, &pp_enum_##s},
#define PP_FD_I64S(T, n, fl, s) {#n, PP_K_I64S, fl, offsetof(T, n), offsetof(T, n##_n), NULL, NULL},
#define PP_FD_STRS(T, n, fl, s) {#n, PP_K_STRS, fl, offsetof(T, n), offsetof(T, n##_n), NULL, NULL},
#define PP_FD_ARR(T, n, fl, s)                                                                     \
    {#n, PP_K_ARR, fl, offsetof(T, n), offsetof(T, n##_n), &pp_desc_##s, NULL},
#define PP_FD_OBJ(T, n, fl, s)           {#n, PP_K_OBJ, fl, offsetof(T, n), 0, &pp_desc_##s, NULL},
#define PP_FD(T, kind, name, flags, sub) PP_FD_##kind(T, name, flags, sub)

#define PP_DEF_DESC(id)                                                                            \
    static const pp_field_t pp_fields_##id[] = {PP_FIELDS_##id(PP_FD, pp_##id##_t)};               \
    const pp_desc_t pp_desc_##id = {#id, sizeof(pp_##id##_t), pp_fields_##id,                      \
                                    sizeof(pp_fields_##id) / sizeof(pp_fields_##id[0])};
PP_RECORDS(PP_DEF_DESC)
#undef PP_DEF_DESC

/* ---- message table ---- */

typedef struct msg_info {
    pp_type_t type;
    const char *name;
    const pp_desc_t *desc;
    pp_access_t access;
} msg_info_t;

static const msg_info_t msg_table[] = {
#define PP_MSG_ROW(id, name, body, acc) {PP_T_##name, #name, &pp_desc_##body, acc},
    PP_MSGS(PP_MSG_ROW)
#undef PP_MSG_ROW
};
#define MSG_COUNT (sizeof(msg_table) / sizeof(msg_table[0]))

static const msg_info_t *msg_find(pp_type_t t)
{
    for (size_t i = 0; i < MSG_COUNT; i++) {
        if (msg_table[i].type == t) {
            return &msg_table[i];
        }
    }
    return NULL;
}

const char *pp_type_name(pp_type_t t)
{
    const msg_info_t *mi = msg_find(t);
    return mi ? mi->name : NULL;
}

pp_type_t pp_type_from_name(const char *name)
{
    for (size_t i = 0; name && i < MSG_COUNT; i++) {
        if (strcmp(msg_table[i].name, name) == 0) {
            return msg_table[i].type;
        }
    }
    return PP_T_NONE;
}

pp_access_t pp_type_access(pp_type_t t)
{
    const msg_info_t *mi = msg_find(t);
    return mi ? mi->access : PP_ACC_REPLY;
}

const pp_desc_t *pp_type_desc(pp_type_t t)
{
    const msg_info_t *mi = msg_find(t);
    return mi ? mi->desc : NULL;
}

/* ---- record memory ---- */

#define FIELD_PTR(rec, f)  ((void *)((char *)(rec) + (f)->off))
#define FIELD_CPTR(rec, f) ((const void *)((const char *)(rec) + (f)->off))
#define FIELD_N(rec, f)    ((size_t *)((char *)(rec) + (f)->off_n))
#define FIELD_CN(rec, f)   (*(const size_t *)((const char *)(rec) + (f)->off_n))

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

/* ---- decoding ---- */

typedef struct dctx {
    char *err;
    size_t errlen;
    char path[256];
} dctx_t;

static int fail(dctx_t *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(dctx_t *c, int code, const char *fmt, ...)
{
    if (c->err && c->errlen) {
        char msg[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (c->path[0]) {
            snprintf(c->err, c->errlen, "field '%s': %s", c->path, msg);
        } else {
            snprintf(c->err, c->errlen, "%s", msg);
        }
    }
    return code;
}

static const char *json_kind(const cJSON *j)
{
    if (cJSON_IsNull(j)) {
        return "null";
    }
    if (cJSON_IsBool(j)) {
        return "boolean";
    }
    if (cJSON_IsNumber(j)) {
        return "number";
    }
    if (cJSON_IsString(j)) {
        return "string";
    }
    if (cJSON_IsArray(j)) {
        return "array";
    }
    if (cJSON_IsObject(j)) {
        return "object";
    }
    return "invalid value";
}

/* An integer within +-PP_INT_MAX: every integer a double holds exactly, so
 * that arithmetic on what a peer sent cannot overflow int64_t. */
static bool json_i64(const cJSON *j, int64_t *out)
{
    if (!cJSON_IsNumber(j)) {
        return false;
    }
    double v = j->valuedouble;
    if (!isfinite(v) || v != floor(v) || v < -(double)PP_INT_MAX || v > (double)PP_INT_MAX) {
        return false;
    }
    *out = (int64_t)v;
    return true;
}

/* An integer field's value, bounded; a step also not negative. */
static int decode_i64(const pp_field_t *f, const cJSON *j, int64_t *out, dctx_t *c)
{
    if (cJSON_IsNumber(j) && isfinite(j->valuedouble) && j->valuedouble == floor(j->valuedouble) &&
        !json_i64(j, out)) {
        return fail(c, PROFD_EPROTO, "integer out of range (|n| < 2^53)");
    }
    if (!json_i64(j, out)) {
        return fail(c, PROFD_EPROTO, "expected integer, found %s", json_kind(j));
    }
    if ((f->flags & PP_STEP) && *out < 0) {
        return fail(c, PROFD_EPROTO, "a step must be 0..2^53-1, found %lld", (long long)*out);
    }
    return 0;
}

static int decode_fields(const pp_desc_t *d, const cJSON *obj, void *rec, dctx_t *c);

static int decode_enum(const pp_field_t *f, const cJSON *j, int *out, dctx_t *c)
{
    if (!cJSON_IsString(j)) {
        return fail(c, PROFD_EPROTO, "expected string, found %s", json_kind(j));
    }
    int v = pp_enum_value(f->en, j->valuestring);
    if (v == 0 && !(f->flags & PP_LAX)) {
        char names[160];
        size_t n = 0;
        names[0] = '\0';
        for (int i = 1; i < f->en->count && n < sizeof(names); i++) {
            n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s", i > 1 ? ", " : "",
                                  f->en->names[i]);
        }
        return fail(c, PROFD_EPROTO, "expected one of %s, found '%.64s'", names, j->valuestring);
    }
    *out = v;
    return 0;
}

/* An array field: integers, strings or records. */
static int decode_array(const pp_field_t *f, const cJSON *j, void *rec, dctx_t *c)
{
    void *p = FIELD_PTR(rec, f);
    int n, rv;
    if (!cJSON_IsArray(j)) {
        return fail(c, PROFD_EPROTO, "expected array, found %s", json_kind(j));
    }
    n = cJSON_GetArraySize(j);
    if (n > PP_MAX_ARR) {
        return fail(c, PROFD_ETOOBIG, "more than %d elements", PP_MAX_ARR);
    }
    if (n == 0) {
        return 0;
    }
    size_t esz = f->kind == PP_K_I64S   ? sizeof(int64_t)
                 : f->kind == PP_K_STRS ? sizeof(char *)
                                        : f->sub->size;
    char *v = calloc((size_t)n, esz);
    if (v == NULL) {
        return PROFD_ENOMEM;
    }
    *(char **)p = v;
    if (f->kind == PP_K_ARR) {
        for (int i = 0; i < n; i++) {
            pp_record_init(f->sub, v + (size_t)i * esz);
        }
    }
    *FIELD_N(rec, f) = (size_t)n;

    size_t plen = strlen(c->path);
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, j)
    {
        snprintf(c->path + plen, sizeof(c->path) - plen, "[%d]", i);
        if (f->kind == PP_K_I64S) {
            if ((rv = decode_i64(f, e, (int64_t *)(void *)(v + (size_t)i * esz), c)) != 0) {
                return rv;
            }
        } else if (f->kind == PP_K_STRS) {
            if (!cJSON_IsString(e)) {
                return fail(c, PROFD_EPROTO, "expected string, found %s", json_kind(e));
            }
            if (strlen(e->valuestring) > PP_MAX_STR) {
                return fail(c, PROFD_ETOOBIG, "string longer than %d bytes", PP_MAX_STR);
            }
            if ((((char **)(void *)v)[i] = strdup(e->valuestring)) == NULL) {
                return PROFD_ENOMEM;
            }
        } else {
            if (!cJSON_IsObject(e)) {
                return fail(c, PROFD_EPROTO, "expected object, found %s", json_kind(e));
            }
            if ((rv = decode_fields(f->sub, e, v + (size_t)i * esz, c)) != 0) {
                return rv;
            }
        }
        i++;
    }
    c->path[plen] = '\0';
    return 0;
}

static int decode_field(const pp_field_t *f, const cJSON *j, void *rec, dctx_t *c)
{
    void *p = FIELD_PTR(rec, f);

    if (cJSON_IsNull(j)) {
        /* a lax state reads an unknown name as none, which encodes as null:
         * null reads back as none */
        if ((f->flags & PP_REQ) && !(f->kind == PP_K_ENUM && (f->flags & PP_LAX))) {
            return fail(c, PROFD_EPROTO, "must not be null");
        }
        return 0; /* null == absent: the init value stays */
    }
    switch (f->kind) {
    case PP_K_I64:
        return decode_i64(f, j, (int64_t *)p, c);
    case PP_K_BOOL:
        if (!cJSON_IsBool(j)) {
            return fail(c, PROFD_EPROTO, "expected boolean, found %s", json_kind(j));
        }
        *(bool *)p = cJSON_IsTrue(j);
        return 0;
    case PP_K_F64:
        if (!cJSON_IsNumber(j) || !isfinite(j->valuedouble)) {
            return fail(c, PROFD_EPROTO, "expected number, found %s", json_kind(j));
        }
        *(double *)p = j->valuedouble;
        return 0;
    case PP_K_STR:
        if (!cJSON_IsString(j)) {
            return fail(c, PROFD_EPROTO, "expected string, found %s", json_kind(j));
        }
        if (strlen(j->valuestring) > PP_MAX_STR) {
            return fail(c, PROFD_ETOOBIG, "string longer than %d bytes", PP_MAX_STR);
        }
        if ((*(char **)p = strdup(j->valuestring)) == NULL) {
            return PROFD_ENOMEM;
        }
        return 0;
    case PP_K_JSON:
        if ((*(char **)p = cJSON_PrintUnformatted(j)) == NULL) {
            return PROFD_ENOMEM;
        }
        return 0;
    case PP_K_ENUM:
        return decode_enum(f, j, (int *)p, c);
    case PP_K_OBJ:
        if (!cJSON_IsObject(j)) {
            return fail(c, PROFD_EPROTO, "expected object, found %s", json_kind(j));
        }
        return decode_fields(f->sub, j, p, c);
    default:
        return decode_array(f, j, rec, c);
    }
}

static int decode_fields(const pp_desc_t *d, const cJSON *obj, void *rec, dctx_t *c)
{
    size_t plen = strlen(c->path);
    for (size_t i = 0; i < d->nfields; i++) {
        const pp_field_t *f = &d->fields[i];
        const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, f->name);
        snprintf(c->path + plen, sizeof(c->path) - plen, "%s%s", plen ? "." : "", f->name);
        if (j == NULL) {
            if (f->flags & PP_REQ) {
                return fail(c, PROFD_EPROTO, "missing");
            }
            continue;
        }
        int rv = decode_field(f, j, rec, c);
        if (rv != 0) {
            return rv;
        }
    }
    c->path[plen] = '\0';
    return 0;
}

/* A \u0000 escape in a string: cJSON would cut the string there, so the
 * daemon would act on a different text than the one sent. */
static bool has_nul_escape(const char *s, size_t len)
{
    bool str = false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '"') {
            str = !str;
        } else if (str && s[i] == '\\' && i + 1 < len) {
            if (s[i + 1] == 'u' && i + 5 < len && memcmp(s + i + 2, "0000", 4) == 0) {
                return true;
            }
            i++; /* the escaped character */
        }
    }
    return false;
}

static int parse_doc(const void *buf, size_t len, size_t max, cJSON **out, dctx_t *c)
{
    if (buf == NULL || out == NULL) {
        return fail(c, PROFD_EINVAL, "no input");
    }
    if (max && len > max) {
        return fail(c, PROFD_ETOOBIG, "message of %zu bytes exceeds the limit of %zu", len, max);
    }
    if (has_nul_escape(buf, len)) {
        return fail(c, PROFD_EPROTO, "a string holds a NUL character (\\u0000)");
    }
    cJSON *root = cJSON_ParseWithLength(buf, len);
    if (root == NULL) {
        return fail(c, PROFD_EPROTO, "not valid JSON");
    }
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return fail(c, PROFD_EPROTO, "expected a JSON object");
    }
    *out = root;
    return 0;
}

int pp_record_decode(const pp_desc_t *d, const void *buf, size_t len, void *out, char *err,
                     size_t errlen)
{
    dctx_t c = {err, errlen, ""};
    cJSON *root = NULL;
    pp_record_init(d, out);
    int rv = parse_doc(buf, len, 0, &root, &c);
    if (rv == 0) {
        rv = decode_fields(d, root, out, &c);
        cJSON_Delete(root);
        if (rv != 0) {
            pp_record_free(d, out);
        }
    }
    return rv;
}

void pp_msg_init(pp_msg_t *m, pp_type_t t)
{
    memset(m, 0, sizeof(*m));
    const pp_desc_t *d = pp_type_desc(t);
    if (d) {
        m->type = t;
        pp_record_init(d, &m->u);
    }
}

void pp_msg_free(pp_msg_t *m)
{
    const pp_desc_t *d = pp_type_desc(m->type);
    if (d) {
        pp_record_free(d, &m->u);
    }
    memset(m, 0, sizeof(*m));
}

int pp_msg_decode(const void *buf, size_t len, size_t max_msg, pp_msg_t *out, char *err,
                  size_t errlen)
{
    dctx_t c = {err, errlen, ""};
    cJSON *root = NULL;
    int64_t v;
    int rv;

    memset(out, 0, sizeof(*out));
    if ((rv = parse_doc(buf, len, max_msg ? max_msg : PP_MAX_MSG_DEFAULT, &root, &c)) != 0) {
        return rv;
    }
    const cJSON *jv = cJSON_GetObjectItemCaseSensitive(root, "v");
    const cJSON *jt = cJSON_GetObjectItemCaseSensitive(root, "type");
    if (jv == NULL || !json_i64(jv, &v)) {
        rv = fail(&c, PROFD_EPROTO, "missing or non-integer field 'v' (protocol version)");
    } else if (v != PP_VERSION) {
        rv = fail(&c, PROFD_EVERSION, "protocol version %lld not supported (this is %d)",
                  (long long)v, PP_VERSION);
    } else if (jt == NULL || !cJSON_IsString(jt)) {
        rv = fail(&c, PROFD_EPROTO, "missing or non-string field 'type'");
    } else {
        pp_type_t t = pp_type_from_name(jt->valuestring);
        if (t == PP_T_NONE) {
            rv = fail(&c, PROFD_ETYPE, "unknown message type '%.64s'", jt->valuestring);
        } else {
            pp_msg_init(out, t);
            rv = decode_fields(pp_type_desc(t), root, &out->u, &c);
            if (rv != 0) {
                pp_msg_free(out);
            }
        }
    }
    cJSON_Delete(root);
    return rv;
}

/* ---- encoding ---- */

static bool field_empty(const pp_field_t *f, const void *rec);

static bool record_empty(const pp_desc_t *d, const void *rec)
{
    for (size_t i = 0; i < d->nfields; i++) {
        if (!field_empty(&d->fields[i], rec)) {
            return false;
        }
    }
    return true;
}

static bool field_empty(const pp_field_t *f, const void *rec)
{
    const void *p = FIELD_CPTR(rec, f);
    switch (f->kind) {
    case PP_K_I64:
        return *(const int64_t *)p == 0 || *(const int64_t *)p == PP_NONE;
    case PP_K_BOOL:
        return !*(const bool *)p;
    case PP_K_F64:
        return *(const double *)p == 0.0;
    case PP_K_ENUM:
        return *(const int *)p == 0;
    case PP_K_STR:
    case PP_K_JSON:
        return *(char *const *)p == NULL;
    case PP_K_OBJ:
        return record_empty(f->sub, p);
    default:
        return FIELD_CN(rec, f) == 0;
    }
}

/* ---- encoding: records straight to text ----
 *
 * No cJSON tree: a window's manifest or a coordinator's state of 16,384
 * members was a tree several times the size of its text (a node of 64 bytes
 * and more per value), built and freed at every save. The text is the one
 * cJSON prints for the same values (cJSON_PrintUnformatted, or cJSON_Print
 * when pretty: tabs, "key":<tab>value, arrays on one line), so whatever
 * read it before reads it the same; test_codec holds the printer to that. */

typedef struct pbuf {
    char *p;
    size_t len, cap;
    bool fmt;
    int depth;
    bool oom;
    const pp_elem_hook_t *hook; /* pre-encoded elements of arrays of records */
} pbuf_t;

static void pb_put(pbuf_t *b, const char *s, size_t n)
{
    if (b->oom) {
        return;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1) {
            cap *= 2;
        }
        char *np = realloc(b->p, cap);
        if (np == NULL) {
            b->oom = true;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void pb_cstr(pbuf_t *b, const char *s)
{
    pb_put(b, s, strlen(s));
}

static void pb_tabs(pbuf_t *b, int n)
{
    static const char tabs[] = "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t";
    while (n > 0) {
        int k = n < 16 ? n : 16;
        pb_put(b, tabs, (size_t)k);
        n -= k;
    }
}

/* A JSON string, escaped as cJSON escapes it. */
static void pb_str(pbuf_t *b, const char *s)
{
    pb_put(b, "\"", 1);
    const char *run = s;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 32 && c != '"' && c != '\\') {
            continue;
        }
        pb_put(b, run, (size_t)(s - run));
        run = s + 1;
        char esc[8];
        switch (c) {
        case '"':
            pb_put(b, "\\\"", 2);
            break;
        case '\\':
            pb_put(b, "\\\\", 2);
            break;
        case '\b':
            pb_put(b, "\\b", 2);
            break;
        case '\f':
            pb_put(b, "\\f", 2);
            break;
        case '\n':
            pb_put(b, "\\n", 2);
            break;
        case '\r':
            pb_put(b, "\\r", 2);
            break;
        case '\t':
            pb_put(b, "\\t", 2);
            break;
        default:
            snprintf(esc, sizeof(esc), "\\u%04x", c);
            pb_put(b, esc, 6);
            break;
        }
    }
    pb_put(b, run, (size_t)(s - run));
    pb_put(b, "\"", 1);
}

static void pb_i64(pbuf_t *b, int64_t v)
{
    char buf[24];
    int n = snprintf(buf, sizeof(buf), "%lld", (long long)v);
    pb_put(b, buf, (size_t)n);
}

static bool same_double(double a, double b)
{
    double most = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    return fabs(a - b) <= most * DBL_EPSILON;
}

/* A double as cJSON prints it: "%d" when it is its int value, else the
 * shortest of "%1.15g" and "%1.17g" that reads back equal; null for NaN and
 * infinities. `vint`: cJSON's valueint (the value clamped to int). */
static void pb_num(pbuf_t *b, double d, int vint)
{
    char buf[32];
    int n;
    if (isnan(d) || isinf(d)) {
        n = snprintf(buf, sizeof(buf), "null");
    } else if (d == (double)vint) {
        n = snprintf(buf, sizeof(buf), "%d", vint);
    } else {
        double t = 0;
        n = snprintf(buf, sizeof(buf), "%1.15g", d);
        if (sscanf(buf, "%lg", &t) != 1 || !same_double(t, d)) {
            n = snprintf(buf, sizeof(buf), "%1.17g", d);
        }
    }
    pb_put(b, buf, (size_t)n);
}

static int clamp_int(double d)
{
    if (d >= 2147483647.0) {
        return 2147483647;
    }
    if (d <= -2147483648.0) {
        return -2147483647 - 1;
    }
    return isnan(d) ? 0 : (int)d;
}

/* Objects and arrays: where cJSON puts newlines and tabs. */
static void pb_open(pbuf_t *b, char c)
{
    pb_put(b, &c, 1);
    b->depth++;
    if (c == '{' && b->fmt) {
        pb_put(b, "\n", 1);
    }
}

static void pb_key(pbuf_t *b, const char *key, bool *first)
{
    if (!*first) {
        pb_put(b, b->fmt ? ",\n" : ",", b->fmt ? 2 : 1);
    }
    *first = false;
    pb_tabs(b, b->fmt ? b->depth : 0);
    pb_str(b, key);
    pb_put(b, ":\t", b->fmt ? 2 : 1);
}

static void pb_elem(pbuf_t *b, bool *first)
{
    if (!*first) {
        pb_put(b, ", ", b->fmt ? 2 : 1);
    }
    *first = false;
}

static void pb_close(pbuf_t *b, char c, bool empty)
{
    if (c == '}' && b->fmt) {
        if (!empty) {
            pb_put(b, "\n", 1);
        }
        pb_tabs(b, b->depth - 1);
    }
    pb_put(b, &c, 1);
    b->depth--;
}

/* Any parsed value (a PP_K_JSON field). */
static void pb_item(pbuf_t *b, const cJSON *j)
{
    bool first = true;
    if (cJSON_IsNull(j) || cJSON_IsInvalid(j)) {
        pb_cstr(b, "null");
    } else if (cJSON_IsFalse(j)) {
        pb_cstr(b, "false");
    } else if (cJSON_IsTrue(j)) {
        pb_cstr(b, "true");
    } else if (cJSON_IsNumber(j)) {
        pb_num(b, j->valuedouble, j->valueint);
    } else if (cJSON_IsString(j)) {
        pb_str(b, j->valuestring ? j->valuestring : "");
    } else if (cJSON_IsRaw(j)) {
        pb_cstr(b, j->valuestring ? j->valuestring : "");
    } else if (cJSON_IsArray(j)) {
        pb_open(b, '[');
        for (const cJSON *e = j->child; e; e = e->next) {
            pb_elem(b, &first);
            pb_item(b, e);
        }
        pb_close(b, ']', first);
    } else {
        pb_open(b, '{');
        for (const cJSON *e = j->child; e; e = e->next) {
            pb_key(b, e->string ? e->string : "", &first);
            pb_item(b, e);
        }
        pb_close(b, '}', first);
    }
}

static void pb_fields(pbuf_t *b, const pp_desc_t *d, const void *rec, bool *first);

static void pb_record(pbuf_t *b, const pp_desc_t *d, const void *rec)
{
    bool first = true;
    pb_open(b, '{');
    pb_fields(b, d, rec, &first);
    pb_close(b, '}', first);
}

/* Element i of the array of records f of rec, when the hook has its text. */
static bool pb_hooked(pbuf_t *b, const pp_field_t *f, const void *rec, size_t i)
{
    const char *text = NULL;
    size_t len = 0;
    int rv = b->hook ? b->hook->elem(b->hook->arg, f, rec, i, &text, &len) : 0;
    if (rv < 0) {
        b->oom = true;
    } else if (rv > 0) {
        pb_put(b, text, len);
    }
    return rv != 0;
}

static void pb_field(pbuf_t *b, const pp_field_t *f, const void *rec)
{
    const void *p = FIELD_CPTR(rec, f);
    bool first = true;

    switch (f->kind) {
    case PP_K_I64: {
        int64_t v = *(const int64_t *)p;
        if (v == PP_NONE) {
            pb_cstr(b, "null");
        } else {
            pb_i64(b, v);
        }
        return;
    }
    case PP_K_BOOL:
        pb_cstr(b, *(const bool *)p ? "true" : "false");
        return;
    case PP_K_F64: {
        double d = *(const double *)p;
        pb_num(b, d, clamp_int(d));
        return;
    }
    case PP_K_STR: {
        const char *s = *(char *const *)p;
        if (s) {
            pb_str(b, s);
        } else {
            pb_cstr(b, "null");
        }
        return;
    }
    case PP_K_ENUM: {
        const char *s = pp_enum_name(f->en, *(const int *)p);
        if (s) {
            pb_str(b, s);
        } else {
            pb_cstr(b, "null");
        }
        return;
    }
    case PP_K_JSON: {
        const char *s = *(char *const *)p;
        cJSON *j = s ? cJSON_Parse(s) : NULL;
        if (s == NULL) {
            pb_cstr(b, "null");
        } else if (j == NULL) {
            pb_str(b, s); /* not JSON: keep it, as text */
        } else {
            pb_item(b, j);
        }
        cJSON_Delete(j);
        return;
    }
    case PP_K_OBJ:
        pb_record(b, f->sub, p);
        return;
    default:
        break;
    }
    size_t n = FIELD_CN(rec, f);
    pb_open(b, '[');
    for (size_t i = 0; i < n; i++) {
        pb_elem(b, &first);
        if (f->kind == PP_K_I64S) {
            pb_i64(b, (*(int64_t *const *)p)[i]);
        } else if (f->kind == PP_K_STRS) {
            const char *s = (*(char **const *)p)[i];
            if (s) {
                pb_str(b, s);
            } else {
                pb_cstr(b, "null");
            }
        } else if (!pb_hooked(b, f, rec, i)) {
            pb_record(b, f->sub, *(const char *const *)p + i * f->sub->size);
        }
    }
    pb_close(b, ']', first);
}

static void pb_fields(pbuf_t *b, const pp_desc_t *d, const void *rec, bool *first)
{
    for (size_t i = 0; i < d->nfields && !b->oom; i++) {
        const pp_field_t *f = &d->fields[i];
        if ((f->flags & PP_OMIT) && field_empty(f, rec)) {
            continue;
        }
        if (f->kind == PP_K_STR && !(f->flags & PP_NUL) &&
            *(char *const *)FIELD_CPTR(rec, f) == NULL) {
            continue; /* absent optional string */
        }
        if (f->kind == PP_K_ENUM && !(f->flags & (PP_NUL | PP_REQ)) && field_empty(f, rec)) {
            continue; /* absent optional state or mode */
        }
        pb_key(b, f->name, first);
        pb_field(b, f, rec);
    }
}

static int pb_done(pbuf_t *b, char **out, size_t *len)
{
    if (b->oom || b->p == NULL) {
        free(b->p);
        return PROFD_ENOMEM;
    }
    *out = b->p;
    if (len) {
        *len = b->len;
    }
    return 0;
}

int pp_record_encode(const pp_desc_t *d, const void *rec, bool pretty, char **out, size_t *len)
{
    if (d == NULL || rec == NULL || out == NULL) {
        return PROFD_EINVAL;
    }
    pbuf_t b = {.fmt = pretty};
    pb_record(&b, d, rec);
    return pb_done(&b, out, len);
}

int pp_record_encode_hooked(const pp_desc_t *d, const void *rec, const pp_elem_hook_t *hook,
                            char **out, size_t *len)
{
    if (d == NULL || rec == NULL || out == NULL || hook == NULL || hook->elem == NULL) {
        return PROFD_EINVAL;
    }
    pbuf_t b = {.hook = hook};
    pb_record(&b, d, rec);
    return pb_done(&b, out, len);
}

int pp_msg_encode(const pp_msg_t *m, char **out, size_t *len)
{
    const msg_info_t *mi = m ? msg_find(m->type) : NULL;
    if (mi == NULL || out == NULL) {
        return PROFD_EINVAL;
    }
    pbuf_t b = {.fmt = false};
    bool first = true;
    pb_open(&b, '{');
    pb_key(&b, "v", &first);
    pb_i64(&b, PP_VERSION);
    pb_key(&b, "type", &first);
    pb_str(&b, mi->name);
    pb_fields(&b, mi->desc, &m->u, &first);
    pb_close(&b, '}', first);
    return pb_done(&b, out, len);
}

size_t pp_frame_split(const void *buf, size_t len, const void **payload, size_t *plen)
{
    const char *nul = memchr(buf, '\0', len);
    if (nul == NULL) {
        *payload = NULL;
        *plen = 0;
        return len;
    }
    size_t jl = (size_t)(nul - (const char *)buf);
    *payload = nul + 1;
    *plen = len - jl - 1;
    return jl;
}

int pp_frame_encode(const pp_msg_t *m, const void *payload, size_t plen, char **out, size_t *len)
{
    char *json;
    size_t jl;
    int rv = pp_msg_encode(m, &json, &jl);
    if (rv != 0) {
        return rv;
    }
    char *buf = realloc(json, jl + 1 + plen);
    if (buf == NULL) {
        free(json);
        return PROFD_ENOMEM;
    }
    buf[jl] = '\0';
    if (plen) {
        memcpy(buf + jl + 1, payload, plen);
    }
    *out = buf;
    *len = jl + 1 + plen;
    return 0;
}

int pp_error_encode(int code, const char *message, char **out, size_t *len)
{
    pp_msg_t m;
    pp_msg_init(&m, PP_T_error);
    m.u.error.code = code;
    m.u.error.name = (char *)profd_errname(code);
    m.u.error.message = (char *)(message ? message : profd_strerror(code));
    int rv = pp_msg_encode(&m, out, len);
    /* the strings above are borrowed: do not pp_msg_free */
    return rv;
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

/* ---- JSON settings helpers ---- */

static cJSON *settings_member(const char *json, const char *key, cJSON **root)
{
    *root = json ? cJSON_Parse(json) : NULL;
    if (*root == NULL || !cJSON_IsObject(*root)) {
        return NULL;
    }
    return cJSON_GetObjectItemCaseSensitive(*root, key);
}

int64_t pp_json_get_i64(const char *json, const char *key, int64_t def)
{
    cJSON *root;
    const cJSON *j = settings_member(json, key, &root);
    int64_t v = def;
    if (j && !json_i64(j, &v)) {
        v = def;
    }
    cJSON_Delete(root);
    return v;
}

bool pp_json_get_bool(const char *json, const char *key, bool def)
{
    cJSON *root;
    const cJSON *j = settings_member(json, key, &root);
    bool v = cJSON_IsBool(j) ? cJSON_IsTrue(j) : def;
    cJSON_Delete(root);
    return v;
}

bool pp_json_get_str(const char *json, const char *key, char *buf, size_t len, const char *def)
{
    cJSON *root;
    const cJSON *j = settings_member(json, key, &root);
    bool found = cJSON_IsString(j);
    snprintf(buf, len, "%s", found ? j->valuestring : (def ? def : ""));
    cJSON_Delete(root);
    return found;
}

int pp_json_get_strs(const char *json, const char *key, char out[][PP_MAX_NAME], int max)
{
    cJSON *root;
    const cJSON *j = settings_member(json, key, &root);
    int n = -1;
    if (cJSON_IsArray(j)) {
        const cJSON *e;
        n = 0;
        cJSON_ArrayForEach(e, j)
        {
            if (!cJSON_IsString(e)) {
                n = -1;
                break;
            }
            if (n < max) {
                snprintf(out[n], PP_MAX_NAME, "%s", e->valuestring);
                n++;
            }
        }
    }
    cJSON_Delete(root);
    return n;
}
