# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""The launch-line corpus (tests/fixtures/launch): every case through
`profctl apply --dry-run --json`, compared with the windows the framework
would profile.

Each case runs in its working folder with its environment added (and the
caller's PYTHONPATH removed), @CWD@ replaced by that folder. Only the
fields a case lists are compared (tests/fixtures/launch/README.md): per
window first/last step, tool and mode, and the exact set of roles with the
listed keys of each (settings: the listed keys only); `warnings_contain`
strings must each appear in a warning; `no_window` and `error` reasons must
contain the listed strings, and an error's `defaults_chain` files must
appear in order. A mismatch prints the case, what was expected and what
was found.

usage: check_launch_corpus.py PROFCTL LAUNCH_DIR [CASE ...]
"""
import json
import os
import subprocess
import sys


def run(profctl, root, case):
    cwd = os.path.realpath(os.path.join(root, case["cwd"]))
    argv = [a.replace("@CWD@", cwd) for a in case["argv"]]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(case.get("env", {}))
    cmd = [profctl, "apply", "--dry-run", "--json"]
    if argv[0].endswith((".yaml", ".yml")):
        cmd += argv
    else:
        cmd += ["--"] + argv
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    doc = None
    if p.returncode == 0:
        try:
            doc = json.loads(p.stdout)
        except ValueError:
            doc = None
    return p, doc


def all_warnings(doc, stderr):
    out = list(doc.get("warnings", [])) if doc else []
    for w in (doc or {}).get("windows", []):
        out += w.get("warnings", [])
    out += [l for l in stderr.splitlines() if "warning" in l]
    return out


def contains_all(text, wanted):
    if isinstance(wanted, str):
        wanted = [wanted]
    return [w for w in wanted if w not in text]


def in_order(text, chain):
    pos = 0
    for item in chain:
        at = text.find(item, pos)
        if at < 0:
            return item
        pos = at + len(item)
    return None


def compare_role(name, want, got, problems):
    for key, value in want.items():
        if key == "settings":
            have = got.get("settings", {})
            for sk, sv in value.items():
                if have.get(sk) != sv:
                    problems.append(f"role {name} settings.{sk}: expected {json.dumps(sv)}, "
                                    f"found {json.dumps(have.get(sk))}")
        elif got.get(key) != value:
            problems.append(f"role {name} {key}: expected {json.dumps(value)}, "
                            f"found {json.dumps(got.get(key))}")


def compare_windows(want, got, problems):
    if len(want) != len(got):
        problems.append(f"{len(want)} window(s) expected, found {len(got)}")
        return
    for i, (w, g) in enumerate(zip(want, got)):
        for key in ("first_step", "last_step", "tool", "mode"):
            if key in w and w[key] != g.get(key):
                problems.append(f"window {i} {key}: expected {json.dumps(w[key])}, "
                                f"found {json.dumps(g.get(key))}")
        roles_w, roles_g = w.get("roles", {}), g.get("roles", {})
        if set(roles_w) != set(roles_g):
            problems.append(f"window {i} roles: expected {sorted(roles_w)}, "
                            f"found {sorted(roles_g)}")
            continue
        for name, rw in roles_w.items():
            compare_role(f"{i}.{name}", rw, roles_g[name], problems)


def check(profctl, root, name, case):
    exp = case["expect"]
    p, doc = run(profctl, root, case)
    problems = []
    result = exp["result"]
    if result == "error":
        if p.returncode == 0:
            problems.append("expected an error, the command succeeded")
        missing = contains_all(p.stderr, exp.get("reason_contains", []))
        if missing:
            problems.append(f"reason lacks {missing}")
        gap = in_order(p.stderr, exp.get("defaults_chain", []))
        if gap is not None:
            problems.append(f"defaults chain: '{gap}' missing or out of order")
    elif doc is None:
        problems.append(f"exit status {p.returncode}, no JSON document")
    elif doc.get("result") != result:
        problems.append(f"result: expected {result}, found {doc.get('result')}")
    elif result == "no_window":
        missing = contains_all(doc.get("reason", ""), exp.get("reason_contains", []))
        if missing:
            problems.append(f"reason lacks {missing}")
    else:
        compare_windows(exp.get("windows", []), doc.get("windows", []), problems)
    if result != "error":
        warnings = "\n".join(all_warnings(doc, p.stderr))
        missing = contains_all(warnings, exp.get("warnings_contain", []))
        if missing:
            problems.append(f"no warning contains {missing}")
    if problems:
        print(f"FAIL {name}")
        for pr in problems:
            print(f"  {pr}")
        print(f"  expected: {json.dumps(exp, sort_keys=True)}")
        found = doc if doc is not None else {"exit": p.returncode, "stderr": p.stderr.strip()}
        print(f"  found:    {json.dumps(found, sort_keys=True)}")
        return False
    print(f"ok   {name}")
    return True


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    profctl, root = os.path.realpath(sys.argv[1]), sys.argv[2]
    names = sys.argv[3:] or sorted(f[:-5] for f in os.listdir(os.path.join(root, "cases"))
                                   if f.endswith(".json"))
    passed = 0
    for name in names:
        with open(os.path.join(root, "cases", name + ".json")) as f:
            case = json.load(f)
        passed += check(profctl, root, name, case)
    print(f"{passed}/{len(names)} cases pass")
    return 0 if passed == len(names) else 1


if __name__ == "__main__":
    sys.exit(main())
