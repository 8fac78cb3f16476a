#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
# System test, training configurations: every file of the corpus is applied
# to a running profd with `profctl apply` and its resolved windows (profctl
# windows --json) are checked against the documented semantics; a verl-style
# config with discrete mode and agent-loop replica ranks is applied to a
# running profd-sim job (12 ranks: actor, rollout in 3 replicas, ref) and the
# manifests are checked (who, which steps, which phases); an on-demand
# `--next 2` window taken while the job runs is aligned on every rank.
# Usage: test_apply.sh BUILD_DIR
lib_name=apply
. "$(dirname "$0")/lib.sh"
src=$(realpath "$here/../..")
corpus=$src/tests/fixtures/corpus
export PROFD_RUN_DIR=$tmp/run
profctl() { "$profctl_bin" "$@"; }
py() { /usr/bin/python3 - "$@"; }

start_daemon() {
  "$profd" --save-path "$tmp/out" 2>>"$tmp/profd.log" &
  daemon_pid=$!
  pids+=($daemon_pid)
  for _ in $(seq 100); do profctl status >/dev/null 2>&1 && return 0; sleep 0.05; done
  fail "profd did not start"
}
stop_daemon() {
  kill -TERM "$daemon_pid"
  wait "$daemon_pid" || fail "profd exited non-zero"
}

