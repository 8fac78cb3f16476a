# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/utils/import_utils.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.

import importlib


def import_external_libs(external_libs=None):
    if external_libs is None:
        return
    if not isinstance(external_libs, list):
        external_libs = [external_libs]
    for external_lib in external_libs:
        importlib.import_module(external_lib)
