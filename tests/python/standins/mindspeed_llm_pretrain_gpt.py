# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed-LLM @ c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91: pretrain_gpt.py (the launcher; module name mindspeed_llm_pretrain_gpt here)
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""MindSpeed-LLM's GPT pretraining launcher (MCore backend):
`python3 -m mindspeed_llm_pretrain_gpt --train-iters 8 --profile
--profile-step-start 3 --profile-step-end 5 --profile-ranks -1
--profile-save-path DIR` with tests/python/standins and
tests/python/standins/npu (the torch_npu stand-in) on PYTHONPATH.
--standin-load-iteration N starts as if a checkpoint at iteration N had been
loaded. Model and data as in megatron_pretrain_gpt."""

from mindspeed_llm import megatron_adaptor  # noqa: F401  (first, as in MindSpeed-LLM)

from megatron.core.enums import ModelType
from megatron_pretrain_gpt import extra_args_provider, forward_step, model_provider, train_valid_test_datasets_provider
from mindspeed_llm.training.training import pretrain

if __name__ == "__main__":
    pretrain(train_valid_test_datasets_provider, model_provider, ModelType.encoder_or_decoder, forward_step,
             extra_args_provider=extra_args_provider)
