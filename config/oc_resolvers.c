// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * OmegaConf's resolvers (oc.select, oc.env, oc.decode; OmegaConf 2.3
 * omegaconf/resolvers/oc/__init__.py) and the application's (oc_t
 * resolvers: Hydra's now and hydra).
 */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "omegaconf_int.h"
#include "profd/errors.h"

/* ${oc.select:KEY[,DEFAULT]}: KEY absent gives DEFAULT (null without one);
 * KEY `???` gives null. */
static int oc_select_call(ip_t *p, val_t *args, size_t nargs, val_t *out)
{
    kpath_t k;
    yt_node_t *raw;
    sbuf_t b = {0};
    int rc;
    if (nargs < 1 || nargs > 2) {
        return ocp_why(p, "oc.select takes a key and an optional default");
    }
    ocp_py_str(&b, args[0].node, false);
    if (b.s.oom) {
        pu_sbuf_free(&b.s);
        return ocp_oom(p);
    }
    rc = ocp_kpath_parse(p, b.s.p ? b.s.p : "", &k);
    pu_sbuf_free(&b.s);
    if (rc == 0) {
        rc = ocp_kpath_find(p, &k, &raw);
    }
    if (rc != 0) {
        return rc;
    }
    if (raw == NULL && nargs == 2) {
        *out = args[1];
        args[1].node = NULL;
        args[1].owned = false;
        return 0;
    }
    if (raw == NULL || ocp_is_missing_marker(raw)) {
        return ocp_null_value(p, out);
    }
    return ocp_resolve_raw(p, raw, out);
}

/* ${oc.env:VAR[,DEFAULT]}: the variable's value (a string), else DEFAULT
 * as str() writes it (null stays null), else an error -- OmegaConf 2.3's
 * resolvers/oc/__init__.py:env. */
static int oc_env_call(ip_t *p, val_t *args, size_t nargs, val_t *out)
{
    sbuf_t name = {0}, def = {0};
    int rc = 0;
    if (p->oc->env == NULL) {
        return ocp_why(p, "oc.env is not read here (the daemon's environment is not the job's): "
                          "profctl apply resolves it from the caller's environment");
    }
    if (nargs < 1 || nargs > 2) {
        return ocp_why(p, "oc.env takes a variable name and an optional default");
    }
    ocp_py_str(&name, args[0].node, false);
    const char *v = name.s.oom ? NULL : p->oc->env(p->oc->env_ctx, name.s.p ? name.s.p : "");
    if (name.s.oom) {
        rc = ocp_oom(p);
    } else if (v != NULL) {
        out->node = ocp_mk(p, YT_STR, v, strlen(v));
        rc = out->node ? 0 : ocp_mk_failed(p);
        out->owned = true;
    } else if (nargs == 1) {
        rc = ocp_why(p, "Environment variable '%s' not found", name.s.p ? name.s.p : "");
    } else if (args[1].node->type == YT_NULL) {
        rc = ocp_null_value(p, out);
    } else {
        ocp_py_str(&def, args[1].node, false);
        out->node = def.s.oom ? NULL : ocp_mk(p, YT_STR, def.s.p ? def.s.p : "", def.s.len);
        rc = out->node ? 0 : def.s.oom ? ocp_oom(p) : ocp_mk_failed(p);
        out->owned = true;
    }
    pu_sbuf_free(&name.s);
    pu_sbuf_free(&def.s);
    return rc;
}

/* ${oc.decode:STR}: STR read as one element of the grammar, interpolations
 * resolved; null stays null (OmegaConf 2.3 resolvers/oc/__init__.py:41-58). */
static int oc_decode_call(ip_t *p, val_t *args, size_t nargs, val_t *out)
{
    if (nargs != 1) {
        return ocp_why(p, "oc.decode takes one argument");
    }
    const yt_node_t *a = args[0].node;
    if (a->type == YT_NULL) {
        return ocp_null_value(p, out);
    }
    if (a->type != YT_STR) {
        return ocp_why(p,
                       "TypeError: `oc.decode` can only take strings or None as input, but `%s` is "
                       "of type %s",
                       a->text ? a->text : "",
                       a->type == YT_INT     ? "int"
                       : a->type == YT_FLOAT ? "float"
                       : a->type == YT_BOOL  ? "bool"
                       : a->type == YT_SEQ   ? "ListConfig"
                                             : "DictConfig");
    }
    size_t len = strlen(a->text);
    size_t lead = strspn(a->text, " \t");
    bool blank_end = len > 0 && (a->text[len - 1] == ' ' || a->text[len - 1] == '\t');
    if (lead == len) { /* singleElement needs an element */
        return ocp_why(p, "oc.decode: GrammarParseError: nothing to decode in '%s'", a->text);
    }
    if ((lead > 0 || blank_end) && strchr("[{'\"", a->text[lead]) != NULL) {
        return ocp_why(p, "oc.decode: GrammarParseError: mismatched input '%c' expecting <EOF>",
                       lead > 0 ? a->text[lead] : ' ');
    }
    if ((lead > 0 || blank_end) && strstr(a->text, "${") == NULL) {
        /* blanks around a primitive make it a string of its tokens, as written */
        out->node = ocp_mk(p, YT_STR, a->text, len);
        out->owned = true;
        return out->node ? 0 : ocp_mk_failed(p);
    }
    ip_t d = {
        .oc = p->oc, .ops = p->ops, .node = p->node, .s = a->text, .n = len, .depth = p->depth};
    int rc = d.ops->element(&d, out);
    ocp_skip_ws(&d);
    if (rc == 0 && d.i < d.n) {
        ocp_val_drop(out);
        rc = ocp_syn(&d, "oc.decode: unexpected '%c' at offset %zu of '%s'", d.s[d.i], d.i, d.s);
    }
    if (rc != 0 && d.why[0] != '\0') {
        p->syntax = d.syntax;
        snprintf(p->why, sizeof(p->why), "%s", d.why);
    }
    return rc;
}

int ocp_call_resolver(ip_t *p, const char *name, val_t *args, size_t nargs, val_t *out)
{
    if (strcmp(name, "oc.select") == 0) {
        return oc_select_call(p, args, nargs, out);
    }
    if (strcmp(name, "oc.env") == 0) {
        return oc_env_call(p, args, nargs, out);
    }
    if (strcmp(name, "oc.decode") == 0) {
        return oc_decode_call(p, args, nargs, out);
    }
    if (p->oc->resolvers != NULL) {
        yt_node_t *a[8];
        char msg[sizeof(p->why)] = "";
        for (size_t i = 0; i < nargs && i < 8; i++) {
            a[i] = args[i].node;
        }
        int rc = p->oc->resolvers(p->oc->resolvers_ctx, name, a, nargs, &out->node, &out->owned,
                                  msg, sizeof(msg));
        if (rc == PROFD_ECONFIG) {
            return ocp_why(p, "%s", msg);
        }
        if (rc == PROFD_ENOMEM) {
            return ocp_oom(p);
        }
        if (rc == 0 && !out->owned) {
            return ocp_resolve_raw(p, out->node, out); /* a node of the resolver's tree */
        }
        if (rc == 0) {
            if (out->owned) {
                ocp_set_origin_tree(out->node, p->node->origin);
                out->node->line = p->node->line;
                out->node->col = p->node->col;
                out->node->flags |= YT_F_FINAL;
            }
            return 0;
        }
    }
    return ocp_why(p, "unsupported resolver '%s'", name);
}
