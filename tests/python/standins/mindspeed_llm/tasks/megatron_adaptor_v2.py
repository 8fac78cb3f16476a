# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed-LLM @ c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91: mindspeed_llm/tasks/megatron_adaptor_v2.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""FeatureAdaptor.execute(), run at import: MindSpeedFeaturesManager's
patches removed, the features' arguments parsed from the command line
(parse_known_args; unknown `--key value` pairs set on the same namespace),
then the pre patches and the patches registered and applied
(MindSpeedFeaturesManager.apply_features_pre_patches / apply_features_patches,
each ending in MindSpeedPatchesManager.apply_patches()).

Stand-in only (stands for the version pin, not for code of this file):
MindSpeed-LLM runs on Megatron core_v0.12.1 (release notes), the Megatron
stand-in follows Megatron-LM main. Before anything is patched, as the
pinned Megatron would have them: --profile-ranks defaults to [0] (one or
more values), and train_step(forward_step_func, data_iterator, model,
optimizer, opt_param_scheduler, config) returns 7 values (main's takes
forward_backward_func and returns 8)."""

import argparse
import os
import sys

os.environ["USE_TF"] = "FALSE"

from mindspeed.features_manager.features_manager import MindSpeedFeaturesManager  # noqa: E402

import mindspeed_llm.features_manager  # noqa: E402,F401  (sets the features list, as `import mindspeed_llm...` does)


def add_args(args, key, value):
    if key is not None:
        key = key[2:].replace("-", "_")
        if value is None:
            value = True
        elif len(value) == 1:
            value = value[0]
        setattr(args, key, value)


def parser_unknown_args(args, unknown):
    key = value = None
    for item in unknown:
        if item.startswith("--"):
            add_args(args, key, value)
            key, value = item, None
        else:
            value = [item] if value is None else value + [item]
    add_args(args, key, value)


class FeatureAdaptor:
    _args = None

    @classmethod
    def get_mindspeed_llm_args(cls):
        if cls._args is not None:
            return cls._args
        from mindspeed_llm.training.arguments import process_args_v2
        parser = argparse.ArgumentParser(description="MindSpeed-LLM Arguments", allow_abbrev=False)
        _args, unknown = process_args_v2(parser).parse_known_args()
        parser_unknown_args(_args, unknown)
        return _args

    @classmethod
    def execute(cls):
        MindSpeedFeaturesManager.remove_patches()
        args = FeatureAdaptor.get_mindspeed_llm_args()
        MindSpeedFeaturesManager.apply_features_pre_patches(args)
        MindSpeedFeaturesManager.apply_features_patches(args)
        if "transformer_engine" in sys.modules:
            del sys.modules["transformer_engine"]


# --- the core_v0.12.1 pin (stand-in only; see the module's docstring) ---
import megatron.training.arguments as _arguments  # noqa: E402
import megatron.training.training as _training  # noqa: E402

_main_add_profiling_args = _arguments._add_profiling_args
_main_train_step = _training.train_step


def _add_profiling_args_v0_12(parser):
    _main_add_profiling_args(parser)
    for action in parser._actions:
        if "--profile-ranks" in action.option_strings:
            action.default = [0]
            action.nargs = "+"
    return parser


def megatron_train_step_v0_12(forward_step_func, data_iterator, model, optimizer, opt_param_scheduler, config):
    from megatron.core.pipeline_parallel import get_forward_backward_func
    return _main_train_step(forward_step_func, data_iterator, model, optimizer, opt_param_scheduler, config,
                            get_forward_backward_func())[:7]


_arguments._add_profiling_args = _add_profiling_args_v0_12
_training.train_step = megatron_train_step_v0_12
# --- end of the pin ---

FeatureAdaptor.execute()
