// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The exec backend's commands, as the background thread sees them (not
 * installed).
 */
#ifndef PROFD_BACKEND_EXEC_H
#define PROFD_BACKEND_EXEC_H

#include <stddef.h>

/*
 * The exec commands of a capture folder (`dir`: absolute, or relative to
 * the spool as in a result): 1 while one still runs or waits its turn;
 * else 0, or the error of the first that failed with its reason in
 * `reason`, and the folder's commands are forgotten.
 */
int cl_exec_outcome(const char *dir, char *reason, size_t reason_len);

#endif
