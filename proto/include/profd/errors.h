// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * profd error codes: the one list shared by the client library, the daemon,
 * profctl and the wire format. Every function that can fail returns 0 or one
 * of these negative values; profd_strerror() and profd_errname() are generated
 * from the same table. Append only: the numbers travel on the wire.
 */
#ifndef PROFD_ERRORS_H
#define PROFD_ERRORS_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && !defined(PROFD_STATIC)
#define PROFD_API __attribute__((visibility("default")))
#else
#define PROFD_API
#endif

/* X(NAME, value, message) */
#define PROFD_ERRNO_MAP(X)                                                                         \
    X(EINVAL, -1, "invalid argument")                                                              \
    X(ENOMEM, -2, "out of memory")                                                                 \
    X(EPROTO, -3, "malformed message")                                                             \
    X(EVERSION, -4, "unsupported protocol version")                                                \
    X(ETYPE, -5, "unknown message type")                                                           \
    X(ETOOBIG, -6, "message too large")                                                            \
    X(ECLOSED, -7, "closed")                                                                       \
    X(ENODAEMON, -8, "daemon not reachable")                                                       \
    X(ETIMEDOUT, -9, "timed out")                                                                  \
    X(EPERM, -10, "permission denied")                                                             \
    X(ENOENT, -11, "not found")                                                                    \
    X(ESTATE, -12, "call out of order")                                                            \
    X(ELIMIT, -13, "limit reached")                                                                \
    X(EBACKEND, -14, "profiler backend failed")                                                    \
    X(ECONFIG, -15, "invalid configuration")                                                       \
    X(EIO, -16, "input/output error")                                                              \
    X(ECLIENT, -17, "unknown client")                                                              \
    X(ENOTSUP, -18, "not supported")                                                               \
    X(EPATH, -19, "path outside the spool")                                                        \
    X(EINTERNAL, -20, "internal error")

enum profd_errno {
    PROFD_OK = 0,
#define PROFD_ERR_ENUM(name, val, msg) PROFD_##name = (val),
    PROFD_ERRNO_MAP(PROFD_ERR_ENUM)
#undef PROFD_ERR_ENUM
};

/* Human-readable message for an error code; never NULL. */
PROFD_API const char *profd_strerror(int err);

/* Symbolic name ("EPERM") for an error code; "EUNKNOWN" for unknown codes. */
PROFD_API const char *profd_errname(int err);

/* Error code for a symbolic name, or 0 when the name is not in the table. */
PROFD_API int profd_errcode(const char *name);

#ifdef __cplusplus
}
#endif
#endif
