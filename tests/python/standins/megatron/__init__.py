# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for NVIDIA/Megatron-LM @ d98e8a64ddf34856e74b24714e3bedb2f5a39553: megatron/__init__.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
