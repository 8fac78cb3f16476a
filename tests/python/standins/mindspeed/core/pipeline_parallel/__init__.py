# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed @ 028de58ca629d035185b00ff7d1eb7eff4f7fd48: mindspeed/core/pipeline_parallel/__init__.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
