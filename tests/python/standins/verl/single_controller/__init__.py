# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9: verl/single_controller/__init__.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
