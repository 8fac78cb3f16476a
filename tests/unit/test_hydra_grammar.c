// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Hydra's override grammar on values (hydra-core 1.3.2, 7ef3acab):
 * hydra/grammar/OverrideLexer.g4 and OverrideParser.g4, the visitor
 * hydra/core/override_parser/overrides_visitor.py, the messages of
 * hydra/core/override_parser/overrides_parser.py:78-99, the functions of
 * hydra/_internal/grammar/grammar_functions.py. Each expectation is what
 * Hydra 1.3.2 (with OmegaConf 2.3.0, ANTLR 4.9.3) gives for the same
 * override, read from that code (and run with tests/hydra_oracle/setup.sh);
 * the file and line are named per case.
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
#include "pd_skip.h"

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

static yt_node_t *typed_value(const char *ov, yt_type_t type, yt_node_t **root)
{
    char err[512] = "";
    yt_node_t *v = value(ov, root, err, sizeof(err));
    if (v == NULL) {
        print_error("%s: %s\n", ov, err);
    }
    assert_non_null(v);
    assert_int_equal(v->type, type);
    return v;
}

/* A scalar result: its type and value. */
static void expect_int(const char *ov, int64_t want)
{
    yt_node_t *root, *v = typed_value(ov, YT_INT, &root);
    assert_int_equal(v->v.i, want);
    yt_free(root);
}

static void expect_float(const char *ov, double want)
{
    yt_node_t *root, *v = typed_value(ov, YT_FLOAT, &root);
    assert_true(v->v.f == want);
    yt_free(root);
}

static void expect_bool(const char *ov, bool want)
{
    yt_node_t *root, *v = typed_value(ov, YT_BOOL, &root);
    assert_true(v->v.b == want);
    yt_free(root);
}

/*
 * Functions that are not sweeps are evaluated (overrides_visitor.py:
 * 206-238 visitFunction, hydra/_internal/grammar/functions.py:32-79 eval,
 * grammar_functions.py:69-163 casts, :273-296 sort): the results are
 * Python's int(), float(), str() (bools lower case, floats as repr) and
 * bool() (only true/false strings), sorted() for sort.
 */
static void test_hydra_functions(void **state)
{
    (void)state;
    yt_node_t *root, *v;
    expect_int("b=int(3.7)", 3);
    expect_int("b=int('5')", 5);
    expect_int("b=int(' 1_0 ')", 10);
    expect_int("b=int(true)", 1);
    expect_int("b=int(1e3)", 1000);
    expect_float("b=float(2)", 2.0);
    expect_float("b=float(' 1_0.5e1 ')", 105.0);
    expect_str("b=str(1.50)", "1.5");
    expect_str("b=str(1e3)", "1000.0");
    expect_str("b=str(1e-5)", "1e-05");
    expect_str("b=str(-0.0)", "-0.0");
    expect_str("b=str(1_000)", "1000");
    expect_str("b=str(true)", "true");
    expect_str("b=str(a b)", "a b");
    expect_str("b=str( 7 )", "7");
    expect_bool("b=bool(0)", false);
    expect_bool("b=bool('True')", true);
    expect_int("b=int(value=7)", 7);
    /* containers: element by element, dict values (grammar_functions.py:21-30) */
    v = typed_value("b=int(['1',2.5])", YT_SEQ, &root);
    assert_int_equal(v->n, 2);
    assert_int_equal(v->items[0]->v.i, 1);
    assert_int_equal(v->items[1]->v.i, 2);
    yt_free(root);
    v = typed_value("b=str({a: 1, c: [true]})", YT_MAP, &root);
    assert_string_equal(yt_map_get(v, "a")->text, "1");
    assert_int_equal(yt_map_get(v, "a")->type, YT_STR);
    assert_string_equal(yt_map_get(v, "c")->items[0]->text, "true");
    yt_free(root);
    v = typed_value("b=[int(1), str(2)]", YT_SEQ, &root);
    assert_int_equal(v->items[0]->type, YT_INT);
    assert_int_equal(v->items[1]->type, YT_STR);
    yt_free(root);
    /* sort: sorted(), reverse=; a single element is itself */
    v = typed_value("b=sort([3,1,2])", YT_SEQ, &root);
    assert_int_equal(v->items[0]->v.i, 1);
    assert_int_equal(v->items[2]->v.i, 3);
    yt_free(root);
    v = typed_value("b=sort(list=[b,a,c], reverse=true)", YT_SEQ, &root);
    assert_string_equal(v->items[0]->text, "c");
    assert_string_equal(v->items[2]->text, "a");
    yt_free(root);
    v = typed_value("b=sort([true,0,1.5,-1])", YT_SEQ, &root);
    assert_int_equal(v->items[0]->v.i, -1);
    assert_int_equal(v->items[1]->v.i, 0);
    assert_int_equal(v->items[2]->type, YT_BOOL);
    assert_int_equal(v->items[3]->type, YT_FLOAT);
    yt_free(root);
    expect_str("b=sort(x)", "x");
    /* shuffle of one element is that element in a list (:265-266) */
    v = typed_value("b=shuffle(a)", YT_SEQ, &root);
    assert_int_equal(v->n, 1);
    assert_string_equal(v->items[0]->text, "a");
    yt_free(root);
}

