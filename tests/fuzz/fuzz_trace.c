// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Fuzz target for the trace merger's scanner (daemon/base/tracemerge.c): a
 * worker's trace file is untrusted input that `profctl merge` streams
 * through. Any bytes as one input trace: no crash, no read out of bounds,
 * bounded memory; and when the input is a well-formed Chrome trace of the
 * array form, every event of it comes out (checked on inputs the merger
 * reads as such: the count it returns equals the events it wrote).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tracemerge.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct sink {
    size_t bytes;
    int64_t objects; /* event objects started at the top level */
    int depth;
    int in_str, esc;
} sink_t;

/* Counts the top-level objects written (events are written one after the
 * other, separated by ",\n"). */
static int sink_write(void *arg, const char *buf, size_t len)
{
    sink_t *s = arg;
    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        if (s->in_str) {
            if (s->esc) {
                s->esc = 0;
            } else if (c == '\\') {
                s->esc = 1;
            } else if (c == '"') {
                s->in_str = 0;
            }
        } else if (c == '"') {
            s->in_str = 1;
        } else if (c == '{' || c == '[') {
            s->objects += c == '{' && s->depth == 0;
            s->depth++;
        } else if (c == '}' || c == ']') {
            s->depth--;
        }
    }
    s->bytes += len;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sink_t s;
    char why[256];
    memset(&s, 0, sizeof(s));
    int64_t n = pd_trace_merge_mem((const char *)data, size, sink_write, &s, why, sizeof(why));
    if (n >= 0 && (s.objects != n || s.depth != 0 || s.in_str)) {
        abort(); /* what it says it wrote is what it wrote, whole objects only */
    }
    return 0;
}
