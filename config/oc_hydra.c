// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Hydra's override values through the parser (omegaconf_int.h, keep mode):
 * what the value lexer has no token for (hydra-core 1.3.2
 * hydra/grammar/OverrideLexer.g4), function calls (OverrideParser.g4,
 * evaluated by hydra_func.c).
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

#include "hydra_func.h"
#include "omegaconf_int.h"
#include "profd/errors.h"

/* Hydra's override lexer in VALUE_MODE (hydra 1.3.2
 * hydra/grammar/OverrideLexer.g4): an unquoted value is made of letters,
 * digits, `_`, UNQUOTED_CHAR [/-\\+.$%*@?|], ':', blanks, ESC and
 * `${...}`; '=' '(' ')' '[' '{' and quotes are tokens of their own that
 * the parser refuses there; anything else (`~`, `!`, `#`, a non-ASCII
 * character...) matches no token. The messages are Hydra's
 * (core/override_parser/overrides_parser.py:83-99). `len`: the text
 * gathered so far. */
int ocp_hydra_char(ip_t *p, size_t len)
{
    unsigned char c = (unsigned char)p->s[p->i];
    bool top = *p->depth == 1;
    if (c < 0x80 && (isalnum(c) || strchr("_/-\\+.$%*@?|: \t", c) != NULL)) {
        return 0;
    }
    if (c == '=' || c == '(' || c == ')' || c == '[' || c == '{') {
        if (top) {
            return ocp_syn(p, "mismatched input '%c' expecting <EOF>", c);
        }
        return ocp_syn(p, "no viable alternative at input '%.*s'", (int)(p->i + 1), p->s);
    }
    if (c == '\'' || c == '"') {
        size_t e = p->i + 1, k = 0;
        for (; e < p->n && (p->s[e] != (char)c || k % 2 == 1); e++) {
            k = p->s[e] == '\\' ? k + 1 : 0;
        }
        if (e < p->n && len > 0) {
            return ocp_syn(p, "extraneous input '%.*s' expecting %s", (int)(e + 1 - p->i),
                           p->s + p->i, top ? "<EOF>" : "{',', ']', '}'}");
        }
        if (e < p->n) {
            return 0; /* a quoted value: the caller's */
        }
    }
    size_t col = p->origin ? (size_t)(p->s - p->origin) : 0;
    for (size_t j = 0; j < p->i; j++) {
        col += ((unsigned char)p->s[j] & 0xC0) != 0x80; /* characters, not bytes */
    }
    return ocp_syn(p, "LexerNoViableAltException: %s (column %zu: '%.*s')",
                   p->origin ? p->origin : p->s, col + 1,
                   (int)ocp_utf8_len(p->s + p->i, p->n - p->i), p->s + p->i);
}

/* The length of `NAME (` at s when a Hydra function call starts there
 * (OverrideParser.g4 function: ID POPEN, POPEN = WS? '(' WS?); 0 if none. */
size_t ocp_hy_function_at(const char *s, size_t n)
{
    size_t i = 0;
    if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_')) {
        return 0;
    }
    while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '-')) {
        i++;
    }
    while (i < n && (s[i] == ' ' || s[i] == '\t')) {
        i++;
    }
    return i < n && s[i] == '(' ? i + 1 : 0;
}

/* NAME(ARG, name=ARG...) in an override value (OverrideParser.g4 function),
 * evaluated by hydra_func.c; a sweep is refused as Hydra refuses it
 * without --multirun (config_loader_impl.py:64-83). */
int ocp_hydra_call(ip_t *p, val_t *out)
{
    size_t start = p->i,
           nlen = strspn(p->s + p->i, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU"
                                      "VWXYZ0123456789_-");
    char name[64], names_buf[HY_FN_MAX_ARGS][64], call[200];
    yt_node_t *args[HY_FN_MAX_ARGS];
    const char *names[HY_FN_MAX_ARGS];
    size_t n = 0;
    int rc = 0;
    snprintf(name, sizeof(name), "%.*s", (int)nlen, p->s + p->i);
    p->i += ocp_hy_function_at(p->s + p->i, p->n - p->i);
    ocp_skip_ws(p);
    bool kw = false;
    while (rc == 0 && p->i < p->n && p->s[p->i] != ')') {
        if (n > 0) {
            if (p->s[p->i] != ',') {
                rc = ocp_syn(p, "expected ',' or ')' at offset %zu", p->i);
                break;
            }
            p->i++;
            ocp_skip_ws(p);
        }
        if (n >= HY_FN_MAX_ARGS) {
            rc = ocp_why(p, "too many arguments");
            break;
        }
        /* argName: ID EQUAL (EQUAL is WS? '=' WS? in VALUE_MODE) */
        size_t k =
            strspn(p->s + p->i, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");
        size_t e = p->i + k;
        while (e < p->n && (p->s[e] == ' ' || p->s[e] == '\t')) {
            e++;
        }
        names[n] = NULL;
        if (k > 0 && k < sizeof(names_buf[0]) && !isdigit((unsigned char)p->s[p->i]) && e < p->n &&
            p->s[e] == '=') {
            snprintf(names_buf[n], sizeof(names_buf[n]), "%.*s", (int)k, p->s + p->i);
            names[n] = names_buf[n];
            p->i = e + 1;
            kw = true;
        } else if (kw) { /* overrides_visitor.py:225-226 */
            rc = ocp_why(p, "positional argument follows keyword argument");
            break;
        }
        val_t v = {0};
        p->in_call++;
        rc = p->ops->element(p, &v);
        p->in_call--;
        if (rc == 0 && (rc = ocp_adopt(p, &v, &args[n])) != 0) {
            ocp_val_drop(&v);
        }
        if (rc == 0) {
            n++;
        }
        ocp_skip_ws(p);
    }
    if (rc == 0 && p->i >= p->n) {
        rc = ocp_syn(p, "missing ')'");
    }
    hy_fn_result_t kind = HY_FN_VALUE;
    if (rc == 0) {
        p->i++;
        snprintf(call, sizeof(call), "%.*s", (int)(p->i - start), p->s + start);
        char msg[sizeof(p->why)] = "";
        rc = hy_fn_call(name, call, args, names, n, &kind, &out->node, msg, sizeof(msg));
        if (rc == PROFD_ECONFIG) {
            ocp_why(p, "%s", msg);
        } else if (rc != 0) {
            rc = ocp_oom(p);
        }
    }
    for (size_t i = 0; i < n; i++) {
        yt_free(args[i]);
    }
    if (rc == 0 && kind == HY_FN_SIMPLE_SWEEP) {
        return ocp_why(p,
                       "Ambiguous value for argument '%s': 1. To use it as a list, use "
                       "key=[value1,value2] 2. To use it as string, quote the value: "
                       "key=\\'value1,value2\\' 3. To sweep over it, add --multirun to your "
                       "command line",
                       p->origin ? p->origin : p->s);
    }
    if (rc == 0 && kind == HY_FN_SWEEP) {
        return ocp_why(p, "Sweep parameters '%s' requires --multirun",
                       p->origin ? p->origin : p->s);
    }
    if (rc == 0) {
        out->owned = true;
        ocp_set_origin_tree(out->node, p->origin);
    }
    return rc;
}
