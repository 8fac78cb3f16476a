# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for Ascend/MindSpeed-LLM @ c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91: mindspeed_llm/training/training.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""MindSpeed-LLM's MCore training loop and its profiler.

is_profile_enabled(): --profile and (--profile-ranks == [-1] or this rank
in it). get_profiler(): a torch_npu.profiler.profile with
schedule(wait=0, warmup=W, active=end-start, repeat=1, skip_first=start-iteration-2)
where W = 0 when start == iteration+1 (skip_first is then -1, which torch_npu
resets to 0) and 1 when start > iteration+1; start <= iteration raises; the
trace goes through tensorboard_trace_handler(--profile-save-path). train()
starts it before the loop and calls prof.step() at the END of every loop pass
(after train_step, iteration += 1, logging, evaluation, checkpointing and the
exit checks), and prof.stop() after the loop. So the captured iterations are
the logged (1-based) iterations start .. end-1, also after a resume
(`iteration` is the resumed one), each with the evaluation / checkpoint work
of its pass; --profile-step-end -1 gives a negative `active`, which torch_npu
resets to 1: only iteration `start` is captured. A pass that leaves the loop
(exit signal, duration, --exit-interval) skips its prof.step().

Stand-in notes: the torch_npu profiler is the stand-in in
tests/python/standins/npu; ranks come from torch.distributed when it is
initialized, else RANK. Each pass is recorded with standin_trace
("mindspeed", "train_step", iteration=<logged number>,
npu_action=<the profiler's action during the pass>)."""

import gc
import json
import sys
import time

import standin_trace
import torch_npu

from megatron.core import mpu
from megatron.training import get_args, get_timers
from megatron.training.initialize import initialize_megatron
from megatron.training.training import (
    build_train_valid_test_data_iterators,
    evaluate_and_print_results,
    print_datetime,
    save_checkpoint_and_time,
    setup_model_and_optimizer,
    train_step,
)
from megatron.training.utils import get_rank_safe, print_rank_0, print_rank_last

_TRAIN_START_TIME = time.time()


def _enable_npu_datadump_step_end():
    args = get_args()
    if not getattr(args, "npu_datadump", False):
        return
    from mindspeed.functional.npu_datadump.npu_datadump import MSTT_DEBUGGER
    MSTT_DEBUGGER.stop()
    MSTT_DEBUGGER.step()


def is_profile_enabled():
    args = get_args()
    return bool(args.profile) and (args.profile_ranks == [-1] or get_rank_safe() in args.profile_ranks)


def get_profiler():
    args = get_args()
    P = torch_npu.profiler
    levels = {"level_none": P.ProfilerLevel.Level_none, "level0": P.ProfilerLevel.Level0,
              "level1": P.ProfilerLevel.Level1, "level2": P.ProfilerLevel.Level2}
    exports = {"text": P.ExportType.Text, "db": P.ExportType.Db}
    if args.profile_level not in levels:
        raise ValueError(f"profiler_level only supports level0, 1, 2, and level_none, but gets {args.profile_level}")
    if args.profile_export_type not in exports:
        raise ValueError(f"profile_export_type only supports text or db, but gets {args.profile_export_type}")
    experimental_config = P._ExperimentalConfig(aic_metrics=P.AiCMetrics.PipeUtilization,
                                                profiler_level=levels[args.profile_level],
                                                export_type=exports[args.profile_export_type],
                                                data_simplification=args.profile_data_simplification)
    start, end, done = args.profile_step_start, args.profile_step_end, args.iteration
    if start <= done:
        raise AssertionError(f"When loading checkpoint, iteration will be loaded from checkpoint, "
                             f"profile_step_start should be greater than {done} but now it is {start}.")
    # skip_first is -1 when start is the next iteration (torch_npu resets it to 0)
    schedule = P.schedule(wait=0, warmup=0 if start == done + 1 else 1, active=end - start, repeat=1,
                          skip_first=start - done - 2)
    activities = [P.ProfilerActivity.NPU] + ([P.ProfilerActivity.CPU] if args.profile_with_cpu else [])
    prof = P.profile(with_stack=args.profile_with_stack, record_shapes=args.profile_record_shapes,
                     profile_memory=args.profile_with_memory, activities=activities, schedule=schedule,
                     on_trace_ready=P.tensorboard_trace_handler(args.profile_save_path),
                     experimental_config=experimental_config)
    prof.add_metadata_json("distributed_args", json.dumps({"rank": args.rank, "world_size": args.world_size}))
    return prof


def training_log(loss_dict, total_loss_dict, learning_rate, decoupled_learning_rate, iteration, loss_scale,
                 report_memory_flag, skipped_iter, grad_norm, params_norm, num_zeros_in_grad):
    args = get_args()
    if iteration % args.log_interval == 0:
        print_rank_last(f" [standin] iteration {iteration:8d}/{args.train_iters:8d} |")
    return report_memory_flag


def train(forward_step_func, model, optimizer, opt_param_scheduler, train_data_iterator, valid_data_iterator,
          process_non_loss_data_func, config):
    args = get_args()
    timers = get_timers()
    for model_module in model:
        if hasattr(model_module, "train"):
            model_module.train()
    total_loss_dict = {}
    iteration = args.iteration
    num_floating_point_operations_so_far = 0
    timers("interval-time", log_level=0).start(barrier=True)
    print_datetime("before the start of training step")
    report_memory_flag = True
    exit = False  # noqa: A001 - as in MindSpeed-LLM
    if args.manual_gc:
        gc.disable()
        gc.collect()

    if is_profile_enabled():
        prof = get_profiler()
        standin_trace.record("mindspeed", "prof.start")
        prof.start()

    start_iteration = iteration
    while iteration < args.train_iters:
        args.curr_iteration = iteration
        loss_dict, skipped_iter, should_checkpoint, should_exit, exit_code, grad_norm, num_zeros_in_grad = \
            train_step(forward_step_func, train_data_iterator, model, optimizer, opt_param_scheduler, config)
        _enable_npu_datadump_step_end()
        standin_trace.record("mindspeed", "train_step", iteration=iteration + 1, rank=get_rank_safe(),
                             npu_action=prof.current_action.name if is_profile_enabled() else None)
        if iteration == start_iteration and skipped_iter:
            start_iteration = iteration + 1
        iteration += 1
        batch_size = mpu.get_data_parallel_world_size() * args.micro_batch_size
        args.consumed_train_samples += batch_size
        loss_scale = optimizer.get_loss_scale().item()
        learning_rate = None
        decoupled_learning_rate = None
        for param_group in optimizer.param_groups:
            if param_group["is_decoupled_lr"]:
                decoupled_learning_rate = param_group["lr"]
            else:
                learning_rate = param_group["lr"]
        report_memory_flag = training_log(loss_dict, total_loss_dict, learning_rate, decoupled_learning_rate,
                                          iteration, loss_scale, report_memory_flag, skipped_iter, grad_norm, None,
                                          num_zeros_in_grad)
        # Evaluation
        if args.eval_interval and iteration % args.eval_interval == 0 and args.do_valid:
            evaluate_and_print_results(f"iteration {iteration}", forward_step_func, valid_data_iterator, model,
                                       iteration, process_non_loss_data_func, config, False)
        # Checkpointing
        saved_checkpoint = False
        if args.save and args.save_interval and iteration % args.save_interval == 0:
            save_checkpoint_and_time(iteration, model, optimizer, opt_param_scheduler,
                                     num_floating_point_operations_so_far, checkpointing_context=None)
            saved_checkpoint = True
        # Exiting based on duration
        if args.exit_duration_in_mins:
            train_time = (time.time() - _TRAIN_START_TIME) / 60.0
            if train_time > args.exit_duration_in_mins:
                if not saved_checkpoint:
                    save_checkpoint_and_time(iteration, model, optimizer, opt_param_scheduler,
                                             num_floating_point_operations_so_far, checkpointing_context=None)
                exit = True  # noqa: A001
                break
        # Exiting based on iterations
        if args.exit_interval and iteration % args.exit_interval == 0:
            if args.save and not saved_checkpoint:
                save_checkpoint_and_time(iteration, model, optimizer, opt_param_scheduler,
                                         num_floating_point_operations_so_far, checkpointing_context=None)
            exit = True  # noqa: A001
            break
        if args.manual_gc and args.manual_gc_interval != 0 and iteration % args.manual_gc_interval == 0:
            gc.collect()
        if is_profile_enabled():
            prof.step()
            standin_trace.record("mindspeed", "prof.step", iteration=iteration, step_num=prof.step_num)

    if is_profile_enabled():
        standin_trace.record("mindspeed", "prof.stop", iteration=iteration)
        prof.stop()
    if exit:
        sys.exit()
    return iteration, num_floating_point_operations_so_far


def pretrain(train_valid_test_dataset_provider, model_provider, model_type, forward_step_func,
             process_non_loss_data_func=None, extra_args_provider=None, args_defaults={}):
    initialize_megatron(extra_args_provider=extra_args_provider, args_defaults=args_defaults)
    args = get_args()
    model, optimizer, opt_param_scheduler = setup_model_and_optimizer(model_provider, model_type)
    # The checkpoint's iteration (--load); --standin-load-iteration stands in for it.
    args.iteration = int(getattr(args, "standin_load_iteration", 0) or 0)
    train_data_iterator, valid_data_iterator, _ = build_train_valid_test_data_iterators(
        train_valid_test_dataset_provider)
    print_rank_0("training ...")
    iteration = 0
    if args.do_train and args.train_iters > 0:
        iteration, _ = train(forward_step_func, model, optimizer, opt_param_scheduler, train_data_iterator,
                             valid_data_iterator, process_non_loss_data_func, None)
    print_datetime("after training is done")
    return iteration
