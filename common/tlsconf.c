// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* TLS configuration shared by profd and profctl (see tlsconf.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <nng/nng.h>
#include <nng/supplemental/tls/tls.h>

#include "tlsconf.h"

#define PEM_MAX (256 * 1024)

bool pt_tls_url(const char *url)
{
    return url != NULL && strncmp(url, "tls+", 4) == 0;
}

static bool set(const char *s)
{
    return s != NULL && s[0] != '\0';
}

/* A PEM file, NUL-terminated; NULL with the reason in err. */
static char *slurp(const char *what, const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "re");
    struct stat st;
    char *buf = NULL;
    if (f == NULL) {
        snprintf(err, errlen, "TLS %s %s: %s", what, path, strerror(errno));
        return NULL;
    }
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        st.st_size > PEM_MAX) {
        snprintf(err, errlen, "TLS %s %s: not a PEM file of 1..%d bytes", what, path, PEM_MAX);
        fclose(f);
        return NULL;
    }
    if ((buf = malloc((size_t)st.st_size + 1)) == NULL) {
        snprintf(err, errlen, "TLS %s %s: out of memory", what, path);
        fclose(f);
        return NULL;
    }
    *len = fread(buf, 1, (size_t)st.st_size, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

/* Private keys do not linger in freed memory. */
static void wipe(char *buf, size_t len)
{
    if (buf != NULL) {
        volatile char *p = buf;
        while (len--) {
            *p++ = 0;
        }
        free(buf);
    }
}

void *pt_tls_config(const pt_tls_files_t *t, bool server, char *err, size_t errlen)
{
    nng_tls_config *cfg;
    char *cert = NULL, *key = NULL;
    size_t cert_len = 0, key_len = 0;
    int rv;

    if (!set(t->ca)) {
        snprintf(err, errlen, "TLS: a CA file is needed to verify the peer's certificate");
        return NULL;
    }
    if (server && !set(t->cert)) {
        snprintf(err, errlen, "TLS: a listener needs a certificate and its key");
        return NULL;
    }
    if ((rv = nng_tls_config_alloc(&cfg, server ? NNG_TLS_MODE_SERVER : NNG_TLS_MODE_CLIENT)) !=
        0) {
        snprintf(err, errlen, "TLS: %s", nng_strerror(rv));
        return NULL;
    }
    if ((rv = nng_tls_config_ca_file(cfg, t->ca)) != 0) {
        snprintf(err, errlen, "TLS CA file %s: %s", t->ca, nng_strerror(rv));
        goto fail;
    }
    if (set(t->cert)) {
        const char *kpath = set(t->key) ? t->key : t->cert;
        if ((cert = slurp("certificate", t->cert, &cert_len, err, errlen)) == NULL ||
            (key = slurp("key", kpath, &key_len, err, errlen)) == NULL) {
            goto fail;
        }
        if ((rv = nng_tls_config_own_cert(cfg, cert, key, NULL)) != 0) {
            snprintf(err, errlen, "TLS certificate %s / key %s: %s", t->cert, kpath,
                     nng_strerror(rv));
            goto fail;
        }
    }
    if (!server && set(t->server_name) &&
        (rv = nng_tls_config_server_name(cfg, t->server_name)) != 0) {
        snprintf(err, errlen, "TLS server name %s: %s", t->server_name, nng_strerror(rv));
        goto fail;
    }
    /* both sides prove who they are */
    if ((rv = nng_tls_config_auth_mode(cfg, NNG_TLS_AUTH_MODE_REQUIRED)) != 0) {
        snprintf(err, errlen, "TLS: %s", nng_strerror(rv));
        goto fail;
    }
    free(cert);
    wipe(key, key_len);
    return cfg;
fail:
    free(cert);
    wipe(key, key_len);
    nng_tls_config_free(cfg);
    return NULL;
}

void pt_tls_config_free(void *cfg)
{
    if (cfg != NULL) {
        nng_tls_config_free(cfg);
    }
}
