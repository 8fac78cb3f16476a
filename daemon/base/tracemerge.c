// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* Merging traces (see tracemerge.h): the streaming scanner and the rewrite
 * of one event. The job around it (files, gzip, the output) is in
 * gather.c's PD_JOB_MERGE. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracemerge.h"

#define RD_BUF      65536
#define MAX_PIDS    16
#define MARKER_LOOK 4096 /* events searched for a clock marker */

void pd_merge_free(pd_merge_t *m)
{
    if (m) {
        free(m->inputs);
        free(m);
    }
}

/* ---- reading ---- */

typedef struct rd {
    pd_trace_read_fn read;
    void *arg;
    char *buf;
    size_t pos, len;
    bool eof, err;
} rd_t;

static int get(rd_t *r)
{
    if (r->pos == r->len) {
        if (r->eof) {
            return -1;
        }
        long n = r->read(r->arg, r->buf, RD_BUF);
        if (n <= 0) {
            r->eof = true;
            r->err = n < 0;
            return -1;
        }
        r->pos = 0;
        r->len = (size_t)n;
    }
    return (unsigned char)r->buf[r->pos++];
}

static void unget(rd_t *r)
{
    r->pos--; /* only right after a successful get() */
}

static int skip_ws(rd_t *r)
{
    int c;
    do {
        c = get(r);
    } while (c == ' ' || c == '\n' || c == '\r' || c == '\t');
    return c;
}

/* The rest of a string whose opening quote was read; up to keylen-1 bytes
 * of its raw text into key (NULL: discard). false at the end of input. */
static bool string_rest(rd_t *r, char *key, size_t keylen)
{
    size_t k = 0;
    for (;;) {
        int c = get(r);
        if (c < 0) {
            return false;
        }
        if (c == '"') {
            break;
        }
        if (key && k + 1 < keylen) {
            key[k++] = (char)c;
        }
        if (c == '\\') {
            if ((c = get(r)) < 0) {
                return false;
            }
            if (key && k + 1 < keylen) {
                key[k++] = (char)c;
            }
        }
    }
    if (key) {
        key[k] = '\0';
    }
    return true;
}

/* Skip one value whose first byte `c` was read. Returns the byte after it
 * (a separator), or -1 at the end. */
static int skip_value(rd_t *r, int c)
{
    int depth = 0;
    for (;;) {
        if (c < 0) {
            return -1;
        }
        if (c == '"') {
            if (!string_rest(r, NULL, 0)) {
                return -1;
            }
            if (depth == 0) {
                return skip_ws(r);
            }
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (depth == 0) {
                return c; /* the container of the value ends */
            }
            if (--depth == 0) {
                return skip_ws(r);
            }
        } else if (depth == 0 && (c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t')) {
            return c == ',' ? c : skip_ws(r);
        }
        c = get(r);
    }
}

/* c appended to the event at ebuf[*n], unless it is already too long. */
static inline void keep(char *ebuf, size_t *n, bool *big, int c)
{
    if (*big) {
        return;
    }
    if (*n + 1 >= PD_TRACE_MAX_EVENT) {
        *big = true;
    } else {
        ebuf[(*n)++] = (char)c;
    }
}

/* Read one object (its '{' read) into ebuf; *len its length, or
 * (size_t)-1 when longer than PD_TRACE_MAX_EVENT (skipped). false at the
 * end of input. */
static bool object(rd_t *r, char *ebuf, size_t *len)
{
    size_t n = 0;
    int depth = 1;
    bool in_str = false, big = false;
    ebuf[n++] = '{';
    while (depth > 0) {
        int c = get(r);
        if (c < 0) {
            return false;
        }
        keep(ebuf, &n, &big, c);
        if (in_str) {
            if (c == '\\') {
                int d = get(r);
                if (d < 0) {
                    return false;
                }
                keep(ebuf, &n, &big, d);
            } else if (c == '"') {
                in_str = false;
            }
        } else if (c == '"') {
            in_str = true;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            depth--;
        }
    }
    ebuf[n] = '\0';
    *len = big ? (size_t)-1 : n;
    return true;
}

/* Position the reader at the first event: after the '[' of traceEvents (or
 * of a bare array). false when the input is not a trace. */
static bool to_events(rd_t *r)
{
    char key[64];
    int c = skip_ws(r);
    if (c == '[') {
        return true;
    }
    if (c != '{') {
        return false;
    }
    for (;;) {
        c = skip_ws(r);
        if (c == '}' || c != '"' || !string_rest(r, key, sizeof(key))) {
            return false;
        }
        if (skip_ws(r) != ':') {
            return false;
        }
        c = skip_ws(r);
        if (strcmp(key, "traceEvents") == 0) {
            return c == '[';
        }
        c = skip_value(r, c);
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
            c = skip_ws(r);
        }
        if (c != ',') {
            return false;
        }
    }
}

