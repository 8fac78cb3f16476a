// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Fuzz target for the wire codec: any bytes through pp_msg_decode() (and
 * the framed split, and the manifest and steps.json records); whatever
 * decodes must encode,
 * and encoding is stable: decode(encode(m)) encodes to the same text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profd/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void roundtrip(const pp_msg_t *m)
{
    char *a, *b;
    size_t la, lb;
    pp_msg_t again;
    char err[256];
    if (pp_msg_encode(m, &a, &la) != 0) {
        abort(); /* a decoded message always encodes */
    }
    if (pp_msg_decode(a, la, 0, &again, err, sizeof(err)) != 0) {
        abort(); /* and what we write we read */
    }
    if (pp_msg_encode(&again, &b, &lb) != 0 || la != lb || memcmp(a, b, la) != 0) {
        abort(); /* the second encoding is the first */
    }
    pp_msg_free(&again);
    free(a);
    free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pp_msg_t m;
    pp_manifest_t man;
    char err[256];
    const void *payload;
    size_t plen;
    size_t jl = pp_frame_split(data, size, &payload, &plen);
    if (jl > size || (payload && (const uint8_t *)payload + plen != data + size)) {
        abort();
    }
    if (pp_msg_decode(data, jl, 65536, &m, err, sizeof(err)) == 0) {
        roundtrip(&m);
        pp_msg_free(&m);
    }
    if (pp_record_decode(&pp_desc_manifest, data, size, &man, err, sizeof(err)) == 0) {
        char *text;
        if (pp_record_encode(&pp_desc_manifest, &man, true, &text, NULL) != 0) {
            abort();
        }
        free(text);
        pp_record_free(&pp_desc_manifest, &man);
    }
    pp_steps_doc_t doc;
    if (pp_record_decode(&pp_desc_steps_doc, data, size, &doc, err, sizeof(err)) == 0) {
        char *text;
        if (pp_record_encode(&pp_desc_steps_doc, &doc, true, &text, NULL) != 0) {
            abort(); /* steps.json, read back (profctl, users' scripts) */
        }
        free(text);
        pp_record_free(&pp_desc_steps_doc, &doc);
    }
    return 0;
}
