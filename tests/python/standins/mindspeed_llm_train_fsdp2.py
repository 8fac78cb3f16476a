# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed-LLM @ c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91: train_fsdp2.py (the launcher; module name mindspeed_llm_train_fsdp2 here)
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""MindSpeed-LLM's FSDP2 launcher: `python3 -m mindspeed_llm_train_fsdp2
[config.yaml] --training.output_dir D --training.max_steps 8
--training.profile true --training.profile_step_start 3
--training.profile_step_end 5` (tests/python/standins and .../npu on
PYTHONPATH). The model is a torch Linear when torch imports (its optimizer
steps are real torch optimizer steps), a counter otherwise."""

from dataclasses import dataclass, field

try:
    import torch_npu  # noqa: F401
except ImportError:
    pass

from mindspeed_llm.fsdp2.train.trainer import Trainer
from mindspeed_llm.fsdp2.utils.arguments import TrainingArguments, fsdp2_parse_args


@dataclass
class Arguments:
    training: TrainingArguments = field(default_factory=TrainingArguments)


class _Counter:
    def __init__(self):
        self.param_groups = [{"lr": 0.01}]

    def step(self):
        pass

    def zero_grad(self):
        pass


def _build(args):
    try:
        import torch
    except ImportError:
        return (lambda x: x), _Counter(), _Counter()
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 16)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0)

    def run(x):
        loss = model(torch.full((1, 16), float(x))).pow(2).mean()
        loss.backward()
        return loss

    return run, optimizer, scheduler


def main():
    root = fsdp2_parse_args(Arguments)
    args = root.training
    model, optimizer, scheduler = _build(args)
    dataloader = list(range(args.standin_samples))
    trainer = Trainer(model=model, optimizer=optimizer, lr_scheduler=scheduler, train_dataloader=dataloader,
                      args=args)
    trainer.train(resume_from_checkpoint=args.resume_from_checkpoint)


if __name__ == "__main__":
    main()
