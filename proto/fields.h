// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The codec's private helpers: where a field of a record lies in memory
 * (tables.c's descriptors give its offsets). Not installed.
 */
#ifndef PP_FIELDS_H
#define PP_FIELDS_H

#define FIELD_PTR(rec, f)  ((void *)((char *)(rec) + (f)->off))
#define FIELD_CPTR(rec, f) ((const void *)((const char *)(rec) + (f)->off))
#define FIELD_N(rec, f)    ((size_t *)((char *)(rec) + (f)->off_n))
#define FIELD_CN(rec, f)   (*(const size_t *)((const char *)(rec) + (f)->off_n))

#endif
