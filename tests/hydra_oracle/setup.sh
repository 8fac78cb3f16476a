#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
#
# Real Hydra 1.3.2 to check an expectation against (not run by the tests:
# it needs the sources and Java). Give checkouts of
#   facebookresearch/hydra at v1.3.2 (7ef3acab), omry/omegaconf at v2.3.0,
#   antlr/antlr4 at 4.9.3 (its Python runtime, runtime/Python3/src),
# and a folder to build in. The grammars are generated with the ANTLR jar
# Hydra ships (build_helpers/bin/antlr-4.9.3-complete.jar).
#
#   tests/hydra_oracle/setup.sh HYDRA OMEGACONF ANTLR4 OUT
#   OUT/hydra run.py compose CONFIG_DIR NAME OVERRIDE...   # hydra.compose()
#   OUT/hydra APP.py OVERRIDE...                            # an @hydra.main app
set -eu
[ $# -eq 4 ] || { sed -n '5,16p' "$0"; exit 2; }
hydra=$1 oc=$2 antlr=$3 out=$4
jar=$hydra/build_helpers/bin/antlr-4.9.3-complete.jar
mkdir -p "$out/src" "$out/stub/packaging"
cp -r "$hydra/hydra" "$oc/omegaconf" "$antlr/runtime/Python3/src/antlr4" "$out/src/"
(cd "$out/src/hydra/grammar" && java -jar "$jar" -Dlanguage=Python3 -o gen -visitor \
    OverrideLexer.g4 OverrideParser.g4 && touch gen/__init__.py)
(cd "$out/src/omegaconf/grammar" && java -jar "$jar" -Dlanguage=Python3 -o gen -visitor \
    OmegaConfGrammarLexer.g4 OmegaConfGrammarParser.g4 && touch gen/__init__.py)
# hydra/version.py imports packaging.version: a release-number stand-in
touch "$out/stub/packaging/__init__.py"
cat >"$out/stub/packaging/version.py" <<'PY'
import re
class Version:
    def __init__(self, s):
        self.s, self.t = s, tuple(int(x) for x in re.findall(r"\d+", s.split("dev")[0])[:3])
    def __lt__(self, o): return self.t < o.t
    def __le__(self, o): return self.t <= o.t
    def __gt__(self, o): return self.t > o.t
    def __ge__(self, o): return self.t >= o.t
    def __eq__(self, o): return self.t == o.t
    def __hash__(self): return hash(self.t)
    major = property(lambda self: self.t[0])
    minor = property(lambda self: self.t[1])
    micro = property(lambda self: self.t[2] if len(self.t) > 2 else 0)
    base_version = property(lambda self: ".".join(map(str, self.t)))
    def __str__(self): return self.s
PY
cp "$(dirname "$0")/run.py" "$out/run.py"
cat >"$out/hydra" <<SH
#!/bin/sh
PYTHONPATH=$out/src:$out/stub exec python3 "\$@"
SH
chmod +x "$out/hydra"
echo "ready: $out/hydra $out/run.py compose DIR NAME OVERRIDE..."
