# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed-LLM @ c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91: mindspeed_llm/fsdp2/utils/arguments.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""TrainingArguments (the fields the stand-in loop reads, profiling ones
as in MindSpeed-LLM) and fsdp2_parse_args: an optional YAML file first (its
`training:` section; needs PyYAML), then `--training.<field> <value>`
arguments, which win."""

import argparse
import dataclasses
import json
import sys
from dataclasses import dataclass, field
from typing import List, Optional


@dataclass
class TrainingArguments:
    output_dir: Optional[str] = None
    max_steps: int = -1
    num_train_epochs: float = 1.0
    gradient_accumulation_steps: int = 1
    per_device_train_batch_size: int = 1
    logging_steps: int = 100
    save_steps: int = 0
    resume_from_checkpoint: Optional[str] = None
    standin_resume_global_step: int = 0  # stand-in: the global step of the checkpoint resumed from
    standin_samples: int = 64  # stand-in: samples in the dataset
    profile: bool = False
    profile_step_start: int = 0
    profile_step_end: int = -1
    profile_ranks: List[int] = field(default_factory=lambda: [-1])
    profile_level: str = "level0"
    profile_export_type: str = "text"
    profile_data_simplification: bool = False
    profile_with_cpu: bool = False
    profile_with_stack: bool = False
    profile_with_memory: bool = False
    profile_record_shapes: bool = False
    profile_save_path: str = "./profile"

    def __post_init__(self):
        if self.output_dir is None:
            raise ValueError("`output_dir` must be specified.")
        if self.profile:
            if self.profile_step_start < 0:
                raise ValueError("`profile_step_start` must be >= 0")
            if self.profile_step_end != -1 and self.profile_step_end <= self.profile_step_start:
                raise ValueError("`profile_step_end` must be > profile_step_start or -1")


def _string_to_bool(value):
    if isinstance(value, bool):
        return value
    if value.lower() in ("yes", "true", "t", "y", "1"):
        return True
    if value.lower() in ("no", "false", "f", "n", "0"):
        return False
    raise argparse.ArgumentTypeError(f"Truthy value expected: got {value}")


def _create_argument_parser(rootclass):
    parser = argparse.ArgumentParser()
    for sub in dataclasses.fields(rootclass):
        for f in dataclasses.fields(sub.type):
            name = f"--{sub.name}.{f.name}"
            if f.type in (bool, "bool"):
                parser.add_argument(name, type=_string_to_bool, nargs="?", const=True, default=argparse.SUPPRESS)
            elif str(f.type).startswith(("List", "typing.List")):
                parser.add_argument(name, type=int, nargs="+", default=argparse.SUPPRESS)
            elif f.type in (int, "int"):
                parser.add_argument(name, type=int, default=argparse.SUPPRESS)
            elif f.type in (float, "float"):
                parser.add_argument(name, type=float, default=argparse.SUPPRESS)
            else:
                parser.add_argument(name, type=str, default=argparse.SUPPRESS)
    return parser


def _merge_yaml_into_cmd_args(cmd_args):
    if not cmd_args or not cmd_args[0].endswith((".yaml", ".yml")):
        return cmd_args
    import yaml

    with open(cmd_args[0]) as f:
        config = yaml.safe_load(f) or {}
    out = []
    for section, values in config.items():
        for k, v in (values or {}).items():
            flag = f"--{section}.{k}"
            if flag in cmd_args:
                continue
            if isinstance(v, list):
                out += [flag] + [str(x) for x in v]
            elif isinstance(v, (dict,)):
                out += [flag, json.dumps(v)]
            else:
                out += [flag, str(v)]
    return out + cmd_args[1:]


def fsdp2_parse_args(rootclass):
    parser = _create_argument_parser(rootclass)
    cmd_args = sys.argv[1:]
    if not cmd_args:
        raise ValueError("No arguments provided.")
    args, _ = parser.parse_known_args(_merge_yaml_into_cmd_args(cmd_args))
    kwargs = {}
    for sub in dataclasses.fields(rootclass):
        prefix = sub.name + "."
        kwargs[sub.name] = sub.type(**{k[len(prefix):]: v for k, v in vars(args).items()
                                                  if k.startswith(prefix)})
    return rootclass(**kwargs)
