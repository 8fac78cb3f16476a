// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * profd wire format (private to the project; linked by daemon, client and
 * profctl). The records and messages are defined once in messages.def; this
 * header turns them into C structs and declares the one codec.
 *
 * Ownership: decoded records own every string and array they point to;
 * pp_record_free() / pp_msg_free() release them. Encoders never take
 * ownership of their input.
 */
#ifndef PROFD_PROTO_H
#define PROFD_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profd/errors.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PP_VERSION 1

/* Limits. Messages larger than pp_limits.max_msg are refused with
 * PROFD_ETOOBIG before parsing. */
#define PP_MAX_MSG_DEFAULT (1024 * 1024)
#define PP_MAX_STR         65536
#define PP_MAX_ARR         (1 << 20)
#define PP_MAX_NAME        64
#define PP_MAX_PATH        1024
/* Roles one process may host (hello: role + roles[]). */
#define PP_MAX_ROLES 16

/* Longest run directory (the folder of worker.sock and control.sock), for
 * daemon, library and profctl alike: sockaddr_un holds 107 bytes of path,
 * "/control.sock" is 13 of them. */
#define PP_RUN_DIR_MAX 94

/* "null" for nullable integer fields. */
#define PP_NONE INT64_MIN

/* Every integer on the wire is within +-PP_INT_MAX (2^53 - 1, the integers
 * a JSON number holds exactly); a step (fields flagged PP_STEP) within
 * 0..PP_INT_MAX. The codec refuses anything else. */
#define PP_INT_MAX ((int64_t)9007199254740991LL)

/* field flags */
#define PP_REQ  1u
#define PP_NUL  2u
#define PP_OMIT 4u
#define PP_LAX  8u
#define PP_STEP 16u /* I64 / I64S: a step, 0..PP_INT_MAX */

typedef enum pp_access {
    PP_ACC_REPLY,
    PP_ACC_WORKER,
    PP_ACC_READ,
    PP_ACC_WRITE,
    PP_ACC_NODE,
} pp_access_t;

/* ---- the structs, generated from messages.def ---- */
#include "../../messages.def"

#define PP_ENUM_CONST(c, name) c,
#define PP_DECL_ENUM_TYPE(id)  typedef enum pp_##id{PP_ENUM_##id(PP_ENUM_CONST)} pp_##id##_t;
PP_ENUMS(PP_DECL_ENUM_TYPE)
#undef PP_DECL_ENUM_TYPE
#undef PP_ENUM_CONST

#define PP_DECL_I64(n, s)  int64_t n;
#define PP_DECL_BOOL(n, s) bool n;
#define PP_DECL_F64(n, s)  double n;
#define PP_DECL_STR(n, s)  char *n;
#define PP_DECL_JSON(n, s) char *n;
#define PP_DECL_ENUM(n, s) pp_##s##_t n;
#define PP_DECL_I64S(n, s)                                                                         \
    int64_t *n;                                                                                    \
    size_t n##_n;
#define PP_DECL_STRS(n, s)                                                                         \
    char **n;                                                                                      \
    size_t n##_n;
#define PP_DECL_ARR(n, s)                                                                          \
    struct pp_##s *n;                                                                              \
    size_t n##_n;
#define PP_DECL_OBJ(n, s)                  struct pp_##s n;
#define PP_DECL(T, kind, name, flags, sub) PP_DECL_##kind(name, sub)

#define PP_DECL_RECORD(id)                                                                         \
    typedef struct pp_##id {                                                                       \
        PP_FIELDS_##id(PP_DECL, _)                                                                 \
    } pp_##id##_t;
PP_RECORDS(PP_DECL_RECORD)
#undef PP_DECL_RECORD

typedef enum pp_type {
    PP_T_NONE = 0,
#define PP_TYPE_ENUM(id, name, body, acc) PP_T_##name = id,
    PP_MSGS(PP_TYPE_ENUM)
#undef PP_TYPE_ENUM
} pp_type_t;

/* A decoded message: the type selects the union member of the same name. */
typedef struct pp_msg {
    pp_type_t type;
    union {
#define PP_UNION_MEMBER(id, name, body, acc) pp_##body##_t name;
        PP_MSGS(PP_UNION_MEMBER)
#undef PP_UNION_MEMBER
    } u;
} pp_msg_t;

/* ---- record descriptors (reflection used by the codec) ---- */

typedef enum pp_kind {
    PP_K_I64,
    PP_K_BOOL,
    PP_K_F64,
    PP_K_STR,
    PP_K_JSON,
    PP_K_ENUM,
    PP_K_I64S,
    PP_K_STRS,
    PP_K_ARR,
    PP_K_OBJ,
} pp_kind_t;

/* An enumeration's names, by value (names[0] is NULL: "none"). */
typedef struct pp_enum {
    const char *name;
    const char *const *names;
    int count;
} pp_enum_t;

#define PP_ENUM_EXTERN(id) extern const pp_enum_t pp_enum_##id;
PP_ENUMS(PP_ENUM_EXTERN)
#undef PP_ENUM_EXTERN

