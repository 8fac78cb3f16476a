// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The wire format's tables, generated from messages.def: the enumerations'
 * names, each record's field descriptors and the message table (name, body,
 * access class) that the codec (decode.c, encode.c, record.c) is driven by.
 */
#include <stddef.h>
#include <string.h>

#include "profd/proto.h"

/* ---- enumerations ---- */

#define PP_ENUM_NAME(c, name) name,
#define PP_DEF_ENUM(id)                                                                            \
    static const char *const pp_names_##id[] = {PP_ENUM_##id(PP_ENUM_NAME)};                       \
    const pp_enum_t pp_enum_##id = {#id, pp_names_##id,                                            \
                                    (int)(sizeof(pp_names_##id) / sizeof(pp_names_##id[0]))};
PP_ENUMS(PP_DEF_ENUM)
#undef PP_DEF_ENUM
#undef PP_ENUM_NAME

const char *pp_enum_name(const pp_enum_t *e, int v)
{
    return v > 0 && v < e->count ? e->names[v] : NULL;
}

int pp_enum_value(const pp_enum_t *e, const char *name)
{
    for (int i = 1; name && i < e->count; i++) {
        if (strcmp(e->names[i], name) == 0) {
            return i;
        }
    }
    return 0;
}

/* ---- descriptors ---- */

#define PP_FD_I64(T, n, fl, s)  {#n, PP_K_I64, fl, offsetof(T, n), 0, NULL, NULL},
#define PP_FD_BOOL(T, n, fl, s) {#n, PP_K_BOOL, fl, offsetof(T, n), 0, NULL, NULL},
#define PP_FD_F64(T, n, fl, s)  {#n, PP_K_F64, fl, offsetof(T, n), 0, NULL, NULL},
#define PP_FD_STR(T, n, fl, s)  {#n, PP_K_STR, fl, offsetof(T, n), 0, NULL, NULL},
#define PP_FD_JSON(T, n, fl, s) {#n, PP_K_JSON, fl, offsetof(T, n), 0, NULL, NULL},
#define PP_FD_ENUM(T, n, fl, s) {#n, PP_K_ENUM, fl, offsetof(T, n), 0, NULL, &pp_enum_##s},
#define PP_FD_I64S(T, n, fl, s) {#n, PP_K_I64S, fl, offsetof(T, n), offsetof(T, n##_n), NULL, NULL},
#define PP_FD_STRS(T, n, fl, s) {#n, PP_K_STRS, fl, offsetof(T, n), offsetof(T, n##_n), NULL, NULL},
#define PP_FD_ARR(T, n, fl, s)                                                                     \
    {#n, PP_K_ARR, fl, offsetof(T, n), offsetof(T, n##_n), &pp_desc_##s, NULL},
#define PP_FD_OBJ(T, n, fl, s)           {#n, PP_K_OBJ, fl, offsetof(T, n), 0, &pp_desc_##s, NULL},
#define PP_FD(T, kind, name, flags, sub) PP_FD_##kind(T, name, flags, sub)

#define PP_DEF_DESC(id)                                                                            \
    static const pp_field_t pp_fields_##id[] = {PP_FIELDS_##id(PP_FD, pp_##id##_t)};               \
    const pp_desc_t pp_desc_##id = {#id, sizeof(pp_##id##_t), pp_fields_##id,                      \
                                    sizeof(pp_fields_##id) / sizeof(pp_fields_##id[0])};
PP_RECORDS(PP_DEF_DESC)
#undef PP_DEF_DESC

/* ---- message table ---- */

typedef struct msg_info {
    pp_type_t type;
    const char *name;
    const pp_desc_t *desc;
    pp_access_t access;
} msg_info_t;

static const msg_info_t msg_table[] = {
#define PP_MSG_ROW(id, name, body, acc) {PP_T_##name, #name, &pp_desc_##body, acc},
    PP_MSGS(PP_MSG_ROW)
#undef PP_MSG_ROW
};
#define MSG_COUNT (sizeof(msg_table) / sizeof(msg_table[0]))

static const msg_info_t *msg_find(pp_type_t t)
{
    for (size_t i = 0; i < MSG_COUNT; i++) {
        if (msg_table[i].type == t) {
            return &msg_table[i];
        }
    }
    return NULL;
}

const char *pp_type_name(pp_type_t t)
{
    const msg_info_t *mi = msg_find(t);
    return mi ? mi->name : NULL;
}

pp_type_t pp_type_from_name(const char *name)
{
    for (size_t i = 0; name && i < MSG_COUNT; i++) {
        if (strcmp(msg_table[i].name, name) == 0) {
            return msg_table[i].type;
        }
    }
    return PP_T_NONE;
}

pp_access_t pp_type_access(pp_type_t t)
{
    const msg_info_t *mi = msg_find(t);
    return mi ? mi->access : PP_ACC_REPLY;
}

const pp_desc_t *pp_type_desc(pp_type_t t)
{
    const msg_info_t *mi = msg_find(t);
    return mi ? mi->desc : NULL;
}
