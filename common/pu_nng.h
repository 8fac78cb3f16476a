// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* One mapping of nng's errors to profd's (profd/errors.h), for the client
 * library, the daemon's requests to other daemons and profctl. */
#ifndef PU_NNG_H
#define PU_NNG_H

/* 0 for 0; PROFD_ETIMEDOUT, PROFD_ENOMEM, PROFD_ETOOBIG (NNG_EMSGSIZE),
 * PROFD_ECLOSED (closed or cancelled), PROFD_EINVAL (a bad address, an
 * unsupported transport); any other failure: PROFD_ENODAEMON. */
int pu_nng_err(int rv);

#endif
