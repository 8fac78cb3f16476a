# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed-LLM @ c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91: mindspeed_llm/tasks/__init__.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
