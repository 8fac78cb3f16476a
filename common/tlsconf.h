// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * TLS configuration for nng endpoints, shared by the daemon (listeners and
 * its dialer to a coordinator) and profctl. One policy everywhere: both
 * sides present a certificate and both verify the other's against the
 * configured CA (mbedTLS through nng). Certificates must name DNS hosts:
 * this nng does not match IP addresses.
 */
#ifndef PT_TLSCONF_H
#define PT_TLSCONF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct pt_tls_files {
    const char *ca;          /* CA certificate(s) peers must chain to (PEM) */
    const char *cert;        /* own certificate (PEM); may also hold the key */
    const char *key;         /* own private key (PEM); "" or NULL: in `cert` */
    const char *server_name; /* dialer: DNS name the server must carry; "" = URL host */
} pt_tls_files_t;

/* True for tls+tcp:// (and other tls+ transports). */
bool pt_tls_url(const char *url);

/*
 * An nng_tls_config (as void * to keep nng's TLS header out of other
 * modules) for a listener (server) or a dialer. A listener needs ca, cert
 * and key; a dialer needs ca, and cert/key when the server asks for a client
 * certificate (profd's listeners always do). Returns NULL with a one-line
 * reason in err (naming the file) on a missing or unreadable file.
 */
void *pt_tls_config(const pt_tls_files_t *files, bool server, char *err, size_t errlen);
void pt_tls_config_free(void *cfg);

#endif
