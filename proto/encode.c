// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The one JSON writer of messages: a C record of messages.def straight to
 * the text cJSON would print for it (compact or pretty), and the frames
 * (a message and its payload) and error replies built on it.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "profd/proto.h"
#include "fields.h"
#include "pu_buf.h"

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
    pu_sbuf_t sb; /* the text (common/pu_buf.h) */
    bool fmt;
    int depth;
    const pp_elem_hook_t *hook; /* pre-encoded elements of arrays of records */
    const pp_sink_t *sink;      /* the text handed on in pieces (pp_record_encode_to) */
    int sink_rv;                /* the sink's error: the encoding stops */
} pbuf_t;

/* The text so far to the sink, once it holds a piece's worth (`all`: what
 * is left, at the end); an error stops the encoding (as no memory does). */
static void pb_flush(pbuf_t *b, bool all)
{
    if (b->sink == NULL || b->sb.oom || b->sb.len == 0 || (!all && b->sb.len < PP_SINK_PIECE)) {
        return;
    }
    int rv = b->sink->put(b->sink->arg, b->sb.p, b->sb.len);
    pu_sbuf_truncate(&b->sb, 0);
    if (rv != 0) {
        b->sink_rv = rv;
        b->sb.oom = true;
    }
}

static void pb_put(pbuf_t *b, const char *s, size_t n)
{
    pu_sbuf_put(&b->sb, s, n);
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
        /* the short escapes, each character of from[] as \ and its letter in to[] */
        static const char from[] = "\"\\\b\f\n\r\t", to[] = "\"\\bfnrt";
        const char *hit = memchr(from, c, sizeof(from) - 1);
        char esc[8];
        if (hit) {
            esc[0] = '\\';
            esc[1] = to[hit - from];
            pb_put(b, esc, 2);
        } else {
            snprintf(esc, sizeof(esc), "\\u%04x", c);
            pb_put(b, esc, 6);
        }
    }
    pb_put(b, run, (size_t)(s - run));
    pb_put(b, "\"", 1);
}

/* s as a JSON string; NULL as null. */
static void pb_str_or_null(pbuf_t *b, const char *s)
{
    if (s) {
        pb_str(b, s);
    } else {
        pb_cstr(b, "null");
    }
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
    pb_flush(b, false); /* a record at a time: a piece is at most one past PP_SINK_PIECE */
}

/* Element i of the array of records f of rec, when the hook has its text. */
static bool pb_hooked(pbuf_t *b, const pp_field_t *f, const void *rec, size_t i)
{
    const char *text = NULL;
    size_t len = 0;
    int rv = b->hook ? b->hook->elem(b->hook->arg, f, rec, i, &text, &len) : 0;
    if (rv < 0) {
        b->sb.oom = true;
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
    case PP_K_STR:
        pb_str_or_null(b, *(char *const *)p);
        return;
    case PP_K_ENUM:
        pb_str_or_null(b, pp_enum_name(f->en, *(const int *)p));
        return;
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
            pb_str_or_null(b, (*(char **const *)p)[i]);
        } else if (!pb_hooked(b, f, rec, i)) {
            pb_record(b, f->sub, *(const char *const *)p + i * f->sub->size);
        }
    }
    pb_close(b, ']', first);
}

static void pb_fields(pbuf_t *b, const pp_desc_t *d, const void *rec, bool *first)
{
    for (size_t i = 0; i < d->nfields && !b->sb.oom; i++) {
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
    if (b->sb.oom || b->sb.p == NULL) {
        pu_sbuf_free(&b->sb);
        return PROFD_ENOMEM;
    }
    *out = pu_sbuf_take(&b->sb, len);
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

int pp_record_encode_to(const pp_desc_t *d, const void *rec, bool pretty, const pp_sink_t *sink)
{
    if (d == NULL || rec == NULL || sink == NULL || sink->put == NULL) {
        return PROFD_EINVAL;
    }
    pbuf_t b = {.fmt = pretty, .sink = sink};
    pb_record(&b, d, rec);
    pb_flush(&b, true);
    int rv = b.sink_rv ? b.sink_rv : b.sb.oom ? PROFD_ENOMEM : 0;
    pu_sbuf_free(&b.sb);
    return rv;
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

static int msg_encode(const pp_msg_t *m, const pp_elem_hook_t *hook, char **out, size_t *len)
{
    const char *name = m ? pp_type_name(m->type) : NULL;
    if (name == NULL || out == NULL) {
        return PROFD_EINVAL;
    }
    pbuf_t b = {.fmt = false, .hook = hook};
    bool first = true;
    pb_open(&b, '{');
    pb_key(&b, "v", &first);
    pb_i64(&b, PP_VERSION);
    pb_key(&b, "type", &first);
    pb_str(&b, name);
    pb_fields(&b, pp_type_desc(m->type), &m->u, &first);
    pb_close(&b, '}', first);
    return pb_done(&b, out, len);
}

int pp_msg_encode(const pp_msg_t *m, char **out, size_t *len)
{
    return msg_encode(m, NULL, out, len);
}

int pp_msg_encode_hooked(const pp_msg_t *m, const pp_elem_hook_t *hook, char **out, size_t *len)
{
    if (hook == NULL || hook->elem == NULL) {
        return PROFD_EINVAL;
    }
    return msg_encode(m, hook, out, len);
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
