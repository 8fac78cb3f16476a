# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""pip install of the Python client: `pip install client/python` (offline:
`pip install --no-build-isolation client/python` with Debian's
python3-setuptools and python3-wheel), or `pip wheel client/python`.

The wheel carries everything the package needs from this tree: libprofd
(built here with CMake, next to the package's files, where profd/_native.py
looks first: the wheel is relocatable) and profd._speedups for the
interpreter that builds it; the drop-in's profd-auto.pth goes to the root of
site-packages, where Python reads it. libprofd's own dependencies (libnng,
libcjson) come from the system, as for the Debian package libprofd0.

Build requirements: cmake, a C compiler, and the -dev packages of
deploy/deps.sh; PROFD_CMAKE_ARGS adds CMake arguments."""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))  # the profd tree: client/python/../..


def version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(r"project\(profd VERSION ([0-9.]+)", f.read()).group(1)


class BinaryDistribution(Distribution):
    """A platform wheel: it holds libprofd and a CPython extension."""

    def has_ext_modules(self):
        return True


class BuildWithLibrary(build_py):
    """The package's Python files, plus _version.py, libprofd.so and
    profd._speedups built by CMake, plus profd-auto.pth at the root."""

    def run(self):
        super().run()
        out = os.path.join(self.build_lib, "profd")
        with open(os.path.join(out, "_version.py"), "w") as f:
            f.write('"""The version of profd, from the CMake project\'s version."""\n\n'
                    '__version__ = "%s"\n' % version())
        build = os.path.abspath(os.path.join(self.build_lib, "..", "profd-cmake"))
        cmake = ["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DPROFD_TESTS=OFF",
                 "-DPROFD_PYTHON_EXECUTABLE=" + sys.executable]
        cmake += shlex.split(os.environ.get("PROFD_CMAKE_ARGS", ""))
        subprocess.check_call(cmake, stdout=subprocess.DEVNULL)
        jobs = str(os.cpu_count() or 1)
        # profd_python_package: the package as the build tree has it, with
        # libprofd.so (no soname version) next to it
        subprocess.check_call(["cmake", "--build", build, "-j", jobs, "--target", "profd_python_package"])
        pkg = os.path.join(build, "python", "profd")
        shutil.copyfile(os.path.join(pkg, "libprofd.so"), os.path.join(out, "libprofd.so"))  # _native's first
        built = glob.glob(os.path.join(pkg, "_speedups.*.so"))
        if not built:
            raise SystemExit("profd._speedups was not built: the Python headers of %s are missing "
                             "(Debian: python3-dev)" % sys.executable)
        for so in built:
            shutil.copyfile(so, os.path.join(out, os.path.basename(so)))
        shutil.copyfile(os.path.join(HERE, "profd-auto.pth"), os.path.join(self.build_lib, "profd-auto.pth"))


setup(
    name="profd",
    version=version(),
    description="profd client (ctypes over libprofd) and drop-in integrations",
    license="Apache-2.0",
    classifiers=["License :: OSI Approved :: Apache Software License", "Operating System :: POSIX :: Linux"],
    python_requires=">=3.9",
    packages=["profd", "profd.integrations"],
    exclude_package_data={"profd": ["_speedups.c", "_version.py.in"]},
    entry_points={"verl.plugins": ["profd = profd.integrations.verl"]},
    distclass=BinaryDistribution,
    cmdclass={"build_py": BuildWithLibrary},
    zip_safe=False,
)
