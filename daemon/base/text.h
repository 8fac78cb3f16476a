// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Text from outside the daemon (a worker's reason, a file name) made fit
 * for a log line and a manifest. Pure.
 */
#ifndef PD_TEXT_H
#define PD_TEXT_H

#include <stddef.h>

/* Printable ASCII kept, every other byte (and '\') as \xNN, cut to fit
 * `len` (at least 1). */
void pd_quote(char *out, size_t len, const char *in);

/* Valid UTF-8 kept (tab, newline and printable text, multi-byte sequences that are
 * neither overlong, surrogates nor past U+10FFFF), every other byte as
 * \xNN, cut at a character to fit `len` (at least 1): text that came from
 * a peer, fit for a reply. */
void pd_text_utf8(char *out, size_t len, const char *in);

/* A copy of s appended to the list *v of *n strings (a message's warnings).
 * 0, or -1 without memory (the list then holds what it held). */
int pd_strv_add(char ***v, size_t *n, const char *s);

/* A refusal: the message into err (when err is not NULL and errlen not 0),
 * and rv returned. */
int pd_errf(char *err, size_t errlen, int rv, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
