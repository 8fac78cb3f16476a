# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for NVIDIA/Megatron-LM @ d98e8a64ddf34856e74b24714e3bedb2f5a39553: megatron/training/training.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""pretrain() and the training loop, with Megatron-LM's profiling as on main.

train(): before the loop, when --profile, this rank is selected
(--profile-ranks empty = all) and --use-pytorch-profiler, a torch.profiler
with schedule(wait=max(start-1, 0), warmup=1 if start > 0 else 0,
active=end-start, repeat=1) is built and started; its trace goes to
<tensorboard-dir>/../torch_profile/rank-<R>.json.gz. At the top of every loop
pass (`iteration` = iterations done so far):
  --nvtx-ranges and iteration == start: NVTX ranges on
  torch profiler: prof.step()
  otherwise, iteration == start: cudaProfilerStart() (+ emit_nvtx with --record-shapes)
then train_step(), iteration += 1, logging, evaluation, and
post_training_step_callbacks(), which at iteration == end stops the torch
profiler (prof.stop()) or calls cudaProfilerStop(). So with the CUDA
profiler API (nsys) the iterations with 0-based index in [start, end) are
captured - logged (1-based) as start+1 .. end; with the torch profiler the
schedule records the passes whose prof.step() count is in [start, end-1],
i.e. logged iterations start .. end-1 on a fresh run (the step count
restarts at 0 when training resumes, the start/stop comparisons use the
resumed iteration). Nothing stops the profiler after the loop.

