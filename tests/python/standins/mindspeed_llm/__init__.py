# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed-LLM @ c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91: mindspeed_llm/__init__.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""`import mindspeed_llm` (the launchers' first import: `from mindspeed_llm
import megatron_adaptor`) applies MindSpeed's patches on the MCore backend."""

import os

backend = os.environ.get("TRAINING_BACKEND", "mcore").lower()
if backend == "mcore":
    from mindspeed_llm.tasks import megatron_adaptor_v2 as megatron_adaptor  # noqa: F401
