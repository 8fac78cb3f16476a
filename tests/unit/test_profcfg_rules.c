// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Profiling-config rules, one row each (the table of
 * docs/profiling-config.md), and malformed inputs with their exact one-line
 * messages: file:line:column (or the override), the key, what was expected
 * and what was found.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "profcfg_case.h"
#include "profd/errors.h"

/* ---- one row per rule (docs/profiling-config.md) ---- */

/* verl-project 1dda039b verl/utils/profiler/profile.py:126-134: enabled with
 * all_ranks false and ranks [] profiles rank 0 */
#define RANK0(file, pos, role)                                                                     \
    file ":" pos ": key 'actor_rollout_ref." role                                                  \
         ".profiler.ranks': enabled with all_ranks false and ranks []: profiles rank 0 (verl's "   \
         "default)"
#define NEW_RANK0 RANK0("verlproj_generated_ppo_trainer_profiler_sections.yaml", "10:14", "actor")
#define NSYS_OPTIONS                                                                               \
    "settings={\"worker_nsight_options\":{\"trace\":\"cuda,nvtx,cublas,ucx\",\"cuda-memory-"       \
    "usage\":"                                                                                     \
    "\"true\",\"cuda-graph-trace\":\"graph\",\"capture-range\":\"cudaProfilerApi\","               \
    "\"capture-range-end\":null,\"kill\":\"none\"}}"
#define TMEM(depth)                                                                                \
    "settings={\"trace_alloc_max_entries\":100000,\"stack_depth\":" depth ",\"context\":\"all\","  \
    "\"stacks\":\"all\",\"kw_args\":{}}"
#define MS_LEVEL0(export, simpl)                                                                   \
    "settings={\"level\":\"level0\",\"contents\":[\"npu\"],\"analysis\":true,\"export_type\":"     \
    "\"" export "\",\"data_simplification\":" simpl "}"