/* The next event of the array into ebuf: 1 an event (len (size_t)-1: too
 * long), 0 the end of the array (or of the input: a truncated trace
 * ends where it ends), 2 an element that is not an object (skipped). */
static int next_event(rd_t *r, char *ebuf, size_t *len, bool *at_first)
{
    int c = skip_ws(r);
    if (!*at_first) {
        if (c != ',') {
            return 0;
        }
        c = skip_ws(r);
    }
    *at_first = false;
    if (c == '{') {
        return object(r, ebuf, len) ? 1 : 0;
    }
    if (c < 0 || c == ']') {
        return 0;
    }
    c = skip_value(r, c);
    if (c >= 0) {
        unget(r);
    }
    return c < 0 ? 0 : 2;
}

/* ---- one event's members ---- */

typedef struct span {
    const char *p;
    size_t n;
} span_t;

typedef struct members {
    span_t pid, ts, ph, name, args;
} members_t;

static size_t ws(const char *s, size_t i, size_t n)
{
    while (i < n && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t')) {
        i++;
    }
    return i;
}

/* The end of the value starting at i (exclusive); n when malformed. */
static size_t value_end(const char *s, size_t i, size_t n)
{
    int depth = 0;
    bool in_str = false;
    for (; i < n; i++) {
        char c = s[i];
        if (in_str) {
            if (c == '\\') {
                i++;
            } else if (c == '"') {
                in_str = false;
                if (depth == 0) {
                    return i + 1;
                }
            }
        } else if (c == '"') {
            in_str = true;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (depth == 0) {
                return i;
            }
            if (--depth == 0) {
                return i + 1;
            }
        } else if (depth == 0 && (c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t')) {
            return i;
        }
    }
    return n;
}

/* Walk the members of the object ev[0..n): for each, key span and value
 * span. Returns false when malformed. */
typedef bool (*member_fn)(void *arg, span_t key, span_t val);

static bool each_member(const char *ev, size_t n, member_fn fn, void *arg)
{
    size_t i = ws(ev, 1, n);
    if (n < 2 || ev[0] != '{') {
        return false;
    }
    while (i < n && ev[i] != '}') {
        if (ev[i] != '"') {
            return false;
        }
        size_t k0 = i + 1, k1 = value_end(ev, i, n);
        if (k1 >= n || k1 < k0 + 1) {
            return false;
        }
        i = ws(ev, k1, n);
        if (i >= n || ev[i] != ':') {
            return false;
        }
        i = ws(ev, i + 1, n);
        size_t v1 = value_end(ev, i, n);
        if (v1 >= n || v1 == i) {
            return false;
        }
        span_t key = {ev + k0, k1 - 1 - k0}, val = {ev + i, v1 - i};
        if (!fn(arg, key, val)) {
            return false;
        }
        i = ws(ev, v1, n);
        if (i < n && ev[i] == ',') {
            i = ws(ev, i + 1, n);
        }
    }
    return i < n;
}

static bool is(span_t s, const char *lit)
{
    size_t n = strlen(lit);
    return s.n == n && memcmp(s.p, lit, n) == 0;
}

static bool collect(void *arg, span_t key, span_t val)
{
    members_t *m = arg;
    if (is(key, "pid")) {
        m->pid = val;
    } else if (is(key, "ts")) {
        m->ts = val;
    } else if (is(key, "ph")) {
        m->ph = val;
    } else if (is(key, "name")) {
        m->name = val;
    } else if (is(key, "args")) {
        m->args = val;
    }
    return true;
}

/* An integer prefix of a number's text; false when it is not one. */
static bool int_of(span_t s, int64_t *out, size_t *used)
{
    size_t i = 0;
    bool neg = false;
    int64_t v = 0;
    if (i < s.n && (s.p[i] == '-' || s.p[i] == '+')) {
        neg = s.p[i] == '-';
        i++;
    }
    size_t d0 = i;
    for (; i < s.n && s.p[i] >= '0' && s.p[i] <= '9'; i++) {
        if (v > (INT64_MAX - 9) / 10) {
            return false;
        }
        v = v * 10 + (s.p[i] - '0');
    }
    if (i == d0) {
        return false;
    }
    *out = neg ? -v : v;
    *used = i;
    return true;
}

/* "profd_mono_us": N in an args object; false when absent. */
static bool marker_of(span_t args, int64_t *mono)
{
    static const char key[] = "\"profd_mono_us\"";
    size_t kl = sizeof(key) - 1;
    for (size_t i = 0; args.n >= kl && i + kl <= args.n; i++) {
        if (memcmp(args.p + i, key, kl) == 0) {
            size_t j = ws(args.p, i + kl, args.n);
            if (j >= args.n || args.p[j] != ':') {
                return false;
            }
            j = ws(args.p, j + 1, args.n);
            span_t v = {args.p + j, args.n - j};
            size_t used;
            return int_of(v, mono, &used);
        }
    }
    return false;
}

/* ---- the rewrite ---- */

typedef struct out {
    pd_trace_write_fn wr;
    void *arg;
    int err;
} out_t;

static void put(out_t *o, const char *s, size_t n)
{
    if (o->err == 0 && n) {
        o->err = o->wr(o->arg, s, n);
    }
}

static void puts_(out_t *o, const char *s)
{
    put(o, s, strlen(s));
}

typedef struct file_ctx {
    const pd_merge_input_t *in;
    size_t index;
    int64_t shift;
    char pids[MAX_PIDS][48];
    size_t pidlen[MAX_PIDS];
    int npids;
    int main_pid; /* index of the process that is the rank's own, -1 unknown */
} file_ctx_t;

static int pid_index(file_ctx_t *f, span_t pid)
{
    size_t n = pid.n < sizeof(f->pids[0]) ? pid.n : sizeof(f->pids[0]) - 1;
    for (int i = 0; i < f->npids; i++) {
        if (f->pidlen[i] == n && memcmp(f->pids[i], pid.p, n) == 0) {
            return i;
        }
    }
    if (f->npids == MAX_PIDS) {
        return MAX_PIDS - 1;
    }
    memcpy(f->pids[f->npids], pid.p, n);
    f->pids[f->npids][n] = '\0';
    f->pidlen[f->npids] = n;
    if (f->main_pid < 0 && f->in) {
        char own[32];
        int k = snprintf(own, sizeof(own), "%" PRId64, f->in->pid);
        if ((size_t)k == n && memcmp(own, pid.p, n) == 0) {
            f->main_pid = f->npids;
        }
    }
    return f->npids++;
}

static int64_t new_pid(const file_ctx_t *f, int k)
{
    return ((int64_t)f->index + 1) * MAX_PIDS + k;
}

typedef struct emit {
    out_t *o;
    file_ctx_t *f;
    const members_t *m;
    bool first;
} emit_t;

static bool emit_member(void *arg, span_t key, span_t val)
{
    emit_t *e = arg;
    char buf[64];
    put(e->o, e->first ? "" : ",", e->first ? 0 : 1);
    e->first = false;
    put(e->o, "\"", 1);
    put(e->o, key.p, key.n);
    put(e->o, "\":", 2);
    if (is(key, "pid")) {
        snprintf(buf, sizeof(buf), "%" PRId64, new_pid(e->f, pid_index(e->f, val)));
        puts_(e->o, buf);
    } else if (is(key, "ts")) {
        int64_t v;
        size_t used;
        bool expo = memchr(val.p, 'e', val.n) || memchr(val.p, 'E', val.n);
        if (!expo && int_of(val, &v, &used) && v > INT64_MIN / 2 && v < INT64_MAX / 2) {
            snprintf(buf, sizeof(buf), "%" PRId64, v + e->f->shift);
            puts_(e->o, buf);
            put(e->o, val.p + used, val.n - used); /* the fraction, as it was */
        } else if (expo) {
            char num[64];
            size_t n = val.n < sizeof(num) - 1 ? val.n : sizeof(num) - 1;
            memcpy(num, val.p, n);
            num[n] = '\0';
            snprintf(buf, sizeof(buf), "%.3f", strtod(num, NULL) + (double)e->f->shift);
            puts_(e->o, buf);
        } else {
            put(e->o, val.p, val.n);
        }
    } else {
        put(e->o, val.p, val.n);
    }
    return true;
}

/* Metadata profd replaces. */
static bool dropped_meta(const members_t *m)
{
    return is(m->ph, "\"M\"") &&
           (is(m->name, "\"process_name\"") || is(m->name, "\"process_labels\"") ||
            is(m->name, "\"process_sort_index\""));
}

/* 1 written, 0 dropped, -1 malformed. */
static int rewrite(out_t *o, file_ctx_t *f, const char *ev, size_t n, bool *first)
{
    members_t m;
    memset(&m, 0, sizeof(m));
    if (!each_member(ev, n, collect, &m)) {
        return -1;
    }
    if (dropped_meta(&m)) {
        if (m.pid.p) {
            pid_index(f, m.pid); /* the process still gets profd's name */
        }
        return 0;
    }
    put(o, *first ? "" : ",\n", *first ? 0 : 2);
    *first = false;
    emit_t e = {o, f, &m, true};
    put(o, "{", 1);
    each_member(ev, n, emit_member, &e);
    put(o, "}", 1);
    return 1;
}

/* The names profd gives the file's processes. */
static int64_t names(out_t *o, file_ctx_t *f, bool *first)
{
    const pd_merge_input_t *in = f->in;
    char label[256], buf[1024];
    int64_t n = 0;
    if (f->main_pid < 0 && f->npids > 0) {
        f->main_pid = 0;
    }
    if (in == NULL) {
        return 0;
    }
    int k = snprintf(label, sizeof(label), "rank %" PRId64 " %s%s%s %s", in->rank, in->role,
                     in->phase[0] ? "." : "", in->phase, in->host);
    (void)k;
    for (int i = 0; i < f->npids; i++) {
        char extra[80] = "";
        if (i != f->main_pid) {
            /* the raw id, without its quotes and with nothing to escape */
            size_t j = 0;
            for (size_t q = 0; q < f->pidlen[i] && j + 1 < sizeof(extra) - 3; q++) {
                char ch = f->pids[i][q];
                if (ch != '"' && ch != '\\' && (unsigned char)ch >= 0x20) {
                    extra[j++] = ch;
                }
            }
            extra[j] = '\0';
        }
        int64_t pid = new_pid(f, i);
        snprintf(buf, sizeof(buf),
                 "%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%" PRId64
                 ",\"tid\":0,\"args\":{\"name\":\"%s%s%s\"}},\n"
                 "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%" PRId64
                 ",\"tid\":0,\"args\":{\"sort_index\":%" PRId64 "}},\n"
                 "{\"name\":\"process_labels\",\"ph\":\"M\",\"pid\":%" PRId64
                 ",\"tid\":0,\"args\":{\"labels\":\"pid %" PRId64 "\"}}",
                 *first ? "" : ",\n", pid, label, extra[0] ? ": " : "", extra, pid, pid, pid,
                 in->pid);
        *first = false;
        puts_(o, buf);
        n += 3;
    }
    return n;
}

/* The reader's buffers, and the reader moved to the first event of the
 * traceEvents array. The event buffer (free it and r->buf), or NULL with
 * `why` said and nothing held. */
static char *reader_open(rd_t *r, char *why, size_t whylen)
{
    char *ebuf = malloc(PD_TRACE_MAX_EVENT + 1);
    r->buf = malloc(RD_BUF);
    if (ebuf == NULL || r->buf == NULL) {
        snprintf(why, whylen, "out of memory");
    } else if (!to_events(r)) {
        snprintf(why, whylen, "not a Chrome trace (no traceEvents array)");
    } else {
        return ebuf;
    }
    free(ebuf);
    free(r->buf);
    r->buf = NULL;
    return NULL;
}

int64_t pd_trace_merge_one(pd_trace_read_fn rdfn, void *rarg, int (*rewind)(void *rarg),
                           pd_trace_write_fn wr, void *warg, const pd_merge_input_t *in,
                           size_t index, bool *first, bool *aligned, char *why, size_t whylen)
{
    rd_t r = {rdfn, rarg, NULL, 0, 0, false, false};
    char *ebuf;
    file_ctx_t f;
    out_t o = {wr, warg, 0};
    int64_t count = 0;
    size_t len;
    bool at_first = true;
    int k;
    memset(&f, 0, sizeof(f));
    f.in = in;
    f.index = index;
    f.main_pid = -1;
    *aligned = false;
    /* 1. the clock marker, among the first events */
    if ((ebuf = reader_open(&r, why, whylen)) == NULL) {
        return -1;
    }
    for (int i = 0; i < MARKER_LOOK && (k = next_event(&r, ebuf, &len, &at_first)) != 0; i++) {
        members_t m;
        int64_t mono, ts;
        size_t used;
        memset(&m, 0, sizeof(m));
        if (k == 1 && len != (size_t)-1 && each_member(ebuf, len, collect, &m) && m.args.p &&
            m.ts.p && marker_of(m.args, &mono) && int_of(m.ts, &ts, &used)) {
            f.shift = mono - ts;
            *aligned = true;
            break;
        }
    }
    f.shift += in ? in->offset_us : 0;
    /* 2. the events */
    if (rewind(rarg) != 0) {
        snprintf(why, whylen, "cannot read it again");
        free(ebuf);
        free(r.buf);
        return -1;
    }
    r.pos = r.len = 0;
    r.eof = r.err = false;
    at_first = true;
    to_events(&r);
    while ((k = next_event(&r, ebuf, &len, &at_first)) != 0 && o.err == 0) {
        if (k == 1 && len != (size_t)-1 && rewrite(&o, &f, ebuf, len, first) == 1) {
            count++;
        }
    }
    count += names(&o, &f, first);
    free(ebuf);
    free(r.buf);
    if (r.err) {
        snprintf(why, whylen, "read error");
        return -1;
    }
    if (o.err) {
        snprintf(why, whylen, "write error");
        return -2;
    }
    return count;
}

/* ---- complete events, for the trace diff ---- */

typedef struct xmembers {
    span_t name, cat, pid, tid, ph, ts, dur;
} xmembers_t;

static bool collect_x(void *arg, span_t key, span_t val)
{
    xmembers_t *m = arg;
    span_t *to = is(key, "name")  ? &m->name
                 : is(key, "cat") ? &m->cat
                 : is(key, "pid") ? &m->pid
                 : is(key, "tid") ? &m->tid
                 : is(key, "ph")  ? &m->ph
                 : is(key, "ts")  ? &m->ts
                 : is(key, "dur") ? &m->dur
                                  : NULL;
    if (to) {
        *to = val;
    }
    return true;
}

/* A JSON number's value (strtod on a bounded copy); false when not one. */
static bool num_of(span_t s, double *out)
{
    char buf[64], *end;
    if (s.p == NULL || s.n == 0 || s.n >= sizeof(buf)) {
        return false;
    }
    memcpy(buf, s.p, s.n);
    buf[s.n] = '\0';
    *out = strtod(buf, &end);
    return end == buf + s.n;
}

static void unquote(span_t s, const char **p, size_t *n)
{
    if (s.p && s.n >= 2 && s.p[0] == '"' && s.p[s.n - 1] == '"') {
        *p = s.p + 1;
        *n = s.n - 2;
    } else {
        *p = s.p;
        *n = s.p ? s.n : 0;
    }
}

int64_t pd_trace_each_x(pd_trace_read_fn rdfn, void *rarg, pd_trace_x_fn fn, void *arg, char *why,
                        size_t whylen)
{
    rd_t r = {rdfn, rarg, NULL, 0, 0, false, false};
    char *ebuf;
    int64_t count = 0;
    size_t len;
    bool at_first = true;
    int k;
    if ((ebuf = reader_open(&r, why, whylen)) == NULL) {
        return -1;
    }
    while ((k = next_event(&r, ebuf, &len, &at_first)) != 0) {
        xmembers_t m;
        pd_trace_x_t x;
        memset(&m, 0, sizeof(m));
        if (k != 1 || len == (size_t)-1 || !each_member(ebuf, len, collect_x, &m) ||
            !is(m.ph, "\"X\"") || !num_of(m.ts, &x.ts) || !num_of(m.dur, &x.dur) ||
            m.name.p == NULL) {
            continue;
        }
        unquote(m.name, &x.name, &x.name_n);
        unquote(m.cat, &x.cat, &x.cat_n);
        unquote(m.pid, &x.pid, &x.pid_n);
        unquote(m.tid, &x.tid, &x.tid_n);
        fn(arg, &x);
        count++;
    }
    free(ebuf);
    free(r.buf);
    if (r.err) {
        snprintf(why, whylen, "read error");
        return -1;
    }
    return count;
}

/* ---- from memory ---- */

long pd_trace_mem_read(void *arg, char *buf, size_t len)
{
    pd_trace_mem_t *m = arg;
    size_t n = m->len - m->pos < len ? m->len - m->pos : len;
    memcpy(buf, m->p + m->pos, n);
    m->pos += n;
    return (long)n;
}

int pd_trace_mem_rewind(void *arg)
{
    ((pd_trace_mem_t *)arg)->pos = 0;
    return 0;
}

int64_t pd_trace_merge_mem(const char *buf, size_t len, pd_trace_write_fn wr, void *warg, char *why,
                           size_t whylen)
{
    pd_trace_mem_t m = {buf, len, 0};
    pd_merge_input_t in;
    bool first = true, aligned;
    memset(&in, 0, sizeof(in));
    snprintf(in.role, sizeof(in.role), "actor");
    snprintf(in.host, sizeof(in.host), "node1");
    in.pid = 42;
    return pd_trace_merge_one(pd_trace_mem_read, &m, pd_trace_mem_rewind, wr, warg, &in, 0, &first,
                              &aligned, why, whylen);
}
