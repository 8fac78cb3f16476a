// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The one JSON reader of messages: a message's or record's text into the
 * C record of messages.def, checked field by field against its descriptor
 * (tables.c), and the small readers of JSON settings. With encode.c, the
 * only code that reads or writes message JSON; no cJSON type leaves them.
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
#include "fields.h"

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

/* Where the decoder is, for an error's "field 'a.b[2]'": the text from plen
 * on replaced by sep then name, cut at the buffer's end as snprintf would.
 * It is set for every field and element decoded, most of them never part
 * of an error: copied, not formatted. */
static void path_put(dctx_t *c, size_t plen, const char *sep, const char *name)
{
    size_t cap = sizeof(c->path) - 1, n = plen;
    for (const char *s = sep; *s != '\0' && n < cap; s++) {
        c->path[n++] = *s;
    }
    for (const char *s = name; *s != '\0' && n < cap; s++) {
        c->path[n++] = *s;
    }
    c->path[n] = '\0';
}

/* "[i]" after the text up to plen. */
static void path_index(dctx_t *c, size_t plen, int i)
{
    char num[16];
    size_t k = sizeof(num);
    unsigned u = (unsigned)i;
    num[--k] = '\0';
    num[--k] = ']';
    do {
        num[--k] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    num[--k] = '[';
    path_put(c, plen, "", num + k);
}

static const char *json_kind(const cJSON *j)
{
    static const struct {
        cJSON_bool (*is)(const cJSON *);
        const char *name;
    } kinds[] = {{cJSON_IsNull, "null"},     {cJSON_IsBool, "boolean"}, {cJSON_IsNumber, "number"},
                 {cJSON_IsString, "string"}, {cJSON_IsArray, "array"},  {cJSON_IsObject, "object"}};
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        if (kinds[i].is(j)) {
            return kinds[i].name;
        }
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
        path_index(c, plen, i);
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
        path_put(c, plen, plen ? "." : "", f->name);
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

int pp_reply_decode(const void *buf, size_t len, size_t max_msg, pp_msg_t *out, char *err,
                    size_t errlen)
{
    int rv = pp_msg_decode(buf, len, max_msg, out, err, errlen);
    if (rv != 0 || out->type != PP_T_error) {
        return rv;
    }
    rv = (int)out->u.error.code;
    if (err && errlen) {
        snprintf(err, errlen, "%s", out->u.error.message ? out->u.error.message : "error");
    }
    pp_msg_free(out);
    return rv < 0 ? rv : PROFD_EPROTO;
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
