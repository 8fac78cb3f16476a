// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* nng's errors as profd's (see pu_nng.h). */
#include <nng/nng.h>

#include "profd/errors.h"
#include "pu_nng.h"

int pu_nng_err(int rv)
{
    switch (rv) {
    case 0:
        return 0;
    case NNG_ETIMEDOUT:
        return PROFD_ETIMEDOUT;
    case NNG_ENOMEM:
        return PROFD_ENOMEM;
    case NNG_EMSGSIZE:
        return PROFD_ETOOBIG;
    case NNG_ECLOSED:
    case NNG_ECANCELED:
        return PROFD_ECLOSED;
    case NNG_EADDRINVAL:
    case NNG_ENOTSUP:
        return PROFD_EINVAL;
    default:
        return PROFD_ENODAEMON;
    }
}
