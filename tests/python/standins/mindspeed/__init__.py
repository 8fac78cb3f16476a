# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed @ 030ccc9c43423ed7fdfadb6c79f3d63ad36aa411: mindspeed/__init__.py
# Written for profd's tests; only the feature base class MindSpeed-LLM's profiling feature derives from.
