// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Hydra's override grammar on values (hydra-core 1.3.2, 7ef3acab):
 * hydra/grammar/OverrideLexer.g4 and OverrideParser.g4, the visitor
 * hydra/core/override_parser/overrides_visitor.py, the messages of
 * hydra/core/override_parser/overrides_parser.py:78-99, the functions of
 * hydra/_internal/grammar/grammar_functions.py. Each expectation is what
 * Hydra 1.3.2 (with OmegaConf 2.3.0, ANTLR 4.9.3) gives for the same
 * override, read from that code; the file and line are named per case.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hydra.h"
#include "omegaconf.h"
#include "profd/errors.h"

/* The value `b=...` sets (override applied to `b: 0`); NULL on error
 * (err holds the message). The caller frees *root. */
static yt_node_t *value(const char *ov, yt_node_t **root, char *err, size_t errlen)
{
    char *o[] = {(char *)ov};
    static const char cfg[] = "b: 0\n";
    assert_int_equal(yt_parse("c.yaml", cfg, strlen(cfg), root, err, errlen), 0);
    if (hy_apply_overrides("c.yaml", root, o, 1, err, errlen) != 0) {
        return NULL;
    }
    return yt_map_get(*root, "b");
}

static void expect_str(const char *ov, const char *want)
{
    char err[512] = "";
    yt_node_t *root = NULL;
    yt_node_t *v = value(ov, &root, err, sizeof(err));
    if (v == NULL) {
        print_error("%s: %s\n", ov, err);
    }
    assert_non_null(v);
    assert_int_equal(v->type, YT_STR);
    assert_string_equal(v->text, want);
    yt_free(root);
}

static void expect_refused(const char *ov, const char *msg)
{
    char err[512] = "";
    yt_node_t *root = NULL;
    yt_node_t *v = value(ov, &root, err, sizeof(err));
    if (v != NULL) {
        print_error("%s: accepted\n", ov);
    }
    assert_null(v);
    if (strcmp(err, msg) != 0) {
        print_error(" got  %s\n want %s\n", err, msg);
    }
    assert_string_equal(err, msg);
    yt_free(root);
}

/*
 * In a quoted value only backslashes before a quote escape (QUOTED_VALUE,
 * OverrideLexer.g4:79-81; _unescape_quoted_string, overrides_visitor.py:
 * 303-345 with _ESC_QUOTED_STR of hydra/_internal/grammar/utils.py:16-19):
 * k backslashes and the quote give k/2 backslashes, then the quote when k
 * is odd; any other backslash stays.
 */
static void test_hydra_quoted_backslashes(void **state)
{
    (void)state;
    expect_str("b='a\\b'", "a\\b");
    expect_str("b='a\\\\b'", "a\\\\b"); /* kept: not before a quote */
    expect_str("b='it\\'s'", "it's");
    expect_str("b='x\\\\'", "x\\");       /* the closing quote's two: one */
    expect_str("b='a\\\\\\'b'", "a\\'b"); /* three and a quote: \' */
    expect_str("b=\"a\\\"b\"", "a\"b");
    expect_str("b=\"c:\\\\tmp\\\\x\"", "c:\\\\tmp\\\\x"); /* Windows-like paths kept */
    expect_str("b='${x}\\n'", "${x}\\n");
    /* unquoted: ESC pairs are un-escaped (overrides_visitor.py:256-262) */
    expect_str("b=a\\,b", "a,b");
    expect_str("b=a\\ b", "a b");
    expect_str("b=a\\b", "a\\b");
    char err[512] = "";
    yt_node_t *root = NULL;
    yt_node_t *v = value("b=[x,'y\\\\']", &root, err, sizeof(err));
    assert_non_null(v);
    assert_string_equal(v->items[1]->text, "y\\");
    yt_free(root);
}

/*
 * What the value lexer has no token for (OverrideLexer.g4:28-83: letters,
 * digits, `_`, UNQUOTED_CHAR [/\-\\+.$%*@?|], ':', blanks, ESC, quotes,
 * `${...}` and the punctuation of lists, dicts and functions) fails with
 * LexerNoViableAltException and the override, the caret under the
 * character (overrides_parser.py:83-86): here its column. Tokens the
 * parser cannot place are ANTLR's messages (overrides_parser.py:87-90).
 */
static void test_hydra_lexer_refusals(void **state)
{
    (void)state;
    expect_refused("b=~/x", "override 'b=~/x': LexerNoViableAltException: b=~/x (column 3: '~')");
    expect_refused("b=héllo",
                   "override 'b=héllo': LexerNoViableAltException: b=héllo (column 4: 'é')");
    expect_refused("b=a!b", "override 'b=a!b': LexerNoViableAltException: b=a!b (column 4: '!')");
    expect_refused("b=a#b", "override 'b=a#b': LexerNoViableAltException: b=a#b (column 4: '#')");
    expect_refused("b=[a,~b]",
                   "override 'b=[a,~b]': LexerNoViableAltException: b=[a,~b] (column 6: '~')");
    /* VALUE_EQUAL is a token: a second '=' ends the value */
    expect_refused("b=/tmp/k=v", "override 'b=/tmp/k=v': mismatched input '=' expecting <EOF>");
    expect_refused("b=a{b}", "override 'b=a{b}': mismatched input '{' expecting <EOF>");
    expect_refused("b=[a=b]", "override 'b=[a=b]': no viable alternative at input '[a='");
    /* QUOTED_VALUE is a primitive alone (OverrideParser.g4 primitive) */
    expect_refused("b=x'y'", "override 'b=x'y'': extraneous input ''y'' expecting <EOF>");
    expect_refused("b='y' ", "override 'b='y' ': extraneous input ' ' expecting <EOF>");
    /* accepted: inside quotes anything goes; ':' '@' '%' '|' '?' '*' unquoted */
    expect_str("b='héllo ~ k=v'", "héllo ~ k=v");
    expect_str("b=a:b@c%d|e?f*g", "a:b@c%d|e?f*g");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hydra_quoted_backslashes),
        cmocka_unit_test(test_hydra_lexer_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