# ---- 1. every corpus file, on a daemon with no ranks --------------------
start_daemon
for f in "$corpus"/*/*; do
  profctl apply "$f" >"$tmp/apply.out" 2>"$tmp/apply.err" ||
    fail "apply $(basename "$f"): $(cat "$tmp/apply.err")"
done
profctl --json windows >"$tmp/corpus.json"
py "$tmp/corpus.json" "$corpus" "$tmp/out" <<'PY' || fail "corpus windows"
import json, os, sys
windows = json.load(open(sys.argv[1]))["windows"]
corpus, out = sys.argv[2], sys.argv[3]
# Only the two MindSpeed examples request steps: profile_step_start 5,
# profile_step_end 6 is MindSpeed's [5, 6) counted from 0 = profd's step 6,
# rank 0, npu, end to end, below the daemon's save_path as profile_dir...
want = {
    "mindspeed_llm_fsdp2_profile_example1.yaml": ("profile_dir", ["cpu", "npu"]),
    "mindspeed_llm_fsdp2_profile_example2.yaml": ("profile_dir_with_stack",
                                                 ["cpu", "npu", "memory", "shapes", "stack"]),
}
got = {os.path.basename(w["source"]): w for w in windows}
assert sorted(got) == sorted(want), f"windows from {sorted(got)}"
for name, (folder, contents) in want.items():
    w = got[name]
    assert (w["first_step"], w["last_step"]) == (6, 6), w
    assert (w["tool"], w["mode"], w["state"]) == ("npu", "e2e", "pending"), w
    assert w["selectors"] == [{"role": None, "all_ranks": False, "ranks": [0],
                               "replica_ranks": [], "phases": []}], w["selectors"]
    s = w["settings"]
    assert s["level"] == "level1" and sorted(s["contents"]) == sorted(contents), s
    assert w["path"] == os.path.join(out, folder, "default", w["name"]), w["path"]
PY
# verl's generated config with the doc's overrides: one window per step,
# actor, rollout and ref (which follow the actor) on rank 0, npu discrete
profctl apply "$corpus/verl/verlproj_generated_ppo_trainer_profiler_sections.yaml" \
  global_profiler.tool=npu 'global_profiler.steps=[2,4]' \
  actor_rollout_ref.actor.profiler.enable=True 'actor_rollout_ref.actor.profiler.ranks=[0,1]' \
  actor_rollout_ref.actor.profiler.tool_config.npu.discrete=True \
  "actor_rollout_ref.actor.profiler.tool_config.npu.contents=['npu','cpu']" \
  actor_rollout_ref.actor.profiler.tool_config.npu.level=level1 >"$tmp/gen.out" 2>"$tmp/gen.err" ||
  fail "apply generated: $(cat "$tmp/gen.err")"
[ "$(grep -c '^applied window' "$tmp/gen.out")" = 2 ] || fail "generated: $(cat "$tmp/gen.out")"
profctl --json windows >"$tmp/gen.json"
py "$tmp/gen.json" <<'PY' || fail "generated config windows"
import json, sys
ws = [w for w in json.load(open(sys.argv[1]))["windows"]
      if w["source"].endswith("verlproj_generated_ppo_trainer_profiler_sections.yaml")]
assert [(w["first_step"], w["last_step"]) for w in ws] == [(2, 2), (4, 4)], ws
for w in ws:
    assert (w["tool"], w["mode"]) == ("npu", "discrete"), w
    roles = {s["role"]: s for s in w["selectors"]}
    # ref writes enable: false in verl's generated config: that wins
    assert sorted(roles) == ["actor", "rollout"], roles
    for s in roles.values():
        assert s["ranks"] == [0, 1] and not s["all_ranks"], s
    assert w["settings"]["level"] == "level1", w["settings"]
    assert sorted(w["settings"]["contents"]) == ["cpu", "npu"], w["settings"]
PY
# bad input: one line naming file:line:column and the key
printf 'global_profiler:\n  tool: npu\n  steps: [2]\nactor_rollout_ref:\n  actor:\n    profiler:\n      enable: true\n      tool_config:\n        npu:\n          level: level3\n' >"$tmp/bad.yaml"
if profctl apply "$tmp/bad.yaml" >/dev/null 2>"$tmp/bad.err"; then fail "level3 accepted"; fi
grep -q "bad.yaml:10:18: key 'actor_rollout_ref.actor.profiler.tool_config.npu.level': expected one of level_none, level0, level1, level2, found 'level3'" "$tmp/bad.err" ||
  fail "bad level message: $(cat "$tmp/bad.err")"
if profctl apply "$corpus/verl/verl_profiler_profiler.yaml" 'global_profiler.stepz=[1]' \
  >/dev/null 2>"$tmp/bad2.err"; then fail "unknown override accepted"; fi
grep -q "override 'global_profiler.stepz=\[1\]'" "$tmp/bad2.err" || fail "override message"
stop_daemon

# ---- 2. a verl-style discrete config on a running job ------------------
rm -rf "$tmp/out"
start_daemon
# actor 0-3, rollout 4-9 (replicas 0, 0, 1, 1, 2, 2), ref 10-11
"$sim" --layout actor:4,rollout:6@3,ref:2 --steps 100000 --rate 10 --substeps 2 \
  --trace-bytes 4096 >"$tmp/sim.log" 2>&1 &
job_pid=$!
pids+=($job_pid)
registered_ranks 12
now=$(profctl --json status | /usr/bin/python3 -c \
  'import json,sys; print(max(r["step"] or 0 for r in json.load(sys.stdin)["ranks"]))')
s=$((now + 40))
profctl apply "$src/tests/fixtures/apply/verl_agent_loop_discrete.yaml" \
  "global_profiler.steps=[$s,$((s + 1))]" "global_profiler.save_path=$tmp/verl" \
  >"$tmp/a.out" 2>"$tmp/a.err" || fail "apply: $(cat "$tmp/a.err")"
grep -q "agent-loop rollout: ranks \[1\] are inference replica indices" "$tmp/a.err" ||
  fail "replica warning: $(cat "$tmp/a.err")"
[ "$(grep -c "^applied window.*discrete" "$tmp/a.out")" = 2 ] || fail "$(cat "$tmp/a.out")"
grep -q "steps $s, 5 rank(s), tool torch, discrete" "$tmp/a.out" || fail "$(cat "$tmp/a.out")"
ids=$(sed -n 's/^applied window \([0-9]*\) .*/\1/p' "$tmp/a.out")
for id in $ids; do profctl wait "$id" --timeout 60 >/dev/null || fail "wait $id"; done
for step in $s $((s + 1)); do
  m=$(ls "$tmp"/verl/default/w*-step"$step"/manifest.json)
  $check "$m" --first "$step" --last "$step" \
    --expect actor.compute_log_prob=0,1 --expect actor.update_actor=0,1 \
    --expect rollout.generate=6,7 --expect ref.ref_compute_log_prob=10 --sim ||
    fail "manifest of step $step"
