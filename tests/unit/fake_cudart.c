// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * A stand-in for the CUDA runtime's profiler API, loaded by test_backends
 * through the cuda backend's "library" setting. Counts the calls; returns
 * the error code in $FAKE_CUDART_ERROR (0 when unset), as cudaError_t.
 */
#include <stdlib.h>

#define FAKE_API __attribute__((visibility("default")))

FAKE_API int fake_cudart_starts;
FAKE_API int fake_cudart_stops;

FAKE_API int cudaProfilerStart(void);
FAKE_API int cudaProfilerStop(void);

static int result(void)
{
    const char *e = getenv("FAKE_CUDART_ERROR");
    return e ? atoi(e) : 0;
}

int cudaProfilerStart(void)
{
    fake_cudart_starts++;
    return result();
}

int cudaProfilerStop(void)
{
    fake_cudart_stops++;
    return result();
}