/* What Hydra raises, wrapped "TYPE while evaluating 'CALL': MESSAGE"
 * (overrides_visitor.py:233-238); sweeps need --multirun
 * (config_loader_impl.py:64-83); shuffle() of a list is random
 * (grammar_functions.py:262-264): refused. */
static void test_hydra_function_errors(void **state)
{
    (void)state;
    expect_refused("b=int(x)", "override 'b=int(x)': ValueError while evaluating 'int(x)': invalid "
                               "literal for int() with base 10: 'x'");
    expect_refused("b=int('1__0')",
                   "override 'b=int('1__0')': ValueError while evaluating "
                   "'int('1__0')': invalid literal for int() with base 10: '1__0'");
    expect_refused("b=float(0x1)", "override 'b=float(0x1)': ValueError while evaluating "
                                   "'float(0x1)': could not convert string to float: '0x1'");
    expect_refused("b=int(1.5e400)", "override 'b=int(1.5e400)': OverflowError while evaluating "
                                     "'int(1.5e400)': cannot convert float infinity to integer");
    expect_refused("b=str(null)",
                   "override 'b=str(null)': AssertionError while evaluating 'str(null)': ");
    expect_refused("b=bool('yes')", "override 'b=bool('yes')': ValueError while evaluating "
                                    "'bool('yes')': Cannot cast 'yes' to bool");
    expect_refused("b=int()", "override 'b=int()': TypeError while evaluating 'int()': No "
                              "positional args or value specified");
    expect_refused("b=int(value=1,2)",
                   "override 'b=int(value=1,2)': positional argument follows keyword argument");
    expect_refused("b=sort()",
                   "override 'b=sort()': ValueError while evaluating 'sort()': empty sort input");
    expect_refused("b=sort([b,1])", "override 'b=sort([b,1])': TypeError while evaluating "
                                    "'sort([b,1])': '<' not supported between instances of 'int' "
                                    "and 'str'");
    /* quoted items stay QuotedString objects inside a list */
    expect_refused("b=sort(['b','a'])",
                   "override 'b=sort(['b','a'])': TypeError while evaluating 'sort(['b','a'])': "
                   "'<' not supported between instances of 'QuotedString' and 'QuotedString'");
    expect_refused("b=sort(list=[2,1],reverse=1)",
                   "override 'b=sort(list=[2,1],reverse=1)': TypeError while evaluating "
                   "'sort(list=[2,1],reverse=1)': mismatch type argument reverse: int is "
                   "incompatible with bool");
    expect_refused("b=sort([1,2],x=1)", "override 'b=sort([1,2],x=1)': TypeError while "
                                        "evaluating 'sort([1,2],x=1)': got an unexpected keyword "
                                        "argument 'x'");
    expect_refused("b=json_str([1])",
                   "override 'b=json_str([1])': HydraException while evaluating "
                   "'json_str([1])': Unknown function 'json_str' Available: "
                   "bool,choice,float,glob,int,interval,range,shuffle,sort,str,tag");
    expect_refused("b=sort(3,1,2)",
                   "override 'b=sort(3,1,2)': Ambiguous value for argument 'b=sort(3,1,2)': 1. To "
                   "use it as a list, use key=[value1,value2] 2. To use it as string, quote the "
                   "value: key=\\'value1,value2\\' 3. To sweep over it, add --multirun to your "
                   "command line");
    expect_refused("b=range(1,3)",
                   "override 'b=range(1,3)': Sweep parameters 'b=range(1,3)' requires --multirun");
    expect_refused("b=shuffle([1,2])",
                   "override 'b=shuffle([1,2])': 'shuffle([1,2])' shuffles the list at random: the "
                   "order the job gets cannot be known before it runs");
}

int main(void)
{
    return PD_RUN_EACH(NULL, NULL, test_hydra_quoted_backslashes, test_hydra_lexer_refusals,
                       test_hydra_functions, test_hydra_function_errors);
}
