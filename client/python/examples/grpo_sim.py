# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""A small GRPO job on CPU, instrumented with profd the way a verl worker is.

Four processes (by default) in one torch.distributed (gloo) group:

  rank 0       actor    compute_log_prob, update_actor (micro-batches)
  rank 1       ref      ref_compute_log_prob
  rank 2, 3    rollout  generate, one token at a time; inference replicas 0, 1

Every step: the rollout replicas generate groups of answers with the current
policy (a tiny causal language model), all ranks all-gather the sequences,
ref and actor compute log-probs, the ref's are broadcast to the actor, the
actor takes a GRPO update (group-normalised advantages, clipped ratio, KL to
the reference) over micro-batches, and broadcasts its weights back to the
rollout replicas. The reward is the share of tokens that equal TARGET, so the
mean reward rises over the steps.

Each rank marks its steps, phases and sub-steps with profd:

    c = profd.Client(role="rollout", rank=rank, replica_rank=replica)
    with c.step(step):
        with c.phase("generate"):
            for k in range(tokens):
                ...             # one decode step
                c.substep()

and wraps each sub-step in record_function("decode#k" / "micro_batch#k"),
so a trace shows which sub-steps a window's schedule recorded.

Run it standalone (spawns the ranks):   python3 grpo_sim.py --steps 10
or one process per rank under torchrun: torchrun --nproc_per_node 4 grpo_sim.py
With no profd daemon around, profd does nothing and the job runs the same.
"""

import argparse
import os
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import record_function

import profd

VOCAB = 32
HIDDEN = 64
TARGET = 7


class TinyLM(nn.Module):
    """Embedding, a causal running mean of the prefix, an MLP, a head."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, HIDDEN)
        self.mix = nn.Linear(HIDDEN, HIDDEN)
        self.head = nn.Linear(HIDDEN, VOCAB)

    def forward(self, tokens):
        x = self.emb(tokens)
        pos = torch.arange(1, tokens.shape[1] + 1, dtype=x.dtype).view(1, -1, 1)
        x = torch.cumsum(x, dim=1) / pos
        return self.head(torch.tanh(self.mix(x)))


def token_logprobs(model, seqs, prompt_len):
    """Log-probabilities of the generated tokens of each sequence."""
    logits = model(seqs[:, :-1])[:, prompt_len - 1 :]
    targets = seqs[:, prompt_len:]
    return F.log_softmax(logits, dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)


def role_of(rank):
    if rank == 0:
        return "actor", None
    if rank == 1:
        return "ref", None
    return "rollout", rank - 2


def generate(c, model, args, gen):
    """One batch of answers, token by token: one profd sub-step per token."""
    prompts = torch.randint(0, VOCAB, (args.prompts, args.prompt_len), generator=gen)
    seqs = prompts.repeat_interleave(args.group, dim=0)
    with torch.no_grad():
        for k in range(args.tokens):
            with record_function("decode#%d" % k):
                logits = model(seqs)[:, -1]
                nxt = torch.multinomial(F.softmax(logits, dim=-1), 1, generator=gen)
                seqs = torch.cat([seqs, nxt], dim=1)
            c.substep()
    return seqs