static const pcase_t rules[] = {
    /* steps (trainer_base.py:428-438): listed steps, counted from 1; [] lists none */
    {.name = "steps_empty.yaml",
     .text = "global_profiler:\n  tool: npu\n  steps: []\n" ACTOR(""),
     .schema = "verl",
     .no_window = "global_profiler.steps is []"},
    {.name = "steps_unsorted.yaml",
     .text =
         "global_profiler:\n  tool: npu\n  steps: [5, 2, 2, 1]\n" ACTOR("      all_ranks: true\n"),
     .schema = "verl",
     .want = "steps=1,2,5 tool=npu mode=e2e settings={} | actor all | rollout all | ref all",
     .swarn = {"steps_unsorted.yaml:3:10: key 'global_profiler.steps': repeated steps are profiled "
               "once"}},
    {.name = "continuous_e2e.yaml",
     .text = "global_profiler:\n  tool: npu\n  steps: [1, 2, 5]\n  profile_continuous_steps: "
             "true\n" ACTOR("      all_ranks: true\n"),
     .schema = "verl",
     .want = "steps=1,2,5 continuous tool=npu mode=e2e settings={} | actor all | rollout all | "
             "ref all"},
    {.name = "continuous_discrete.yaml",
     .text =
         "global_profiler:\n  tool: npu\n  steps: [1, 2, 5]\n  profile_continuous_steps: "
         "true\n" ACTOR("      ranks: [0]\n      tool_config:\n        npu: {discrete: true}\n"),
     .schema = "verl",
     .want = "steps=1,2,5 continuous tool=npu mode=discrete settings={} | actor ranks=0 | rollout "
             "ranks=0 | ref ranks=0",
     .swarn = {"continuous_discrete.yaml:4:29: key 'global_profiler.profile_continuous_steps': "
               "profile_continuous_steps needs discrete: false (verl); actor is discrete, so its "
               "phases are captured step by step"}},
    /* ranks */
    {.name = "ranks_default.yaml",
     .text = GP("") ACTOR("      ranks: []\n"),
     .schema = "verl",
     .want =
         "steps=2 tool=npu mode=e2e settings={} | actor ranks=0 | rollout ranks=0 | ref ranks=0",
     .swarn = {RANK0("ranks_default.yaml", "8:14", "actor")}},
    {.name = "ranks_all_wins.yaml",
     .text = GP("") ACTOR("      all_ranks: true\n      ranks: [3]\n"),
     .schema = "verl",
     .want = "steps=2 tool=npu mode=e2e settings={} | actor all | rollout all | ref all"},
    {.name = "ranks_sorted.yaml",
     .text = GP("") ACTOR("      ranks: [3, 1, 3]\n"),
     .schema = "verl",
     .want = "steps=2 tool=npu mode=e2e settings={} | actor ranks=1,3 | rollout ranks=1,3 | ref "
             "ranks=1,3"},
    /* inheritance: critic and reward do not follow the actor */
    {.name = "inherit_critic.yaml",
     .text = GP("")
         ACTOR("      ranks: [0]\n") "critic:\n  profiler:\n    enable: true\n    ranks: [4]\n"
                                     "reward_model:\n  profiler:\n    enable: false\n",
     .schema = "verl",
     .want =
         "steps=2 tool=npu mode=e2e settings={} | actor ranks=0 | rollout ranks=0 | ref ranks=0 "
         "| critic ranks=4"},
    /* ...and a role's own value wins over the actor's */
    {.name = "inherit_override.yaml",
     .text = GP("") ACTOR("      ranks: [0]\n      tool_config:\n        npu: {discrete: true, "
                          "level: level1}\n") "  ref:\n    profiler:\n      enable: false\n"
                                              "  rollout:\n    profiler:\n      ranks: [8, 9]\n    "
                                              "  tool_config:\n        npu: {level: level2}\n",
     .schema = "verl",
     .want = "steps=2 tool=npu mode=discrete settings={\"level\":\"level1\"} | actor ranks=0 | "
             "rollout ranks=8,9 settings={\"level\":\"level2\"}"},
    /* tools: the role's own, else global_profiler.tool */
    {.name = "tool_from_role.yaml",
     .text = "global_profiler:\n  steps: [2]\n" ACTOR(
         "      tool: torch\n      ranks: [0]\n") "critic:\n  profiler:\n    enable: true\n    "
                                                  "tool: npu\n    ranks: [1]\n",
     .schema = "verl",
     .want = "steps=2 tool=torch mode=e2e settings={} | actor ranks=0 | rollout ranks=0 | ref "
             "ranks=0 | critic ranks=1 tool=npu"},
    /* no tool anywhere and several in tool_config: DistProfiler's no-op
     * (profile.py:156-178); verl profiles nothing */
    {.name = GEN_OLD,
     .corpus = true,
     .ov = {"global_profiler.steps=[2]", "actor_rollout_ref.actor.profiler.enable=true"},
     .schema = "verl",
     .no_window = "global_profiler.tool is null",
     .warn = {"override 'actor_rollout_ref.actor.profiler.enable=true': key "
              "'actor_rollout_ref.actor.profiler.enable': enabled but no tool set "
              "(global_profiler.tool is null): verl profiles nothing; not selected",
              "verl_generated_ppo_trainer_profiler_sections.yaml:60:15: key "
              "'actor_rollout_ref.rollout.profiler.enable': enabled but no tool set "
              "(global_profiler.tool is null): verl profiles nothing; not selected",
              "override 'global_profiler.steps=[2]': key 'global_profiler.steps': no enabled role "
              "has a profiler tool; no window"}},
    {.name = "tool_precision_debugger.yaml",
     .text = "global_profiler:\n  tool: precision_debugger\n  steps: [2]\n" ACTOR(""),
     .schema = "verl",
     .no_window = "precision_debugger, not a profiler",
     .warn = {"tool_precision_debugger.yaml:7:15: key 'actor_rollout_ref.actor.profiler.enable': "
              "precision_debugger is not a profiler profd runs; not selected",
              "tool_precision_debugger.yaml:3:10: key 'global_profiler.steps': no enabled role is "
              "profiled; no window"}},
    /* nsys: discrete from global_tool_config.nsys.discrete (every role's
     * tool_config.nsys.discrete follows it), worker_nsight_options as settings */
    {.name = GEN_OLD,
     .corpus = true,
     .ov = {"global_profiler.tool=nsys", "global_profiler.steps=[1,2,3,5]",
            "global_profiler.profile_continuous_steps=true",
            "global_profiler.global_tool_config.nsys.discrete=true",
            "actor_rollout_ref.actor.profiler.enable=true",
            "actor_rollout_ref.actor.profiler.all_ranks=true"},
     .schema = "verl",
     .want = "steps=1,2,3,5 continuous tool=nsys mode=discrete " NSYS_OPTIONS
             " save=outputs/profile | actor all | rollout all",
     .swarn = {"override 'global_profiler.profile_continuous_steps=true': key "
               "'global_profiler.profile_continuous_steps': profile_continuous_steps needs "
               "discrete: false (verl); actor is discrete, so its phases are captured step by "
               "step"}},
    /* torch_memory in volcengine b178a3cd (top-level reward_model, no reward
     * section): ray_trainer.py:1702-1708 dumps every actor rank after every
     * step; the critic's DistProfiler at its steps, end to end */
    {.name = GEN_OLD,
     .corpus = true,
     .ov = {"global_profiler.tool=torch_memory", "global_profiler.steps=[3]",
            "critic.profiler.enable=true", "critic.profiler.ranks=[1,0,1]",
            "+critic.profiler.tool_config.torch_memory.discrete=true",
            "critic.profiler.tool_config.torch_memory.stack_depth=16"},
     .schema = "verl",
     .want = "start=1 end=-1 tool=torch_memory mode=e2e " TMEM(
         "32") " save=outputs/profile | "
               "actor all || steps=3 tool=torch_memory mode=e2e " TMEM(
                   "16") " save=outputs/profile "
                         "| critic ranks=0,1",
     .swarn = {"verl_generated_ppo_trainer_profiler_sections.yaml:7:13: key "
               "'actor_rollout_ref.actor.profiler.tool': this verl (reward_model at the top, no "
               "reward section: before verl-project 78afaa5b) dumps a torch_memory snapshot on "
               "every actor rank after every step, whatever global_profiler.steps and "
               "profiler.enable say (the one after step N is filed under step N+1)",
               "override '+critic.profiler.tool_config.torch_memory.discrete=true': key "
               "'critic.profiler.tool_config.torch_memory.discrete': torch_memory has no discrete "
               "mode; captured end to end"}},
    /* a torch schedule (active > 0) walks the update's mini-batches, in
     * discrete mode only (config.py:TorchProfilerScheduleConfig) */
    {.name = GEN_NEW,
     .corpus = true,
     .ov = {"global_profiler.tool=torch", "global_profiler.steps=[4]",
            "actor_rollout_ref.actor.profiler.enable=true",
            "actor_rollout_ref.actor.profiler.tool_config.torch.discrete=true",
            "actor_rollout_ref.actor.profiler.tool_config.torch.contents=[cuda, cpu]",
            "actor_rollout_ref.actor.profiler.tool_config.torch.schedule.wait=1",
            "actor_rollout_ref.actor.profiler.tool_config.torch.schedule.active=2",
            "actor_rollout_ref.rollout.profiler.enable=false"},
     .schema = "verl",
     .want = "steps=4 tool=torch mode=discrete settings={\"contents\":[\"cuda\",\"cpu\"]} "
             "save=outputs/profile | actor ranks=0 phases=compute_log_prob | actor ranks=0 "
             "phases=update_actor schedule=0,1,0,2,0",
     .swarn = {NEW_RANK0}},
    {.name = GEN_NEW,
     .corpus = true,
     .ov = {"global_profiler.tool=torch", "global_profiler.steps=[4]",
            "actor_rollout_ref.actor.profiler.enable=true",
            "actor_rollout_ref.actor.profiler.tool_config.torch.schedule.active=2",
            "actor_rollout_ref.rollout.profiler.enable=false"},
     .schema = "verl",
     .want = "steps=4 tool=torch mode=e2e settings={\"contents\":[]} save=outputs/profile | actor "
             "ranks=0",
     .swarn = {NEW_RANK0,
               "verlproj_generated_ppo_trainer_profiler_sections.yaml:30:11: key "
               "'actor_rollout_ref.actor.profiler.tool_config.torch.schedule': "
               "tool_config.torch.schedule applies in discrete mode only; the end-to-end capture "
               "records whole steps"}},
    {.name = "tool_sim.yaml",
     .text = "global_profiler:\n  tool: sim\n  steps: [3]\n" ACTOR(
         "      all_ranks: true\n      tool_config:\n        sim: {bytes: 4096}\n"),
     .schema = "verl",
     .want = "steps=3 tool=sim mode=e2e settings={\"bytes\":4096} | actor all | rollout all | ref "
             "all"},
    /* agent loop (rollout.mode async): the engine profiles in discrete mode
     * only; an end-to-end rollout is skipped, as verl does
     * (vllm_async_server.py:856-874) */
    {.name = GEN_NEW,
     .corpus = true,
     .ov = {"global_profiler.tool=npu", "global_profiler.steps=[2]",
            "actor_rollout_ref.actor.profiler.enable=true",
            "+actor_rollout_ref.rollout.mode=async"},
     .schema = "verl",
     .want =
         "steps=2 tool=npu mode=e2e settings={\"contents\":[],\"level\":\"level0\",\"analysis\":"
         "true} save=outputs/profile | actor ranks=0",
     .swarn = {NEW_RANK0, "verlproj_generated_ppo_trainer_profiler_sections.yaml:108:21: key "
                          "'actor_rollout_ref.rollout.profiler.tool_config.npu.discrete': rollout "
                          "follows the actor's end-to-end mode, but an agent-loop rollout is "
                          "profiled in discrete mode only; rollout not selected"}},
    /* verl-project's rollout ranks are global ranks, each selecting the
     * replica owning it (build_rollout_dist_profiler: rank // (tp*dp*pp), 1
     * here); SGLang ignores memory and profiles at level0 with analysis */
    {.name = GEN_NEW,
     .corpus = true,
     .ov = {"global_profiler.tool=npu", "global_profiler.steps=[2]",
            "actor_rollout_ref.actor.profiler.enable=true", "+actor_rollout_ref.rollout.mode=async",
            "actor_rollout_ref.actor.profiler.tool_config.npu.discrete=true",
            "actor_rollout_ref.rollout.profiler.ranks=[1, 0]",
            "+actor_rollout_ref.rollout.name=sglang",
            "actor_rollout_ref.actor.profiler.tool_config.npu.contents=[npu, memory]",
            "actor_rollout_ref.actor.profiler.tool_config.npu.analysis=false",
            "actor_rollout_ref.actor.profiler.tool_config.npu.level=level1"},
     .schema = "verl",
     .want = "steps=2 tool=npu mode=discrete settings={\"contents\":[\"npu\",\"memory\"],\"level\":"
             "\"level1\",\"analysis\":false} save=outputs/profile | actor ranks=0 | rollout "
             "ranks=0,1 replicas=0,1",
     .swarn =
         {NEW_RANK0,
          "override 'actor_rollout_ref.rollout.profiler.ranks=[1, 0]': key "
          "'actor_rollout_ref.rollout.profiler.ranks': agent-loop rollout: ranks [0, 1] are "
          "global ranks, each selecting the replica that owns it (+profd.rollout_ranks=replica "
          "reads them as replica indices)",
          "verlproj_generated_ppo_trainer_profiler_sections.yaml:105:21: key "
          "'actor_rollout_ref.rollout.profiler.tool_config.npu.contents': sglang rollout does "
          "not support 'memory' in contents",
          "verlproj_generated_ppo_trainer_profiler_sections.yaml:107:21: key "
          "'actor_rollout_ref.rollout.profiler.tool_config.npu.analysis': sglang rollout "
          "ignores analysis: false (always analyses)",
          "verlproj_generated_ppo_trainer_profiler_sections.yaml:106:18: key "
          "'actor_rollout_ref.rollout.profiler.tool_config.npu.level': sglang rollout ignores "
          "profiler level 'level1' (uses level0)"}},
    /* a replica of tp 2 x dp 2 owns 4 global ranks: ranks 1 and 5 are in
     * replicas 0 and 1 */
    {.name = "agent_loop_global_tp.yaml",
     .text = GP("") ACTOR("      ranks: [1, 5]\n      tool_config:\n        npu: {discrete: "
                          "true}\n") "  rollout:\n    mode: async\n    tensor_model_parallel_size: "
                                     "2\n"
                                     "    data_parallel_size: 2\n    profiler: {}\nprofd:\n  "
                                     "rollout_ranks: global\n",
     .schema = "verl",
     .want = "steps=2 tool=npu mode=discrete settings={} | actor ranks=1,5 | rollout ranks=1,5 "
             "replicas=0,1 | ref ranks=1,5",
     .swarn = {"agent_loop_global_tp.yaml:8:14: key 'actor_rollout_ref.actor.profiler.ranks': "
               "agent-loop rollout: ranks [1, 5] are global ranks, each selecting the replica that "
               "owns it"}},
    /* the agent-loop rollout's engine takes torch or npu only
     * (vllm_async_server.py:169-176): with nsys the replicas get no profiler */
    {.name = "agent_loop_nsys.yaml",
     .text = "global_profiler:\n  tool: nsys\n  steps: [2]\n  global_tool_config:\n    nsys:\n"
             "      discrete: true\n      worker_nsight_options: {trace: cuda}\n" ACTOR(
                 "      ranks: [0]\n") "  rollout:\n    mode: async\n    name: vllm\n",
     .schema = "verl",
     .want = "steps=2 tool=nsys mode=discrete settings={\"worker_nsight_options\":{\"trace\":"
             "\"cuda\"}} | actor ranks=0 | ref ranks=0",
     .swarn = {"agent_loop_nsys.yaml:11:15: key 'actor_rollout_ref.actor.profiler.enable': agent "
               "loop only support torch and npu profiler, got nsys; rollout not selected"}},
    /* volcengine b178a3cd: replica indices (DistProfiler(self.replica_rank)) */
    {.name = "agent_loop_replica.yaml",
     .text = GP("") ACTOR("      all_ranks: true\n      tool_config:\n        npu: {discrete: "
                          "true}\n") "  rollout:\n    mode: async\n    name: vllm\n    profiler:\n "
                                     "     all_ranks: false\n"
                                     "      ranks: [2]\n      tool_config:\n        npu: {level: "
                                     "level1, analysis: true}\n"
                                     "profd:\n  rollout_ranks: replica\n",
     .schema = "verl",
     .want = "steps=2 tool=npu mode=discrete settings={} | actor all | rollout replicas=2 "
             "settings={\"level\":\"level1\",\"analysis\":true} | ref all",
     .swarn =
         {"agent_loop_replica.yaml:16:14: key 'actor_rollout_ref.rollout.profiler.ranks': "
          "agent-loop rollout: ranks [2] are inference replica indices",
          "agent_loop_replica.yaml:18:40: key "
          "'actor_rollout_ref.rollout.profiler.tool_config.npu.analysis': vllm rollout ignores "
          "analysis: true (offline analysis needed)"}},
    {.name = "agent_loop_global.yaml",
     .text = GP("") ACTOR(
         "      tool_config:\n        npu: {discrete: true}\n") "  rollout:\n    mode: async\n    "
                                                                "profiler:\n      ranks: [2]\n"
                                                                "profd:\n  rollout_ranks: global\n",
     .schema = "verl",
     .want = "steps=2 tool=npu mode=discrete settings={} | actor ranks=0 | rollout ranks=2 "
             "replicas=2 | ref ranks=0",
     .swarn = {"agent_loop_global.yaml:7:15: key 'actor_rollout_ref.actor.profiler.enable': "
               "enabled with all_ranks false and ranks []: profiles rank 0 (verl's default)",
               "agent_loop_global.yaml:13:14: key 'actor_rollout_ref.rollout.profiler.ranks': "
               "agent-loop rollout: ranks [2] are global ranks, each selecting the replica that "
               "owns it"}},
    /* +key with a list value replaces an existing list (Hydra: "or the value
     * is a list or a dict") */
    {.name = "plus_list.yaml",
     .text = GP("") ACTOR("      all_ranks: true\n"),
     .ov = {"+global_profiler.steps=[1]"},
     .schema = "verl",
     .want = "steps=1 tool=npu mode=e2e settings={} | actor all | rollout all | ref all"},
    /* Megatron-LM's nsys path with end <= start never stops the profiler */
    {.name = "megatron_end.yaml",
     .text = "profile: true\nprofile_step_start: 12\n",
     .schema = "megatron",
     .want = "start=13 end=-1 tool=nsys mode=e2e settings={} | * all",
     .swarn = {"megatron_end.yaml:1:1: profile_step_end (12) is not after profile_step_start (12): "
               "Megatron never calls cudaProfilerStop, the capture runs until the job ends"}},
    /* an agent-loop rollout asked for end to end in its own section: verl
     * runs the job and its engine never profiles (not an error) */
    {.name = "agent_loop_e2e.yaml",
     .text = GP("") ACTOR("      ranks: [0]\n") "  rollout:\n    mode: async\n    profiler:\n      "
                                                "enable: true\n      ranks: [0]\n",
     .schema = "verl",
     .want = "steps=2 tool=npu mode=e2e settings={} | actor ranks=0 | ref ranks=0",
     .swarn = {"agent_loop_e2e.yaml:12:15: key 'actor_rollout_ref.rollout.profiler.enable': an "
               "agent-loop rollout is profiled in discrete mode only (verl starts its engine "
               "profiler only then) and tool_config.npu.discrete is false; rollout not selected"}},
    {.name = "agent_loop_e2e_explicit.yaml",
     .text = GP("") ACTOR("") "  rollout:\n    mode: async\n    profiler:\n      tool_config:\n"
                              "        npu:\n          discrete: false\n",
     .schema = "verl",
     .want = "steps=2 tool=npu mode=e2e settings={} | actor ranks=0 | ref ranks=0",
     .swarn = {"agent_loop_e2e_explicit.yaml:7:15: key 'actor_rollout_ref.actor.profiler.enable': "
               "enabled with all_ranks false and ranks []: profiles rank 0 (verl's default)",
               "agent_loop_e2e_explicit.yaml:13:21: key "
               "'actor_rollout_ref.rollout.profiler.tool_config.npu.discrete': an agent-loop "
               "rollout is profiled in discrete mode only (verl starts its engine profiler only "
               "then) and tool_config.npu.discrete is false; rollout not selected"}},
    /* unknown keys warn; verl's own extra keys are accepted silently */
    {.name = "unknown_keys.yaml",
     .text =
         "global_profiler:\n  tool: npu\n  steps: [2]\n  foo: 1\n  relocate_results: false\n"
         "  global_tool_config:\n    nsys:\n      controller_nsight_options: {trace: cuda}\n"
         "    other: {}\n" ACTOR(
             "      all_ranks: true\n      bar: 2\n      finish_hook_cmd: null\n"
             "      tool_config:\n        npu: {_target_: x, name: npu, baz: 3}\n"
             "        precision_debugger: {anything: 1}\n        gpu: {}\n") "trainer:\n  "
                                                                             "total_epochs: 15\n",
     .schema = "verl",
     .want = "steps=2 tool=npu mode=e2e settings={} | actor all | rollout all | ref all",
     .warn = {"unknown_keys.yaml:4:3: key 'global_profiler.foo': unknown key, ignored",
              "unknown_keys.yaml:9:5: key 'global_profiler.global_tool_config.other': unknown key, "
              "ignored",
              "unknown_keys.yaml:15:7: key 'actor_rollout_ref.actor.profiler.bar': unknown key, "
              "ignored",
              "unknown_keys.yaml:18:39: key "
              "'actor_rollout_ref.actor.profiler.tool_config.npu.baz': unknown key, ignored",
              "unknown_keys.yaml:20:9: key 'actor_rollout_ref.actor.profiler.tool_config.gpu': "
              "unknown key, ignored"}},
    {.name = "legacy_keys_ignored.yaml",
     .text = GP("")
         ACTOR("      ranks: [0]\n") "trainer:\n  profile_steps: [9]\nprofd:\n  tool: nsys\n",
     .schema = "verl",
     .want =
         "steps=2 tool=npu mode=e2e settings={} | actor ranks=0 | rollout ranks=0 | ref ranks=0",
     .warn = {"legacy_keys_ignored.yaml:12:9: key 'profd.tool': profd.tool only chooses the "
              "legacy schema's tool; set global_profiler.tool",
              "legacy_keys_ignored.yaml:10:18: key 'trainer.profile_steps': legacy key ignored: "
              "this config uses global_profiler.steps"}},
    /* interpolations in the user's own keys */
    {.name = "interpolations.yaml",
     .text = "base: /data\nwanted: [3]\nflag: true\n"
             "global_profiler:\n  tool: npu\n  steps: ${oc.select:wanted,[1]}\n"
             "  save_path: ${base}/prof\n" ACTOR("      all_ranks: ${flag}\n"),
     .schema = "verl",
     .want =
         "steps=3 tool=npu mode=e2e settings={} save=/data/prof | actor all | rollout all | ref "
         "all"},
    /* overrides on an empty file build the whole config; ~ removes the ranks */
    {.name = "empty_plus_overrides.yaml",
     .text = "",
     .ov = {"+global_profiler.steps=[7]", "+global_profiler.tool=torch",
            "+actor_rollout_ref.actor.profiler.enable=true",
            "+actor_rollout_ref.actor.profiler.ranks=[0,1]",
            "++actor_rollout_ref.actor.profiler.tool_config.torch.contents=['cuda','cpu']",
            "~actor_rollout_ref.actor.profiler.ranks"},
     .schema = "verl",
     .want =
         "steps=7 tool=torch mode=e2e settings={\"contents\":[\"cuda\",\"cpu\"]} | actor ranks=0 "
         "| rollout ranks=0 | ref ranks=0",
     .swarn = {"override '+actor_rollout_ref.actor.profiler.enable=true': key "
               "'actor_rollout_ref.actor.profiler.enable': enabled with all_ranks false and ranks "
               "[]: profiles rank 0 (verl's default)"}},
    /* legacy schema (verl-project 287ef7e2): npu with trainer.npu_profile;
     * options.roles pick the stages in discrete mode (mstx_profile.py:206-228) */
    {.name = "legacy_roles.yaml",
     .text = "trainer:\n  profile_steps: [3, 4]\n  npu_profile:\n    options:\n"
             "      save_path: ./profiler_data\n      roles: [actor_update, rollout_generate]\n"
             "      level: level1\n      with_npu: True\n      with_cpu: True\n      with_memory: "
             "True\n"
             "      analysis: False\n"
             "actor_rollout_ref:\n  profiler:\n    discrete: true\n    ranks: [2]\n"
             "critic:\n  profiler:\n    discrete: false\n    all_ranks: true\n",
     .schema = "verl-legacy",
     .want =
         "steps=3,4 tool=npu mode=discrete settings={\"level\":\"level1\",\"contents\":[\"npu\","
         "\"cpu\",\"memory\"],\"analysis\":false} save=./profiler_data | actor ranks=2 "
         "phases=update_actor | rollout ranks=2 | critic all mode=e2e"},
    {.name = "legacy_roles_e2e.yaml",
     .text = "trainer:\n  profile_steps: [3]\n  npu_profile:\n    options:\n      roles: "
             "[actor_update]\n"
             "actor_rollout_ref:\n  profiler:\n    ranks: [0]\n",
     .schema = "verl-legacy",
     .want =
         "steps=3 tool=npu mode=e2e settings={} | actor ranks=0 | rollout ranks=0 | ref ranks=0",
     .swarn = {"legacy_roles_e2e.yaml:5:14: key 'trainer.npu_profile.options.roles': roles only "
               "apply in discrete mode; the end-to-end capture records every role"}},
    /* legacy ranks: [] selects nobody (mstx_profile.py:150-170) */
    {.name = "legacy_no_rank.yaml",
     .text = "trainer:\n  profile_steps: [3]\nactor_rollout_ref:\n  profiler:\n    ranks: []\n",
     .schema = "verl-legacy",
     .no_window = "no profiler section selects a rank",
     .warn = {"legacy_no_rank.yaml:5:12: key 'actor_rollout_ref.profiler.ranks': ranks: [] and "
              "all_ranks: false select no rank (legacy schema); actor_rollout_ref.profiler not "
              "profiled",
              "legacy_no_rank.yaml:2:18: key 'trainer.profile_steps': no profiler section selects "
              "a rank; no window"}},
    {.name = "legacy_profd_tool.yaml",
     .text = "trainer:\n  profile_steps: [3]\n  worker_nsight_options: {trace: cuda}\n"
             "actor_rollout_ref:\n  profiler:\n    all_ranks: true\nprofd:\n  tool: torch\n",
     .schema = "verl-legacy",
     .want = "steps=3 tool=torch mode=e2e settings={} | actor all | rollout all | ref all"},
    /* MindSpeed-LLM FSDP2 (training.profile_*, Ascend/MindSpeed-LLM c77308a1):
     * defaults start 0, end -1, ranks [-1], level0; [start, end) from 0 */
    {.name = "ms_off.yaml",
     .text = "training:\n  profile: false\n  profile_step_start: 9\n",
     .schema = "mindspeed",
     .no_window = "training.profile is false"},
    {.name = "ms_defaults.yaml",
     .text = "training:\n  profile: true\n  lr: 1.0e-5\n  profile_foo: 1\n",
     .schema = "mindspeed",
     .want = "start=1 end=-1 tool=npu mode=e2e " MS_LEVEL0("text", "false") " save=./profile | * "
                                                                            "all",
     .warn = {"ms_defaults.yaml:4:3: key 'training.profile_foo': unknown key, ignored"}},
    /* -1 among the ranks is every rank (profiler.py:is_profiling_rank) */
    {.name = "ms_all_ranks.yaml",
     .text = "training:\n  profile: true\n  profile_ranks: [-1, 2]\n  profile_export_type: db\n"
             "  profile_data_simplification: true\n  profile_step_end: -1\n",
     .schema = "mindspeed",
     .want = "start=1 end=-1 tool=npu mode=e2e " MS_LEVEL0("db", "true") " save=./profile | * all",
     .warn = {"ms_all_ranks.yaml:3:18: key 'training.profile_ranks': -1 selects every rank; the "
              "other ranks are moot"}},
    {.name = "ms_no_rank.yaml",
     .text = "training:\n  profile: true\n  profile_ranks: []\n",
     .schema = "mindspeed",
     .no_window = "profile_ranks selects no rank",
     .warn = {"ms_no_rank.yaml:3:18: key 'training.profile_ranks': profile_ranks selects no rank; "
              "no window"}},
    /* Megatron-LM (d98e8a64): start 10, end 12, ranks [] = every rank; nsys
     * records iterations start+1..end */
    {.name = "megatron_defaults.yaml",
     .text = "profile: true\nnum_layers: 32\n",
     .schema = "megatron",
     .want = "start=11 end=13 tool=nsys mode=e2e settings={} | * all"},
    /* --use-pytorch-profiler records start..end-1 */
    {.name = "megatron_torch.yaml",
     .text =
         "profile: true\nuse_pytorch_profiler: true\nprofile_step_start: 3\nprofile_step_end: 4\n"
         "profile_ranks: [0, 8]\n",
     .schema = "megatron",
     .want = "start=3 end=4 tool=torch mode=e2e settings={\"contents\":[\"cpu\",\"cuda\"]} | * "
             "ranks=0,8"},
    /* MindSpeed-LLM's npu keys on Megatron: its Megatron-core path, [10, 12)
     * as logged (training.py:get_profiler), exactly [-1] = every rank */
    {.name = "megatron_mindspeed.yaml",
     .text = "profile: true\nprofile_ranks: [-1]\nprofile_level: level2\nprofile_with_cpu: true\n"
             "profile_save_path: /prof\n",
     .schema = "megatron",
     .want =
         "start=10 end=12 tool=npu mode=e2e settings={\"level\":\"level2\",\"contents\":[\"npu\","
         "\"cpu\"],\"analysis\":true,\"export_type\":\"text\",\"data_simplification\":false} "
         "save=/prof | * all"},
};

