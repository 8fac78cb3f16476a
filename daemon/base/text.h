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

#endif