Stand-in notes: no CUDA here, so cudaProfilerStart/Stop are recorded and
called only when CUDA is available; torch is needed only for
--use-pytorch-profiler and a torch model. Each pass is recorded with
standin_trace: ("megatron", "train_step", iteration=<logged number>,
torch_action=<the torch profiler's action during the step>, cuda_range=<inside
cudaProfilerStart/Stop>)."""

import os
import sys

import standin_trace

from megatron.core.optimizer import get_megatron_optimizer
from megatron.core.pipeline_parallel import get_forward_backward_func
from megatron.training.global_vars import get_args, get_timers
from megatron.training.initialize import initialize_megatron
from megatron.training.utils import get_rank_safe, print_rank_last

_cuda_range = {"on": False}


def print_datetime(string):
    """Megatron prints '[<string>] datetime: ...' on rank 0; the stand-in stays quiet."""


def configure_nvtx_profiling(enabled: bool):
    standin_trace.record("megatron", "configure_nvtx_profiling", enabled=enabled)


def _cuda_profiler(start: bool, iteration):
    standin_trace.record("megatron", "cudaProfilerStart" if start else "cudaProfilerStop", iteration=iteration)
    _cuda_range["on"] = start
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        cudart = torch.cuda.cudart()
        torch.cuda.check_error(cudart.cudaProfilerStart() if start else cudart.cudaProfilerStop())


def get_model(model_provider_func, model_type=None, wrap_with_ddp=True):
    return [model_provider_func(pre_process=True, post_process=True)]


def setup_model_and_optimizer(model_provider_func, model_type, checkpointing_context=None):
    args = get_args()
    model = get_model(model_provider_func, model_type)
    optimizer = get_megatron_optimizer(args, model)
    opt_param_scheduler = None
    return model, optimizer, opt_param_scheduler


def build_train_valid_test_data_iterators(build_train_valid_test_datasets_provider):
    args = get_args()
    train_ds, valid_ds, test_ds = build_train_valid_test_datasets_provider([args.train_iters, 0, 0])

    def cycle(ds):
        while True:
            for x in ds:
                yield x

    return cycle(train_ds), None, None


def train_step(forward_step_func, data_iterator, model, optimizer, opt_param_scheduler, config,
               forward_backward_func, iteration=None, pg_collection=None, p2p_communicator=None):
    """Single training step: returns (loss_dict, skipped_iter, should_checkpoint, should_exit,
    exit_code, grad_norm, num_zeros_in_grad, max_attention_logit)."""
    args = get_args()
    for m in model:
        if hasattr(m, "zero_grad"):
            m.zero_grad()
    losses_reduced = forward_backward_func(forward_step_func=forward_step_func, data_iterator=data_iterator,
                                           model=model, num_microbatches=1, seq_length=args.seq_length,
                                           micro_batch_size=args.micro_batch_size, forward_only=False)
    update_successful, grad_norm, num_zeros_in_grad = optimizer.step()
    skipped_iter = 0 if update_successful else 1
    loss_dict = {}
    for d in losses_reduced:
        for k, v in d.items():
            loss_dict[k] = loss_dict.get(k, 0.0) + float(v)
    return loss_dict, skipped_iter, False, False, 0, grad_norm, num_zeros_in_grad, None


def training_log(loss_dict, total_loss_dict, learning_rate, iteration, loss_scale, report_memory_flag,
                 skipped_iter, grad_norm, params_norm, num_zeros_in_grad, max_attention_logit=None):
    args = get_args()
    if iteration % args.log_interval == 0:
        print_rank_last(f" [standin] iteration {iteration:8d}/{args.train_iters:8d} |")
    return report_memory_flag


def evaluate_and_print_results(prefix, forward_step_func, data_iterator, model, iteration,
                               process_non_loss_data_func, config, verbose=False, write_to_tensorboard=True):
    standin_trace.record("megatron", "evaluate", iteration=iteration)


def save_checkpoint_and_time(iteration, model, optimizer, opt_param_scheduler, num_floating_point_operations_so_far,
                             checkpointing_context, non_persistent_ckpt=False, train_data_iterator=None):
    standin_trace.record("megatron", "save_checkpoint", iteration=iteration)


def post_training_step_callbacks(model, optimizer, opt_param_scheduler, iteration, prof,
                                 num_floating_point_operations_since_last_log_event, nsys_nvtx_context=None):
    args = get_args()
    # Profiling.
    if (args.profile and iteration == args.profile_step_end
            and (len(args.profile_ranks) == 0 or get_rank_safe() in args.profile_ranks)):
        if args.nvtx_ranges:
            configure_nvtx_profiling(False)
        if args.use_pytorch_profiler:
            assert prof is not None
            standin_trace.record("megatron", "prof.stop", iteration=iteration)
            prof.stop()
            if getattr(prof, "execution_trace_observer", None) is not None:
                prof.execution_trace_observer.unregister_callback()
        else:
            _cuda_profiler(False, iteration)
            if nsys_nvtx_context is not None:
                nsys_nvtx_context.__exit__(None, None, None)
    if args.manual_gc and args.manual_gc_interval != 0 and iteration % args.manual_gc_interval == 0:
        import gc

        gc.collect()
    return num_floating_point_operations_since_last_log_event


def checkpoint_and_decide_exit(model, optimizer, opt_param_scheduler, iteration, num_floating_point_operations_so_far,
                               checkpointing_context, train_data_iterator):
    args = get_args()
    if args.save and args.save_interval and iteration % args.save_interval == 0:
        save_checkpoint_and_time(iteration, model, optimizer, opt_param_scheduler,
                                 num_floating_point_operations_so_far, checkpointing_context)
    if args.exit_interval and iteration % args.exit_interval == 0:
        return True
    return False


def _torch_profiler(args):
    import inspect
    from pathlib import Path

    import torch

    def trace_handler(p):
        profile_dir = Path(f"{args.tensorboard_dir}/../torch_profile")
        profile_dir.mkdir(parents=True, exist_ok=True)
        p.export_chrome_trace(f"{profile_dir}/rank-{get_rank_safe()}.json.gz")

    kwargs = dict(
        schedule=torch.profiler.schedule(
            wait=max(args.profile_step_start - 1, 0),
            warmup=1 if args.profile_step_start > 0 else 0,
            active=args.profile_step_end - args.profile_step_start,
            repeat=1,
        ),
        on_trace_ready=trace_handler,
        record_shapes=args.pytorch_profiler_collect_shapes,
        with_stack=args.pytorch_profiler_collect_callstack,
    )
    if "execution_trace_observer" in inspect.signature(torch.profiler.profile).parameters:
        kwargs["execution_trace_observer"] = None
    return torch.profiler.profile(**kwargs)


def train(forward_step_func, model, optimizer, opt_param_scheduler, train_data_iterator, valid_data_iterator,
          process_non_loss_data_func, config, checkpointing_context, non_loss_data_func, inference_model=None,
          p2p_communicator=None, pg_collection=None):
    args = get_args()
    timers = get_timers()
    for model_module in model:
        if hasattr(model_module, "train"):
            model_module.train()
    total_loss_dict = {}
    iteration = args.iteration
    num_floating_point_operations_so_far = 0
    num_floating_point_operations_since_last_log_event = 0.0
    forward_backward_func = get_forward_backward_func()
    timers("interval-time", log_level=0).start(barrier=True)
    print_datetime("before the start of training step")
    report_memory_flag = True

    prof = None
    nsys_nvtx_context = None
    if (args.profile and (len(args.profile_ranks) == 0 or get_rank_safe() in args.profile_ranks)
            and args.use_pytorch_profiler):
        prof = _torch_profiler(args)
        standin_trace.record("megatron", "prof.start")
        prof.start()

    start_iteration = iteration
    should_exit = False
    while iteration < args.train_iters:
        if args.profile and (len(args.profile_ranks) == 0 or get_rank_safe() in args.profile_ranks):
            if iteration == args.profile_step_start and args.nvtx_ranges:
                configure_nvtx_profiling(True)
            if args.use_pytorch_profiler:
                prof.step()
                standin_trace.record("megatron", "prof.step", iteration=iteration, step_num=prof.step_num)
            elif iteration == args.profile_step_start:
                _cuda_profiler(True, iteration)
                if args.record_shapes:
                    nsys_nvtx_context = _emit_nvtx(record_shapes=args.record_shapes)
                    nsys_nvtx_context.__enter__()

        if (iteration + 1) in args.iterations_to_skip:
            if iteration == start_iteration:
                start_iteration = iteration + 1
            iteration += 1
            continue

        args.curr_iteration = iteration
        (loss_dict, skipped_iter, should_checkpoint, should_exit, exit_code, grad_norm, num_zeros_in_grad,
         max_attention_logit) = train_step(forward_step_func, train_data_iterator, model, optimizer,
                                           opt_param_scheduler, config, forward_backward_func, iteration=iteration)
        standin_trace.record("megatron", "train_step", iteration=iteration + 1, rank=get_rank_safe(),
                             torch_action=getattr(getattr(prof, "current_action", None), "name", None),
                             cuda_range=_cuda_range["on"])
        if should_checkpoint:
            save_checkpoint_and_time(iteration, model, optimizer, opt_param_scheduler,
                                     num_floating_point_operations_so_far, checkpointing_context)
        if should_exit:
            break
        iteration += 1
        args.consumed_train_samples += args.global_batch_size
        learning_rate = optimizer.param_groups[0]["lr"] if optimizer.param_groups else None
        report_memory_flag = training_log(loss_dict, total_loss_dict, learning_rate, iteration,
                                          optimizer.get_loss_scale().item(), report_memory_flag, skipped_iter,
                                          grad_norm, None, num_zeros_in_grad, max_attention_logit)
        if args.eval_interval and iteration % args.eval_interval == 0 and args.do_valid:
            evaluate_and_print_results(f"iteration {iteration}", forward_step_func, valid_data_iterator, model,
                                       iteration, process_non_loss_data_func, config)
        num_floating_point_operations_since_last_log_event = post_training_step_callbacks(
            model, optimizer, opt_param_scheduler, iteration, prof,
            num_floating_point_operations_since_last_log_event, nsys_nvtx_context)
        should_exit = checkpoint_and_decide_exit(model, optimizer, opt_param_scheduler, iteration,
                                                 num_floating_point_operations_so_far, checkpointing_context,
                                                 train_data_iterator)
        if should_exit:
            break
    return iteration, num_floating_point_operations_so_far


def _emit_nvtx(record_shapes):
    import contextlib

    torch = sys.modules.get("torch")
    if torch is not None:
        return torch.autograd.profiler.emit_nvtx(record_shapes=record_shapes)
    return contextlib.nullcontext()


def pretrain(train_valid_test_dataset_provider, model_provider, model_type, forward_step_func,
             process_non_loss_data_func=None, extra_args_provider=None, args_defaults={}, get_embedding_ranks=None,
             get_position_embedding_ranks=None, non_loss_data_func=None, store=None, inprocess_call_wrapper=None):
    initialize_megatron(extra_args_provider=extra_args_provider, args_defaults=args_defaults,
                        get_embedding_ranks=get_embedding_ranks,
                        get_position_embedding_ranks=get_position_embedding_ranks, store=store)
    args = get_args()
    model, optimizer, opt_param_scheduler = setup_model_and_optimizer(model_provider, model_type)
    # Megatron loads a checkpoint here (--load) and continues from its iteration;
    # the launchers' --standin-load-iteration stands in for that.
    args.iteration = int(getattr(args, "standin_load_iteration", 0) or 0)
    train_data_iterator, valid_data_iterator, _ = build_train_valid_test_data_iterators(train_valid_test_dataset_provider)
    iteration = 0
    if args.do_train and args.train_iters > 0:
        iteration, _ = train(forward_step_func, model, optimizer, opt_param_scheduler, train_data_iterator,
                             valid_data_iterator, process_non_loss_data_func, None, None, non_loss_data_func)
    return iteration
