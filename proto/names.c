// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The error table and the naming rules shared by every part: identifiers,
 * window names and capture folders. One place, so the client that writes a
 * capture and the daemon that gathers it cannot disagree.
 */
#include <stdio.h>
#include <string.h>

#include "profd/proto.h"

/* Each error's code, name and message, from the one list in profd/errors.h. */
static const struct err_row {
    int code;
    const char *name, *msg;
} err_rows[] = {{PROFD_OK, "OK", "success"},
#define PROFD_ERR_ROW(n, val, msg) {PROFD_##n, #n, msg},
                PROFD_ERRNO_MAP(PROFD_ERR_ROW)
#undef PROFD_ERR_ROW
};

static const struct err_row *err_row(int err)
{
    for (size_t i = 0; i < sizeof(err_rows) / sizeof(err_rows[0]); i++) {
        if (err_rows[i].code == err) {
            return &err_rows[i];
        }
    }
    return NULL;
}

const char *profd_strerror(int err)
{
    const struct err_row *r = err_row(err);
    return r ? r->msg : "unknown error";
}

const char *profd_errname(int err)
{
    const struct err_row *r = err_row(err);
    return r ? r->name : "EUNKNOWN";
}

int profd_errcode(const char *name)
{
    for (size_t i = 1; i < sizeof(err_rows) / sizeof(err_rows[0]); i++) {
        if (name && strcmp(name, err_rows[i].name) == 0) {
            return err_rows[i].code;
        }
    }
    return 0;
}

static bool ident_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || ch == '-';
}

const char *pp_section_name(int section)
{
    static const char *const names[PP_SECTIONS] = {"data", "forward", "backward", "optimizer",
                                                   "comm"};
    return section >= 0 && section < PP_SECTIONS ? names[section] : NULL;
}

bool pp_ident_ok(const char *s)
{
    size_t n = 0;
    if (s == NULL || *s == '\0') {
        return false;
    }
    for (; s[n]; n++) {
        if (n >= PP_MAX_NAME || !ident_char(s[n])) {
            return false;
        }
    }
    return true;
}

bool pp_host_ok(const char *s)
{
    size_t n = 0;
    if (s == NULL || *s == '\0' || *s == '.') {
        return false;
    }
    for (; s[n]; n++) {
        if (n >= PP_MAX_NAME || !(ident_char(s[n]) || s[n] == '.')) {
            return false;
        }
    }
    return strstr(s, "..") == NULL;
}

static int fit(int n, size_t len)
{
    return (n < 0 || (size_t)n >= len) ? PROFD_EINVAL : 0;
}

int pp_window_name(char *buf, size_t len, int64_t id, int64_t first, int64_t last)
{
    int n;
    if (last == PP_NONE) {
        n = snprintf(buf, len, "w%lld-from%lld", (long long)id, (long long)first);
    } else if (last == first) {
        n = snprintf(buf, len, "w%lld-step%lld", (long long)id, (long long)first);
    } else {
        n = snprintf(buf, len, "w%lld-steps%lld-%lld", (long long)id, (long long)first,
                     (long long)last);
    }
    return fit(n, len);
}

int pp_capture_dir(char *buf, size_t len, const char *role, const char *phase, int64_t rank,
                   int64_t replica, const char *host, int64_t pid)
{
    char rep[32] = "", tag[32] = "";
    if (!pp_ident_ok(role) || (phase && !pp_ident_ok(phase)) || !pp_host_ok(host) || rank < 0 ||
        pid < 0) {
        return PROFD_EINVAL;
    }
    if (replica != PP_NONE) {
        snprintf(rep, sizeof(rep), "-replica%lld", (long long)replica);
    }
    if (pid > 0) {
        snprintf(tag, sizeof(tag), "-pid%lld", (long long)pid);
    }
    int n = snprintf(buf, len, "%s%s%s/rank%lld%s-%s%s", role, phase ? "." : "", phase ? phase : "",
                     (long long)rank, rep, host, tag);
    return fit(n, len);
}
