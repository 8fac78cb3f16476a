# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed-LLM @ c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91: mindspeed_llm/fsdp2/train/trainer.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""Trainer.train(): the FSDP2 backend's loop. Per update: micro-batches
(forward/backward), optimizer.step(), lr_scheduler.step(), zero_grad(),
global_step += 1, profiler_manager.step(), then loss reduction, logging
(logging_steps), checkpoint (save_steps) and the max_steps check. The
profiler is started before the epoch loop and stopped after it. Each update
is recorded with standin_trace ("mindspeed.fsdp2", "update",
global_step=<after the update>, npu_action=<the profiler's action>)."""

import standin_trace

from mindspeed_llm.fsdp2.utils.profiler import ProfilerConfig, ProfilerManager
from megatron.training.utils import get_rank_safe


class Trainer:
    def __init__(self, model, optimizer, lr_scheduler, train_dataloader, args, parallel_args=None,
                 optimization_args=None, data_args=None, ckpt_manager=None, monitor=None, tokenizer=None):
        self.model = model
        self.optimizer = optimizer
        self.lr_scheduler = lr_scheduler
        self.train_dataloader = train_dataloader
        self.args = args
        self.epoch = 0
        self.global_step = 0
        prof_config = ProfilerConfig(
            enabled=args.profile, profile_step_start=args.profile_step_start, profile_step_end=args.profile_step_end,
            profile_ranks=args.profile_ranks, profile_level=args.profile_level,
            profile_export_type=args.profile_export_type, profile_data_simplification=args.profile_data_simplification,
            profile_with_cpu=args.profile_with_cpu, profile_with_stack=args.profile_with_stack,
            profile_with_memory=args.profile_with_memory, profile_record_shapes=args.profile_record_shapes,
            profile_save_path=args.profile_save_path, current_rank=get_rank_safe())
        self.profiler_manager = ProfilerManager(prof_config)

    def training_step(self, inputs, num_items_in_batch):
        return self.model(inputs)

    def train(self, resume_from_checkpoint=None):
        args = self.args
        steps_in_epoch = len(self.train_dataloader)
        total_updates_per_epoch = steps_in_epoch // args.gradient_accumulation_steps + int(
            steps_in_epoch % args.gradient_accumulation_steps > 0)
        total_steps = args.max_steps if args.max_steps > 0 else int(total_updates_per_epoch * args.num_train_epochs)
        epochs_trained = 0
        steps_trained_in_current_epoch = 0
        if resume_from_checkpoint or args.standin_resume_global_step:
            self.global_step = int(args.standin_resume_global_step)
            epochs_trained = int(self.global_step // total_updates_per_epoch)
            steps_trained_in_current_epoch = self.global_step % total_updates_per_epoch
        if self.profiler_manager.profiler is not None:
            self.profiler_manager.start()
        for epoch in range(epochs_trained, int(args.num_train_epochs) or 1):
            self.epoch = epoch
            epoch_iterator = iter(self.train_dataloader)
            start_update_step = steps_trained_in_current_epoch if epoch == epochs_trained else 0
            for _ in range(start_update_step * args.gradient_accumulation_steps):
                next(epoch_iterator, None)
            for update_step in range(start_update_step, total_updates_per_epoch):
                batch_samples = [x for x in (next(epoch_iterator, None) for _ in range(args.gradient_accumulation_steps))
                                 if x is not None]
                for inputs in batch_samples:
                    self.training_step(inputs, len(batch_samples))
                self.optimizer.step()
                self.lr_scheduler.step()
                self.optimizer.zero_grad()
                self.global_step += 1
                prof = self.profiler_manager.profiler
                standin_trace.record("mindspeed.fsdp2", "update", global_step=self.global_step,
                                     npu_action=prof.current_action.name if prof is not None else None)
                if self.profiler_manager.profiler is not None:
                    self.profiler_manager.step()
                if args.save_steps > 0 and self.global_step % args.save_steps == 0:
                    standin_trace.record("mindspeed.fsdp2", "save_checkpoint", global_step=self.global_step)
                if self.global_step >= total_steps:
                    break
            steps_trained_in_current_epoch = 0
            if self.global_step >= total_steps:
                break
        if self.profiler_manager.profiler is not None:
            self.profiler_manager.stop()
