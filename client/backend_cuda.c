// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The `cuda` backend: cudaProfilerStart()/cudaProfilerStop() from the CUDA
 * runtime, found with dlopen at first use, so that
 *   nsys profile --capture-range=cudaProfilerApi --capture-range-end=repeat
 * records exactly the spans profd opens. A runtime already loaded by the
 * process (PyTorch brings its own) is preferred; settings "library" names
 * another one. The library stays loaded once found (the process owns it).
 * Without a CUDA runtime the capture fails with the loader's message.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "profd/client.h"
#include "profd/proto.h"

typedef int (*cuda_fn)(void);

static const char *const cudart_names[] = {
    "libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", NULL,
};

static void *find_runtime(const char *settings, char *reason, size_t reason_len)
{
    char lib[PP_MAX_PATH];
    void *h;

    if (pp_json_get_str(settings, "library", lib, sizeof(lib), NULL) && lib[0]) {
        if ((h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL)) == NULL) {
            snprintf(reason, reason_len, "cuda: cannot load %s: %s", lib, dlerror());
        }
        return h;
    }
    for (int i = 0; cudart_names[i]; i++) { /* already in the process? */
        if ((h = dlopen(cudart_names[i], RTLD_NOW | RTLD_NOLOAD)) != NULL) {
            return h;
        }
    }
    const char *first_error = NULL;
    char msg[256] = "";
    for (int i = 0; cudart_names[i]; i++) {
        if ((h = dlopen(cudart_names[i], RTLD_NOW | RTLD_GLOBAL)) != NULL) {
            return h;
        }
        if (first_error == NULL && (first_error = dlerror()) != NULL) {
            snprintf(msg, sizeof(msg), "%s", first_error);
        }
    }
    snprintf(reason, reason_len, "cuda: CUDA runtime not found (%s)",
             msg[0] ? msg : "no libcudart");
    return NULL;
}

static int call(const profd_capture_t *cap, const char *sym, char *reason, size_t reason_len)
{
    char lib[8];
    void *p = NULL;
    /* a runtime in the global namespace serves unless settings name one */
    if (!pp_json_get_str(cap->settings_json, "library", lib, sizeof(lib), NULL)) {
        p = dlsym(RTLD_DEFAULT, sym);
    }
    if (p == NULL) {
        void *h = find_runtime(cap->settings_json, reason, reason_len);
        if (h == NULL) {
            return PROFD_ENOTSUP;
        }
        p = dlsym(h, sym);
    }
    cuda_fn fn;
    memcpy(&fn, &p, sizeof(fn));
    if (fn == NULL) {
        snprintf(reason, reason_len, "cuda: %s not found in the CUDA runtime", sym);
        return PROFD_ENOTSUP;
    }
    int err = fn();
    if (err != 0) {
        snprintf(reason, reason_len, "cuda: %s returned error %d", sym, err);
        return PROFD_EBACKEND;
    }
    return 0;
}

static int cuda_start(const profd_capture_t *cap, void *user, char *reason, size_t reason_len)
{
    return call(cap, "cudaProfilerStart", reason, reason_len);
}

static int cuda_stop(const profd_capture_t *cap, void *user, char *reason, size_t reason_len)
{
    return call(cap, "cudaProfilerStop", reason, reason_len);
}

const profd_backend_t *profd_backend_cuda(void)
{
    static const profd_backend_t b = {.name = "cuda", .start = cuda_start, .stop = cuda_stop};
    return &b;
}