def micro_batches(n_rows, n):
    size = max(1, n_rows // n)
    return [slice(i, min(i + size, n_rows)) for i in range(0, n_rows, size)][:n]


def logprobs_in_micro_batches(c, model, seqs, args, n):
    out = []
    with torch.no_grad():
        for k, mb in enumerate(micro_batches(seqs.shape[0], n)):
            with record_function("micro_batch#%d" % k):
                out.append(token_logprobs(model, seqs[mb], args.prompt_len))
            c.substep()
    return torch.cat(out)


def grpo_update(c, model, opt, seqs, old_lp, ref_lp, args):
    """One PPO/GRPO update over micro-batches: one profd sub-step each."""
    rewards = (seqs[:, args.prompt_len :] == TARGET).float().mean(dim=1)
    grouped = rewards.view(-1, args.group)
    adv = ((grouped - grouped.mean(dim=1, keepdim=True)) / (grouped.std(dim=1, keepdim=True) + 1e-4)).view(-1, 1)
    opt.zero_grad()
    mbs = micro_batches(seqs.shape[0], args.micro_batches)
    total = 0.0
    for k, mb in enumerate(mbs):
        with record_function("micro_batch#%d" % k):
            lp = token_logprobs(model, seqs[mb], args.prompt_len)
            ratio = torch.exp(lp - old_lp[mb])
            clipped = torch.clamp(ratio, 0.8, 1.2)
            pg = -torch.min(ratio * adv[mb], clipped * adv[mb]).mean()
            kl = (torch.exp(ref_lp[mb] - lp) - (ref_lp[mb] - lp) - 1).mean()
            loss = (pg + 0.01 * kl) / len(mbs)
            loss.backward()
            total += float(loss)
        c.substep()
    opt.step()
    return total, float(rewards.mean())


def worker(rank, args):
    world = 2 + args.rollout
    role, replica = role_of(rank)
    torch.set_num_threads(1)
    torch.manual_seed(0)  # every rank starts from the same policy

    # profd first, so that registration overlaps the rendezvous
    c = profd.Client(role=role, rank=rank, replica_rank=replica, job=args.job, world_size=world, local_rank=rank)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    deadline = time.monotonic() + args.wait_daemon
    while args.wait_daemon > 0 and not c.stats().connected and time.monotonic() < deadline:
        time.sleep(0.01)
    dist.barrier()

    policy = TinyLM()
    ref = TinyLM()
    ref.load_state_dict(policy.state_dict())
    opt = torch.optim.Adam(policy.parameters(), lr=args.lr)
    gen = torch.Generator().manual_seed(1000 + rank)
    rows = args.prompts * args.group
    seq_len = args.prompt_len + args.tokens
    t0 = time.monotonic()
    first_reward = last_reward = None

    for step in range(1, args.steps + 1):
        with c.step(step):
            # 1. rollout: generate with the current policy
            if role == "rollout":
                with c.phase("generate"):
                    seqs = generate(c, policy, args, gen)
            else:
                seqs = torch.zeros(rows, seq_len, dtype=torch.long)
            gathered = [torch.empty_like(seqs) for _ in range(world)]
            dist.all_gather(gathered, seqs)
            batch = torch.cat(gathered[2:])

            # 2. log-probs: the reference's and the actor's own (old policy)
            ref_lp = torch.zeros(batch.shape[0], args.tokens)
            if role == "ref":
                with c.phase("ref_compute_log_prob"):
                    ref_lp = logprobs_in_micro_batches(c, ref, batch, args, 2)
            elif role == "actor":
                with c.phase("compute_log_prob"):
                    old_lp = logprobs_in_micro_batches(c, policy, batch, args, 2)
            dist.broadcast(ref_lp, src=1)

            # 3. actor update, then the new weights to the rollout replicas
            if role == "actor":
                with c.phase("update_actor"):
                    loss, reward = grpo_update(c, policy, opt, batch, old_lp, ref_lp, args)
                first_reward = reward if first_reward is None else first_reward
                last_reward = reward
                if args.verbose:
                    print("step %d: reward %.3f loss %+.4f" % (step, reward, loss), flush=True)
            flat = torch.nn.utils.parameters_to_vector(policy.parameters()).detach()
            dist.broadcast(flat, src=0)
            if role == "rollout":
                torch.nn.utils.vector_to_parameters(flat, policy.parameters())

    dist.barrier()
    if role == "actor":
        print(
            "grpo_sim: %d steps on %d ranks in %.3f s; mean reward %.3f -> %.3f"
            % (args.steps, world, time.monotonic() - t0, first_reward, last_reward),
            flush=True,
        )
    dist.destroy_process_group()
    c.close()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--rollout", type=int, default=2, help="rollout ranks, one inference replica each")
    ap.add_argument("--tokens", type=int, default=8, help="decode steps per answer (rollout sub-steps)")
    ap.add_argument("--micro-batches", type=int, default=6, help="actor update micro-batches (sub-steps)")
    ap.add_argument("--prompts", type=int, default=4)
    ap.add_argument("--group", type=int, default=6, help="answers per prompt (GRPO group size)")
    ap.add_argument("--prompt-len", type=int, default=4)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--job", default=None, help="profd job name (default $PROFD_JOB, else default)")
    ap.add_argument(
        "--wait-daemon",
        type=float,
        default=0.0,
        help="wait up to this many seconds for the profd daemon before step 1 (demos and tests)",
    )
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    if args.rollout < 1 or args.steps < 1 or args.tokens < 1 or args.micro_batches < 1:
        ap.error("--rollout, --steps, --tokens and --micro-batches must be positive")

    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:  # torchrun
        if int(os.environ["WORLD_SIZE"]) != 2 + args.rollout:
            ap.error("WORLD_SIZE must be 2 + --rollout (%d)" % (2 + args.rollout))
        worker(int(os.environ["RANK"]), args)
        return 0
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(free_port()))
    mp.start_processes(worker, args=(args,), nprocs=2 + args.rollout, join=True, start_method="fork")
    return 0


if __name__ == "__main__":
    sys.exit(main())