/* ---- malformed inputs: one line, file:line:column, the key ---- */

#define E(n, t, ...)                                                                               \
    {                                                                                              \
        .name = n, .text = t, .rc = PROFD_ECONFIG, __VA_ARGS__                                     \
    }

static const pcase_t errors[] = {
    E("indent.yaml", "global_profiler:\n  steps: [1]\n tool: npu\n",
      .err = "indent.yaml:3:2: YAML syntax error: did not find expected key"),
    E("tab.yaml", "global_profiler:\n\tsteps: [1]\n",
      .err = "tab.yaml:2:1: YAML syntax error: found character that cannot start any token"),
    E("not_a_mapping.yaml", "- global_profiler\n",
      .err = "not_a_mapping.yaml:1:1: expected a mapping with a profiling section, found a list"),
    E("no_profiling.yaml", "trainer:\n  total_epochs: 3\n",
      .err = "no_profiling.yaml:1:1: no profiling settings found (expected global_profiler, "
             "trainer.profile_steps, training.profile_*, profile_step_start... or a verl profiler "
             "section)"),
    E("gp_scalar.yaml", "global_profiler: 5\n",
      .err = "gp_scalar.yaml:1:18: key 'global_profiler': expected a mapping (global_profiler "
             "settings), found '5'"),
    E("steps_zero.yaml", GP(""), .ov = {"global_profiler.steps=[0]"},
      .err = "override 'global_profiler.steps=[0]': key 'global_profiler.steps': expected a list "
             "of positive step numbers or null, found '0'"),
    E("steps_scalar.yaml", "global_profiler:\n  steps: 2\n",
      .err = "steps_scalar.yaml:2:10: key 'global_profiler.steps': expected a list of positive "
             "step numbers or null, found '2'"),
    E("steps_float.yaml", "global_profiler:\n  steps: [1, 2.5]\n",
      .err = "steps_float.yaml:2:14: key 'global_profiler.steps': expected a list of positive step "
             "numbers or null, found '2.5'"),
    E("steps_string.yaml", "global_profiler:\n  steps: \"[1, 2]\"\n",
      .err = "steps_string.yaml:2:10: key 'global_profiler.steps': expected a list of positive "
             "step numbers or null, found '[1, 2]'"),
    E("tool_unknown.yaml", "global_profiler:\n  tool: vtune\n  steps: [1]\n",
      .err = "tool_unknown.yaml:2:9: key 'global_profiler.tool': expected one of nsys, npu, torch, "
             "torch_memory, precision_debugger, exec, sim or null, found 'vtune'"),
    E("level3.yaml", GP("") ACTOR("      tool_config:\n        npu:\n          level: level3\n"),
      .err = "level3.yaml:10:18: key 'actor_rollout_ref.actor.profiler.tool_config.npu.level': "
             "expected one of level_none, level0, level1, level2, found 'level3'"),
    E("contents_bad.yaml",
      GP("") ACTOR("      tool_config:\n        npu:\n          contents: [npu, gpu]\n"),
      .err = "contents_bad.yaml:10:27: key "
             "'actor_rollout_ref.actor.profiler.tool_config.npu.contents': expected a list of npu, "
             "cpu, memory, shapes, module, stack, found 'gpu'"),
    E("torch_contents_bad.yaml",
      GP("") ACTOR("      tool_config:\n        torch:\n          contents: [npu]\n"),
      .err = "torch_contents_bad.yaml:10:22: key "
             "'actor_rollout_ref.actor.profiler.tool_config.torch.contents': expected a list of "
             "cuda, cpu, memory, shapes, stack, found 'npu'"),
    E("enable_bad.yaml",
      GP("") "actor_rollout_ref:\n  actor:\n    profiler:\n      enable: maybe\n",
      .err = "enable_bad.yaml:7:15: key 'actor_rollout_ref.actor.profiler.enable': expected true "
             "or false, found 'maybe'"),
    E("all_ranks_bad.yaml", GP("") ACTOR("      all_ranks: 2\n"),
      .err = "all_ranks_bad.yaml:8:18: key 'actor_rollout_ref.actor.profiler.all_ranks': expected "
             "true or false, found '2'"),
    E("ranks_scalar.yaml", GP("") ACTOR("      ranks: 0\n"),
      .err = "ranks_scalar.yaml:8:14: key 'actor_rollout_ref.actor.profiler.ranks': expected a "
             "list of ranks (integers >= 0), found '0'"),
    E("ranks_negative.yaml", GP("") ACTOR("      ranks: [0, -1]\n"),
      .err = "ranks_negative.yaml:8:18: key 'actor_rollout_ref.actor.profiler.ranks': expected a "
             "list of ranks (integers >= 0), found '-1'"),
    E("role_scalar.yaml", GP("") "critic:\n  profiler: on\n",
      .err = "role_scalar.yaml:5:13: key 'critic.profiler': expected a mapping (the role's "
             "profiler settings), found 'on'"),
    E("tool_config_list.yaml", GP("") ACTOR("      tool_config: [npu]\n"),
      .err = "tool_config_list.yaml:8:20: key 'actor_rollout_ref.actor.profiler.tool_config': "
             "expected a mapping of tool settings, found a list"),
    E("analysis_bad.yaml", GP("") ACTOR("      tool_config:\n        npu: {analysis: sometimes}\n"),
      .err = "analysis_bad.yaml:9:25: key "
             "'actor_rollout_ref.actor.profiler.tool_config.npu.analysis': expected true or false, "
             "found 'sometimes'"),
    E("token_order.yaml",
      GP("") ACTOR(
          "      tool_config:\n        npu: {discrete: true}\n") "  rollout:\n    profiler:\n      "
                                                                 "tool_config:\n        npu: "
                                                                 "{profile_token_start: 60, "
                                                                 "profile_token_end: 30}\n",
      .err = "token_order.yaml:13:59: key "
             "'actor_rollout_ref.rollout.profiler.tool_config.npu.profile_token_end': expected a "
             "token index after profile_token_start (60), found '30'"),
    E("schedule_bad.yaml",
      GP("") ACTOR("      tool_config:\n        torch:\n          schedule: {wait: -1}\n"),
      .err = "schedule_bad.yaml:10:28: key "
             "'actor_rollout_ref.actor.profiler.tool_config.torch.schedule.wait': expected an "
             "integer 0..2147483647, found '-1'"),
    E("continuous_bad.yaml", "global_profiler:\n  steps: [1]\n  profile_continuous_steps: [true]\n",
      .err = "continuous_bad.yaml:3:29: key 'global_profiler.profile_continuous_steps': expected "
             "true or false, found a list"),
    E("rank_space_bad.yaml", GP("") "profd:\n  rollout_ranks: both\n",
      .err = "rank_space_bad.yaml:5:18: key 'profd.rollout_ranks': expected one of replica, "
             "global, found 'both'"),
    E("interp_missing.yaml", "global_profiler:\n  steps: ${my.steps}\n",
      .err = "interp_missing.yaml:2:10: key 'global_profiler.steps': interpolation '${my.steps}': "
             "key 'my.steps' not found"),
    E("interp_malformed.yaml",
      "global_profiler:\n  steps: [1]\n  tool: ${oc.select:t,npu\n" ACTOR(""),
      .err = "interp_malformed.yaml:3:9: key 'global_profiler.tool': malformed interpolation "
             "'${oc.select:t,npu': missing '}'"),
    E("interp_cycle.yaml", "a: ${b}\nb: ${a}\nglobal_profiler:\n  steps: ${a}\n",
      .err = "interp_cycle.yaml:1:4: key 'a': circular interpolation '${b}'"),
    E("interp_env.yaml",
      "global_profiler:\n  steps: [1]\n  tool: npu\n  save_path: ${oc.env:HOME}/p\n",
      .err = "interp_env.yaml:4:14: key 'global_profiler.save_path': interpolation "
             "'${oc.env:HOME}/p': oc.env is not read here (the daemon's environment is not the "
             "job's): profctl apply resolves it from the caller's environment"),
    E("interp_type.yaml", "n: 3\nglobal_profiler:\n  steps: ${n}\n",
      .err = "interp_type.yaml:3:10: key 'global_profiler.steps': expected a list of positive step "
             "numbers or null, found '3'"),
    E("override_syntax.yaml", GP(""), .ov = {"global_profiler.steps=[1,"},
      .err = "override 'global_profiler.steps=[1,': missing ']'"),
    /* Hydra 1.3.2 config_loader_impl.py:_apply_overrides_to_config */
    E("override_missing.yaml", GP(""), .ov = {"global_profiler.stepz=[1]"},
      .err = "override 'global_profiler.stepz=[1]': Could not override 'global_profiler.stepz'. To "
             "append to your config use +global_profiler.stepz=[1]"),
    E("override_exists.yaml", GP(""), .ov = {"+global_profiler.tool=torch"},
      .err = "override '+global_profiler.tool=torch': Could not append to config. An item is "
             "already at 'global_profiler.tool'. Either remove + prefix: "
             "'global_profiler.tool=torch' Or add a second + to add or override "
             "'global_profiler.tool': '++global_profiler.tool=torch'"),
    E("override_type.yaml", GP(""), .ov = {"global_profiler.steps=[a]"},
      .err = "override 'global_profiler.steps=[a]': key 'global_profiler.steps': expected a list "
             "of positive step numbers or null, found 'a'"),
    E("override_level.yaml", GP("") ACTOR(""),
      .ov = {"+actor_rollout_ref.actor.profiler.tool_config.npu.level=level3"},
      .err = "override '+actor_rollout_ref.actor.profiler.tool_config.npu.level=level3': key "
             "'actor_rollout_ref.actor.profiler.tool_config.npu.level': expected one of "
             "level_none, level0, level1, level2, found 'level3'"),
    E("legacy_roles_bad.yaml",
      "trainer:\n  profile_steps: [1]\n  npu_profile:\n    options:\n      roles: [actor_updat]\n",
      .err = "legacy_roles_bad.yaml:5:15: key 'trainer.npu_profile.options.roles': expected a list "
             "of all, rollout_generate, actor_compute_log_prob, actor_update, "
             "ref_compute_log_prob, found 'actor_updat'"),
    E("legacy_level_bad.yaml",
      "trainer:\n  profile_steps: [1]\n  npu_profile:\n    options:\n      level: 3\n",
      .err = "legacy_level_bad.yaml:5:14: key 'trainer.npu_profile.options.level': expected one of "
             "level_none, level0, level1, level2, found '3'"),
    E("legacy_ranks_bad.yaml",
      "trainer:\n  profile_steps: [1]\nactor_rollout_ref:\n  profiler:\n    ranks: [x]\n",
      .err = "legacy_ranks_bad.yaml:5:13: key 'actor_rollout_ref.profiler.ranks': expected a list "
             "of ranks (integers >= 0), found 'x'"),
    /* MindSpeed-LLM FSDP2's own checks (fsdp2/utils/arguments.py:
     * TrainingArguments.__post_init__ 671-680) */
    E("ms_end.yaml", "training:\n  profile: true\n  profile_step_start: 5\n  profile_step_end: 5\n",
      .err = "ms_end.yaml:4:21: key 'training.profile_step_end': `profile_step_end` must be > "
             "profile_step_start or -1"),
    E("ms_start.yaml", "training:\n  profile: true\n  profile_step_start: -1\n",
      .err = "ms_start.yaml:3:23: key 'training.profile_step_start': `profile_step_start` must be "
             ">= 0"),
    E("ms_level.yaml", "training:\n  profile: true\n  profile_level: level3\n",
      .err = "ms_level.yaml:3:18: key 'training.profile_level': expected one of level_none, "
             "level0, level1, level2, found 'level3'"),
    E("ms_export.yaml", "training:\n  profile: true\n  profile_export_type: csv\n",
      .err = "ms_export.yaml:3:24: key 'training.profile_export_type': expected one of text, db, "
             "found 'csv'"),
    E("ms_ranks.yaml", "training:\n  profile: true\n  profile_ranks: [a]\n",
      .err = "ms_ranks.yaml:3:19: key 'training.profile_ranks': expected a list of ranks (integers "
             ">= 0, or [-1]), found 'a'"),
    E("ms_profile.yaml", "training:\n  profile: sometimes\n",
      .err = "ms_profile.yaml:2:12: key 'training.profile': expected true or false, found "
             "'sometimes'"),
    E("override_interp_element.yaml", GP(""), .ov = {"global_profiler.steps='${oc.select:x,[0]}'"},
      .err = "override 'global_profiler.steps='${oc.select:x,[0]}'': key 'global_profiler.steps': "
             "expected a list of positive step numbers or null, found '0'"),
    /* MindSpeed-LLM's Megatron-core path: start >= 1
     * (features_manager/functional/profiling.py:ProfilingFeature.validate_args) */
    E("mcore_start_zero.yaml", "profile: true\nprofile_level: level1\nprofile_step_start: 0\n",
      .err = "mcore_start_zero.yaml:3:21: key 'profile_step_start': profile_step_start should be "
             "greater than 0 but now it is 0"),
    /* Megatron-LM's torch profiler: torch.profiler.schedule asserts active > 0 */
    E("megatron_torch_end.yaml",
      "profile: true\nuse_pytorch_profiler: true\nprofile_step_start: 5\nprofile_step_end: 5\n",
      .err = "megatron_torch_end.yaml:4:19: key 'profile_step_end': Invalid profiler schedule "
             "arguments (torch.profiler.schedule: active = profile_step_end - profile_step_start "
             "must be > 0)"),
    /* verl refuses nsys with steps and no worker options
     * (verl-project 1dda039b trainer_base.py:276-286) */
    E("nsys_no_worker_options.yaml",
      "global_profiler:\n  tool: nsys\n  steps: [1]\n  global_tool_config:\n    nsys:\n"
      "      worker_nsight_options: null\n" ACTOR(""),
      .err = "nsys_no_worker_options.yaml:6:30: key "
             "'global_profiler.global_tool_config.nsys.worker_nsight_options': "
             "worker_nsight_options must be set when using nsys with profile_steps"),
    /* a ??? value read: OmegaConf's MissingMandatoryValue */
    E("mandatory.yaml", "global_profiler:\n  tool: npu\n  steps: ???\n" ACTOR(""),
      .err = "mandatory.yaml:3:10: key 'global_profiler.steps': Missing mandatory value: "
             "global_profiler.steps"),
};

static void test_profcfg_rules(void **state)
{
    RUN(rules);
}

static void test_profcfg_errors(void **state)
{
    RUN(errors);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profcfg_rules),
        cmocka_unit_test(test_profcfg_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