/* The name of value v ("complete"), or NULL for 0 and values out of range. */
const char *pp_enum_name(const pp_enum_t *e, int v);
/* The value of a name, 0 when the enumeration has no such name (or NULL). */
int pp_enum_value(const pp_enum_t *e, const char *name);

/* Shorthands for the names used in logs and tables. */
#define pp_status_name(v) pp_enum_name(&pp_enum_capture_status, (int)(v))
#define pp_mode_name(v)   pp_enum_name(&pp_enum_mode, (int)(v))

struct pp_desc;
typedef struct pp_field {
    const char *name;
    pp_kind_t kind;
    unsigned flags;
    size_t off;   /* the value, or the array pointer */
    size_t off_n; /* array count (I64S, STRS, ARR) */
    const struct pp_desc *sub;
    const pp_enum_t *en; /* ENUM */
} pp_field_t;

typedef struct pp_desc {
    const char *name;
    size_t size;
    const pp_field_t *fields;
    size_t nfields;
} pp_desc_t;

#define PP_DESC_EXTERN(id) extern const pp_desc_t pp_desc_##id;
PP_RECORDS(PP_DESC_EXTERN)
#undef PP_DESC_EXTERN

/* ---- messages ---- */

/* Name ("hello") of a message type, or NULL. */
const char *pp_type_name(pp_type_t t);
/* Type for a name, PP_T_NONE when unknown. */
pp_type_t pp_type_from_name(const char *name);
/* Access class of a type (PP_ACC_REPLY for unknown types). */
pp_access_t pp_type_access(pp_type_t t);
/* Record descriptor of a message's body. */
const pp_desc_t *pp_type_desc(pp_type_t t);

/*
 * Decode one message of `len` bytes (not necessarily NUL-terminated).
 * Checks, in order: size <= max_msg (PROFD_ETOOBIG), JSON syntax and a
 * top-level object (PROFD_EPROTO), "v" == PP_VERSION (PROFD_EVERSION), a
 * known "type" (PROFD_ETYPE), then the body schema (PROFD_EPROTO). On error
 * `err` (if not NULL) receives a one-line reason and *out is left zeroed.
 * On success the caller owns *out and frees it with pp_msg_free().
 */
int pp_msg_decode(const void *buf, size_t len, size_t max_msg, pp_msg_t *out, char *err,
                  size_t errlen);

/* A reply: pp_msg_decode, and an error message as its code (one not below
 * 0: PROFD_EPROTO) with its text in `err`, the message freed. */
int pp_reply_decode(const void *buf, size_t len, size_t max_msg, pp_msg_t *out, char *err,
                    size_t errlen);

/* Encode a message as compact JSON; *out is malloc'ed and NUL-terminated,
 * *len excludes the NUL. Returns 0 or PROFD_ENOMEM / PROFD_EINVAL. */
int pp_msg_encode(const pp_msg_t *m, char **out, size_t *len);

/* Initialise an empty message of a type (every nullable field null). */
void pp_msg_init(pp_msg_t *m, pp_type_t t);
void pp_msg_free(pp_msg_t *m);

/*
 * Framed messages carry raw bytes after the JSON: JSON, one NUL byte,
 * payload (chunk). pp_frame_split() returns the length of the JSON part
 * (the whole buffer when there is no NUL) and points `payload` and `plen`
 * at the rest.
 */
size_t pp_frame_split(const void *buf, size_t len, const void **payload, size_t *plen);
/* Encode m, then a NUL and the payload; *out malloc'ed. */
int pp_frame_encode(const pp_msg_t *m, const void *payload, size_t plen, char **out, size_t *len);

/* Build and encode an error reply in one call. */
int pp_error_encode(int code, const char *message, char **out, size_t *len);

/* ---- records (documents such as manifest.json) ---- */

/* Set a record to its empty state: zero, PP_NONE for nullable integers. */
void pp_record_init(const pp_desc_t *d, void *rec);
void pp_record_free(const pp_desc_t *d, void *rec);
/* An array of n records of d: each freed, then the array. */
void pp_records_free(const pp_desc_t *d, void *v, size_t n);
/* Deep copy; returns 0 or PROFD_ENOMEM (dst left empty). */
int pp_record_copy(const pp_desc_t *d, void *dst, const void *src);
/* Whether two records hold the same values, deep (strings by content, a
 * NULL string equal only to NULL; a NaN equal to nothing): equal records
 * encode to the same bytes. */
bool pp_record_equal(const pp_desc_t *d, const void *a, const void *b);
/* Decode a JSON document into a record. Same error rules as pp_msg_decode. */
int pp_record_decode(const pp_desc_t *d, const void *buf, size_t len, void *out, char *err,
                     size_t errlen);
/* Encode a record; pretty = indented for humans (manifest.json). */
int pp_record_encode(const pp_desc_t *d, const void *rec, bool pretty, char **out, size_t *len);

