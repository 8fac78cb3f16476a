# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""A Hydra program pip-installed in an interpreter's site-packages, launched
from another folder (no --python-path): profctl finds the module where that
interpreter looks, its sys.path, as `python -m` does; torchrun's interpreter
is the one its `#!` line names; a module that is nowhere gets Python's
"No module named" refusal (CPython Lib/runpy.py:_get_module_details), not
a complaint about Hydra's flags.

A virtual environment (python3 -m venv --without-pip) gets verl's config
tree of the launch corpus (tests/fixtures/launch/trees/verl, verl-project
1dda039b) in its site-packages; the corpus case verl_profile_torch is run
with that environment's python from an empty folder and must give the
windows the case expects (written from verl's code, see its derivation).

usage: check_launch_site.py PROFCTL LAUNCH_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_launch_corpus as corpus  # noqa: E402


def main():
    profctl, root = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
    with open(os.path.join(root, "cases", "verl_profile_torch.json")) as f:
        base = json.load(f)
    assert base["argv"][:3] == ["python3", "-m", "verl.trainer.main_ppo"]
    tmp = tempfile.mkdtemp(prefix="profd-site-")
    ok = True
    try:
        venv = os.path.join(tmp, "venv")
        subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", venv], check=True)
        py = os.path.join(venv, "bin", "python")
        site = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              check=True, capture_output=True, text=True).stdout.strip()
        shutil.copytree(os.path.join(root, "trees", "verl", "verl"), os.path.join(site, "verl"))
        for d in ("verl", "verl/trainer", "verl/trainer/config"):
            open(os.path.join(site, d, "__init__.py"), "w").close()
        elsewhere = os.path.join(tmp, "job")
        os.mkdir(elsewhere)
        bindir = os.path.join(tmp, "bin")
        os.mkdir(bindir)
        with open(os.path.join(bindir, "torchrun"), "w") as f:
            f.write(f"#!{py}\nimport sys\nsys.exit(1)\n")
        os.chmod(os.path.join(bindir, "torchrun"), 0o755)
        path_env = bindir + ":" + os.environ.get("PATH", "/usr/bin:/bin")

        cases = {}
        c = dict(base, cwd=elsewhere, argv=[py] + base["argv"][1:])
        cases["site_packages_python_m"] = c
        c = dict(base, cwd=elsewhere, env=dict(base["env"], PATH=path_env),
                 argv=["torchrun", "--nproc_per_node=8", "-m"] + base["argv"][2:])
        cases["site_packages_torchrun_shebang"] = c
        c = dict(base, cwd=elsewhere, argv=[py, "-m", "verl.trainer.main_nope", "a=1"],
                 expect={"result": "error",
                         "reason_contains": ["module not found", "No module named "
                                             "'verl.trainer.main_nope'", py + "'s sys.path"]})
        cases["site_packages_unknown_module"] = c
        c = dict(base, cwd=elsewhere, argv=["python3", "-m", "nowhere_at_all.main"],
                 expect={"result": "error",
                         "reason_contains": ["module not found", "No module named "
                                             "'nowhere_at_all.main'"]})
        cases["unknown_module_default_python"] = c
        for name, case in cases.items():
            ok &= corpus.check(profctl, "/", name, case)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
