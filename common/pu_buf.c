// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The shared containers (see pu_buf.h). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pu_buf.h"

int pu_grow(void **items, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) {
        return 0;
    }
    size_t n = *cap < 8 ? 8 : *cap;
    while (n < need) {
        if (n > SIZE_MAX / 2) {
            return -1;
        }
        n *= 2;
    }
    if (elem == 0 || n > SIZE_MAX / elem) {
        return -1;
    }
    void *p = realloc(*items, n * elem);
    if (p == NULL) {
        return -1;
    }
    *items = p;
    *cap = n;
    return 0;
}

void pu_strv_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i]);
    }
    free(v);
}

char *pu_sbuf_reserve(pu_sbuf_t *b, size_t n)
{
    if (b->oom) {
        return NULL;
    }
    if (n > SIZE_MAX - b->len - 1) {
        b->oom = true;
        return NULL;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1) {
            if (cap > SIZE_MAX / 2) {
                b->oom = true;
                return NULL;
            }
            cap *= 2;
        }
        char *p = realloc(b->p, cap);
        if (p == NULL) {
            b->oom = true;
            return NULL;
        }
        b->p = p;
        b->cap = cap;
    }
    return b->p + b->len;
}

void pu_sbuf_commit(pu_sbuf_t *b, size_t n)
{
    if (!b->oom && b->p) {
        b->len += n;
        b->p[b->len] = '\0';
    }
}

void pu_sbuf_put(pu_sbuf_t *b, const char *s, size_t n)
{
    char *at = pu_sbuf_reserve(b, n);
    if (at) {
        memcpy(at, s, n);
        pu_sbuf_commit(b, n);
    }
}

void pu_sbuf_str(pu_sbuf_t *b, const char *s)
{
    pu_sbuf_put(b, s, strlen(s));
}

void pu_sbuf_ch(pu_sbuf_t *b, char c)
{
    pu_sbuf_put(b, &c, 1);
}

void pu_sbuf_fmt(pu_sbuf_t *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    if ((size_t)n < sizeof(tmp)) {
        pu_sbuf_put(b, tmp, (size_t)n);
        return;
    }
    char *at = pu_sbuf_reserve(b, (size_t)n);
    if (at) {
        va_start(ap, fmt);
        vsnprintf(at, (size_t)n + 1, fmt, ap);
        va_end(ap);
        pu_sbuf_commit(b, (size_t)n);
    }
}

void pu_sbuf_truncate(pu_sbuf_t *b, size_t len)
{
    if (b->p && len < b->len) {
        b->len = len;
        b->p[len] = '\0';
    }
}

char *pu_sbuf_take(pu_sbuf_t *b, size_t *len)
{
    char *p = NULL;
    if (!b->oom && b->p == NULL) {
        p = calloc(1, 1);
    } else if (!b->oom) {
        p = b->p;
        b->p = NULL;
        /* the doubling's slack back when it is large (a document of
         * megabytes held until written: up to as much again unused) */
        if (b->cap - b->len > PU_SBUF_SLACK && b->cap - b->len > b->len / 4) {
            char *q = realloc(p, b->len + 1);
            p = q ? q : p;
        }
    }
    if (len) {
        *len = p ? b->len : 0;
    }
    pu_sbuf_free(b);
    return p;
}

void pu_sbuf_free(pu_sbuf_t *b)
{
    free(b->p);
    b->p = NULL;
    b->len = 0;
    b->cap = 0;
    b->oom = false;
}

void pu_fmt_bytes(int64_t v, char *buf, size_t len)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = -1;
    while (v != 0 && u < 4 && v % 1024 == 0) {
        v /= 1024;
        u++;
    }
    snprintf(buf, len, "%lld%s", (long long)v, u < 0 ? "" : units[u]);
}