/* The same text handed to sink->put in pieces as it is encoded (each about
 * PP_SINK_PIECE bytes, a record's end at most past it; never the whole
 * text at once, for a document of megabytes written to a file): the bytes
 * pp_record_encode gives, in order. put returns 0, or an error that stops
 * the encoding and is returned. Returns 0, PROFD_EINVAL, PROFD_ENOMEM or
 * put's error. */
#define PP_SINK_PIECE 65536
typedef struct pp_sink {
    int (*put)(void *arg, const char *text, size_t len);
    void *arg;
} pp_sink_t;
int pp_record_encode_to(const pp_desc_t *d, const void *rec, bool pretty, const pp_sink_t *sink);

/*
 * Encode a record (compact) whose arrays of records may hold elements
 * already encoded: for element i of the array field f of the record rec,
 * hook->elem returns 1 with its compact JSON text in *text, *len (copied
 * as it is: the caller vouches for it), 0 to have the element encoded from
 * the record, or -1 (the encoding fails with PROFD_ENOMEM). A caller that
 * keeps each element's text while the element does not change encodes a
 * large document by re-encoding only what changed (the coordinator's state
 * file). Returns 0, PROFD_EINVAL or PROFD_ENOMEM.
 */
typedef struct pp_elem_hook {
    int (*elem)(void *arg, const pp_field_t *f, const void *rec, size_t i, const char **text,
                size_t *len);
    void *arg;
} pp_elem_hook_t;
int pp_record_encode_hooked(const pp_desc_t *d, const void *rec, const pp_elem_hook_t *hook,
                            char **out, size_t *len);
/* A message (pp_msg_encode) whose arrays of records may hold elements
 * already encoded, as above (a node's batch of results encoded once each). */
int pp_msg_encode_hooked(const pp_msg_t *m, const pp_elem_hook_t *hook, char **out, size_t *len);

/* ---- fields from text (command lines) ---- */

/* The field of a record by its JSON name, or NULL. */
const pp_field_t *pp_field_find(const pp_desc_t *d, const char *name);
/*
 * Set one field of `rec` from command-line text, parsed by the field's
 * kind: integers, true/false, a name of the field's enumeration, a string,
 * a JSON object, or a comma-separated list (integers; names
 * [A-Za-z0-9_-]). Returns 0, or PROFD_EINVAL with a one-line reason in err
 * (the field unchanged), PROFD_ENOMEM.
 */
int pp_field_set_text(const pp_desc_t *d, void *rec, const char *name, const char *text, char *err,
                      size_t errlen);

/* ---- small helpers shared by every part ---- */

/* Identifier for roles, phases, jobs and tools: [A-Za-z0-9_-], 1..64 chars. */
bool pp_ident_ok(const char *s);
/* Host names: identifier characters plus '.', not starting with '.'. */
bool pp_host_ok(const char *s);

/* Step sections a worker marks (profd_section_t in client.h numbers them
 * alike): data, forward, backward, optimizer, comm. Their names on the wire
 * and in documents; NULL out of range. */
#define PP_SECTIONS 5
const char *pp_section_name(int section);

/* "w3-step2", "w4-steps5-9", "w5-from5" (open end: last_step PP_NONE). */
int pp_window_name(char *buf, size_t len, int64_t id, int64_t first_step, int64_t last_step);

/* One window of a request: steps first..last, inclusive (last PP_NONE:
 * until the job ends). */
typedef struct pp_segment {
    int64_t first;
    int64_t last;
} pp_segment_t;

/*
 * The windows a request makes, in order: one per listed step, or with
 * `continuous` one per run of consecutive steps; `start`/`end` one window
 * [start, end) (end -1 or null: open); `next` N one window of N steps from
 * `next_start`. Shared by the daemon's planner and `profctl apply
 * --dry-run`. *out is malloc'ed (free it); returns 0 or PROFD_ENOMEM, and
 * PROFD_EINVAL when the request has no steps at all.
 */
int pp_spec_segments(const pp_window_spec_t *spec, int64_t next_start, pp_segment_t **out,
                     size_t *n);

/* Capture folder below the window folder:
 *   <role>[.<phase>]/rank<R>[-replica<P>]-<host>[-pid<PID>]
 * phase NULL for end-to-end captures, replica PP_NONE when not a replica,
 * pid 0 when the folder is unique without it (the window table decides:
 * pd_windows_add_member). */
int pp_capture_dir(char *buf, size_t len, const char *role, const char *phase, int64_t rank,
                   int64_t replica, const char *host, int64_t pid);

/* Read an integer / string / bool member of a JSON object text (tool
 * settings). Missing member or wrong type gives `def`. */
int64_t pp_json_get_i64(const char *json, const char *key, int64_t def);
bool pp_json_get_bool(const char *json, const char *key, bool def);
/* Copies into buf; returns false (buf = def) when missing. */
bool pp_json_get_str(const char *json, const char *key, char *buf, size_t len, const char *def);
/* Names in a JSON array member (e.g. "contents"); returns the count written
 * (at most max), -1 when the member is missing or not an array of strings. */
int pp_json_get_strs(const char *json, const char *key, char out[][PP_MAX_NAME], int max);

#ifdef __cplusplus
}
#endif
#endif
