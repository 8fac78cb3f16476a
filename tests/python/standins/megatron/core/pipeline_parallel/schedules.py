# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# Stand-in for NVIDIA/Megatron-LM @ d98e8a64ddf34856e74b24714e3bedb2f5a39553: megatron/core/pipeline_parallel/schedules.py
# Written for profd's tests from that file; names, signatures and call order follow it, bodies are minimal.
"""forward_backward_no_pipelining: each micro-batch runs forward_step_func,
its loss function and backward (torch tensors when the model is a torch
module; plain numbers otherwise)."""


def forward_backward_no_pipelining(*, forward_step_func, data_iterator, model, num_microbatches, seq_length=None,
                                   micro_batch_size=None, decoder_seq_length=None, forward_only=False,
                                   collect_non_loss_data=False, first_val_step=None, adjust_tensor_shapes_fn=None,
                                   p2p_communicator=None, pg_collection=None):
    model_chunk = model[0] if isinstance(model, list) else model
    losses_reduced = []
    for _ in range(num_microbatches):
        output_tensor, loss_func = forward_step_func(data_iterator, model_chunk)
        loss, loss_reduced = loss_func(output_tensor)
        if not forward_only and hasattr(loss, "backward"):
            loss.backward()
        losses_reduced.append(loss_reduced)
    return losses_reduced


def get_forward_backward_func(pp_size=None, vp_size=None):
    return forward_backward_no_pipelining