done

# ---- 3. on demand while the job runs: aligned on every selected rank ---
profctl start --next 2 --roles rollout --replica-ranks 0,2 --phases generate --tool torch \
  >"$tmp/n.out" || fail "start --next 2"
id=$(sed -n 's/^started window \([0-9]*\) .*/\1/p' "$tmp/n.out")
name=$(sed -n 's/^started window [0-9]* \([^:]*\):.*/\1/p' "$tmp/n.out")
profctl wait "$id" --timeout 60 >/dev/null || fail "wait --next 2"
first=$(echo "$name" | sed -n 's/^w[0-9]*-steps\([0-9]*\)-[0-9]*$/\1/p')
[ -n "$first" ] || fail "window name $name"
$check "$tmp/out/default/$name/manifest.json" --first "$first" --last $((first + 1)) \
  --per-step --expect rollout.generate=4,5,8,9 --sim || fail "--next 2 manifest"
stop_daemon

# ---- 4. a real verl launch line, composed on this side, then run -------
# verl-project/verl examples/profile's NPU discrete line
# (tests/fixtures/launch/cases/verl_profile_npu_discrete.json): profctl
# composes verl's ppo_trainer.yaml with its groups from the checkout's
# verl/trainer/config and sends the requests; the daemon reads no file.
# Steps 2 and 4; actor and ref on global ranks 1 and 2 (discrete), the
# agent-loop rollout on the replica owning ranks 1 and 2 (tp 4: replica 0,
# global ranks 0-3). The job: verl's hybrid engine, each global rank 0-7
# hosting an actor, a ref and a rollout worker (rollout: 2 replicas of 4).
kill -TERM "$job_pid"
wait "$job_pid" 2>/dev/null || true
rm -rf "$tmp/out"
start_daemon
launch=$src/tests/fixtures/launch
(cd "$launch/trees/verl" && /usr/bin/python3 - "$launch/cases/verl_profile_npu_discrete.json" \
  "$tmp/verl_line" <<'PY'
import json, sys
case = json.load(open(sys.argv[1]))
open(sys.argv[2], "w").write("\0".join(case["argv"]))
PY
) || fail "launch line"
mapfile -d '' line <"$tmp/verl_line"
(cd "$launch/trees/verl" && env -u PYTHONPATH HOME=/root "$profctl_bin" apply -- "${line[@]}" \
  "global_profiler.save_path=$tmp/verl_line_out") >"$tmp/l.out" 2>"$tmp/l.err" ||
  fail "apply the launch line: $(cat "$tmp/l.err")"
[ "$(grep -c '^applied window.*discrete' "$tmp/l.out")" = 2 ] || fail "launch line: $(cat "$tmp/l.out")"
ids=$(sed -n 's/^applied window \([0-9]*\) .*/\1/p' "$tmp/l.out")
"$sim" --layout actor:8 --steps 6 --rate 1 --substeps 2 --trace-bytes 2048 >"$tmp/s1.log" 2>&1 &
pids+=($!)
"$sim" --layout ref:8 --steps 6 --rate 1 --substeps 2 --trace-bytes 2048 >"$tmp/s2.log" 2>&1 &
pids+=($!)
"$sim" --layout rollout:8@2 --steps 6 --rate 1 --substeps 2 --trace-bytes 2048 >"$tmp/s3.log" 2>&1 &
pids+=($!)
registered_ranks 24 # wait returns at once on a window no registered rank matches yet
for id in $ids; do
  profctl wait "$id" --timeout 60 >/dev/null ||
    fail "wait $id (launch line): $(cat "$tmp"/verl_line_out/default/w"$id"-*/manifest.json)"
done
for step in 2 4; do
  m=$(ls "$tmp"/verl_line_out/default/w*-step"$step"/manifest.json) || fail "no manifest, step $step"
  $check "$m" --first "$step" --last "$step" \
    --expect actor.compute_log_prob=1,2 --expect actor.update_actor=1,2 \
    --expect ref.ref_compute_log_prob=1,2 --expect rollout.generate=0,1,2,3 --sim ||
    fail "launch line manifest of step $step"
done
stop_daemon
check_logs
echo "system test apply: OK"
