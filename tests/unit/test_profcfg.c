// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Training configurations -> window requests, by tables: every corpus file,
 * the examples of the user documents (seeds and verl's Ascend profiling
 * doc), Hydra overrides, each semantic rule, and malformed inputs with their
 * exact messages.
 *
 * Every expectation is written from the frameworks' documents and code
 * (the seeds, verl's and MindSpeed-LLM's profiling docs, the commits named
 * in docs/profiling-config.md), in the compact form of profcfg_case.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profcfg.h"
#include "profd/errors.h"

#include "profcfg_case.h"

/* ---- every file of the corpus ---- */

/* MindSpeed-LLM FSDP2 (Ascend/MindSpeed-LLM c77308a1 fsdp2/utils/profiler.py:
 * 79-88): [start, end) counts updates from 0, profd's steps from 1, so [5, 6)
 * is step 6; contents npu, then cpu, stack, memory, shapes in ProfilerConfig's
 * field order; analysis by tensorboard_trace_handler; export text. */
#define MS_SETTINGS(contents)                                                                      \
    "settings={\"level\":\"level1\",\"contents\":" contents ",\"analysis\":true,"                  \
    "\"export_type\":\"text\",\"data_simplification\":false}"

static const pcase_t corpus[] = {
    {.name = "mindspeed/mindspeed_llm_fsdp2_profile_example1.yaml",
     .corpus = true,
     .schema = "mindspeed",
     .want = "start=6 end=7 tool=npu mode=e2e " MS_SETTINGS(
         "[\"npu\",\"cpu\"]") " save=./profile_dir | * ranks=0"},
    {.name = "mindspeed/mindspeed_llm_fsdp2_profile_example2.yaml",
     .corpus = true,
     .schema = "mindspeed",
     .want = "start=6 end=7 tool=npu mode=e2e " MS_SETTINGS(
         "[\"npu\",\"cpu\",\"stack\",\"memory\",\"shapes\"]") " save=./profile_dir_with_stack | * "
                                                              "ranks=0"},
    /* verl's own defaults: steps null profiles nothing (trainer_base.py:434) */
    {.name = "verl/verl_generated_ppo_trainer_profiler_sections.yaml",
     .corpus = true,
     .schema = "verl",
     .no_window = "global_profiler.steps is null"},
    {.name = "verl/verl_legacy_npu_profile.yaml",
     .corpus = true,
     .schema = "verl-legacy",
     .no_window = "npu_profile options alone request no steps",
     .warn = {"verl_legacy_npu_profile.yaml:3:1: key 'options': npu_profile options alone request "
              "no steps (they belong under trainer.npu_profile, steps in trainer.profile_steps); "
              "no window"}},
    {.name = "verl/verl_legacy_ppo_trainer_profile_sections.yaml",
     .corpus = true,
     .schema = "verl-legacy",
     .no_window = "trainer.profile_steps lists no step"},
    {.name = "verl/verl_npu_profile_legacy_options.yaml",
     .corpus = true,
     .schema = "verl-legacy",
     .no_window = "npu_profile options alone request no steps",
     .warn = {"verl_npu_profile_legacy_options.yaml:3:1: key 'options': npu_profile options alone "
              "request no steps (they belong under trainer.npu_profile, steps in "
              "trainer.profile_steps); no window"}},
    {.name = "verl/verl_ppo_trainer_global_profiler.yaml",
     .corpus = true,
     .schema = "verl",
     .no_window = "global_profiler.steps is null"},
    {.name = "verl/verl_profiler_profiler.yaml",
     .corpus = true,
     .schema = "verl",
     .no_window = "a profiler section alone requests no steps",
     .warn = {"verl_profiler_profiler.yaml:3:1: a profiler section alone requests no steps (they "
              "come from global_profiler.steps); no window"}},
    {.name = "verl/verlproj_actor_profiler.yaml",
     .corpus = true,
     .schema = "verl",
     .no_window = "a profiler section alone requests no steps",
     .warn = {"verlproj_actor_profiler.yaml:2:1: key 'profiler': a profiler section alone requests "
              "no steps (they come from global_profiler.steps); no window"}},
    {.name = "verl/verlproj_ascend_profiling_doc_examples.txt",
     .corpus = true,
     .schema = "none",
     .no_window = "the configuration is empty",
     .warn = {"verlproj_ascend_profiling_doc_examples.txt:1:1: empty configuration; no window"}},
    {.name = "verl/verlproj_generated_ppo_trainer_profiler_sections.yaml",
     .corpus = true,
     .schema = "verl",
     .no_window = "global_profiler.steps is null"},
    {.name = "verl/verlproj_ppo_trainer_global_profiler.yaml",
     .corpus = true,
     .schema = "verl",
     .no_window = "global_profiler.steps is null"},
    {.name = "verl/verlproj_profiler_profiler.yaml",
     .corpus = true,
     .schema = "verl",
     .no_window = "a profiler section alone requests no steps",
     .warn = {"verlproj_profiler_profiler.yaml:3:1: a profiler section alone requests no steps "
              "(they come from global_profiler.steps); no window"}},
    {.name = "verl/verlproj_rollout_profiler.yaml",
     .corpus = true,
     .schema = "verl",
     .no_window = "a profiler section alone requests no steps",
     .warn = {"verlproj_rollout_profiler.yaml:2:1: key 'profiler': a profiler section alone "
              "requests no steps (they come from global_profiler.steps); no window"}},
};

/* ---- the examples of the user documents, as written there ---- */

#define SEED_E2E(discrete)                                                                         \
    "global_profiler:\n"                                                                           \
    "   steps: [1, 2, 5]\n"                                                                        \
    "actor_rollout_ref:\n"                                                                         \
    "   actor:\n"                                                                                  \
    "      profiler:\n"                                                                            \
    "         enable: True\n"                                                                      \
    "         all_ranks: True\n"                                                                   \
    "         tool_config:\n"                                                                      \
    "            npu:\n"                                                                           \
    "               discrete: " discrete "\n"                                                      \
    "  # rollout & ref follow actor settings\n"

static const char seed001_discrete[] =
    "global_profiler:\n"
    "   steps: [1, 2, 5]\n"
    "   save_path: ./outputs/profile\n"
    "actor_rollout_ref:\n"
    "   actor:\n"
    "      profiler:\n"
    "         enable: True  # Set to True to profile training\n"
    "         all_ranks: False\n"
    "         ranks: [0]  # Global Rank 0\n"
    "         tool_config:\n"
    "            npu:\n"
    "               discrete: True\n"
    "               contents: [npu, cpu]\n"
    "   rollout:\n"
    "      profiler:\n"
    "         enable: True  # Set to True to profile inference\n"
    "         all_ranks: False\n"
    "         ranks: [0]  # In Agent Loop mode, this is the Replica Rank (e.g., 0-th instance)\n"
    "         tool_config:\n"
    "            npu:\n"
    "               discrete: True  # Must be enabled in Agent Loop mode\n"
    "   # ref follow actor settings\n";

static const char seed004_mindspeed[] = "training:\n"
                                        "  # ... other training parameters ...\n"
                                        "\n"
                                        "  # --- Profiling ---\n"
                                        "  profile: true\n"
                                        "  profile_step_start: 5\n"
                                        "  profile_step_end: 10\n"
                                        "  profile_ranks: [0]\n"
                                        "  profile_level: level1\n"
                                        "  profile_export_type: text\n"
                                        "  profile_data_simplification: false\n"
                                        "  profile_with_cpu: true\n"
                                        "  profile_with_stack: true\n"
                                        "  profile_with_memory: true\n"
                                        "  profile_record_shapes: true\n"
                                        "  profile_save_path: ./npu_profile\n";

/* The documents' snippets write the actor's section only ("rollout & ref
 * follow actor settings"); read on their own, rollout and ref take every key
 * they do not set from the actor's (docs/profiling-config.md). With no tool
 * anywhere and one tool in tool_config, that tool, with a warning. */
#define NO_TOOL(file, pos, role)                                                                   \
    file ":" pos ": key 'actor_rollout_ref." role                                                  \
         ".profiler.enable': no tool set (global_profiler.tool is null); using 'npu', the only "   \
         "tool "                                                                                   \
         "in tool_config"

static const pcase_t seeds[] = {
    /* 000 / 001: data collection on Ascend (current schema) */
    {.name = "seed000_disable.yaml",
     .text = "global_profiler:\n   steps: null # disable profile\n",
     .schema = "verl",
     .no_window = "global_profiler.steps is null"},
    /* steps [1, 2, 5]: a window per step; all_ranks: every rank of the actor,
     * and of rollout and ref, which follow it; npu's discrete false: e2e */
    {.name = "seed000_e2e.yaml",
     .text = SEED_E2E("False"),
     .schema = "verl",
     .want = "steps=1,2,5 tool=npu mode=e2e settings={} | actor all | rollout all | ref all",
     .swarn = {NO_TOOL("seed000_e2e.yaml", "6:18", "actor")}},
    {.name = "seed000_discrete.yaml",
     .text = SEED_E2E("True"),
     .schema = "verl",
     .want = "steps=1,2,5 tool=npu mode=discrete settings={} | actor all | rollout all | ref all",
     .swarn = {NO_TOOL("seed000_discrete.yaml", "6:18", "actor")}},
    {.name = "seed001_e2e.yaml",
     .text = "global_profiler:\n"
             "   steps: [1, 2, 5]\n"
             "   save_path: ./outputs/profile\n"
             "actor_rollout_ref:\n"
             "   actor:  # Set actor role profiler collection configuration parameters\n"
             "      profiler:\n"
             "         enable: True\n"
             "         all_ranks: True\n"
             "         tool_config:\n"
             "            npu:\n"
             "               discrete: False\n"
             "               contents: [npu, cpu]  # Control collection list, default cpu, npu\n"
             "  # rollout & ref follow actor settings\n",
     .schema = "verl",
     .want = "steps=1,2,5 tool=npu mode=e2e settings={\"contents\":[\"npu\",\"cpu\"]} "
             "save=./outputs/profile | actor all | rollout all | ref all",
     .swarn = {NO_TOOL("seed001_e2e.yaml", "7:18", "actor")}},
    /* rank 0 of the actor; the rollout's own section, rank 0; ref follows */
    {.name = "seed001_discrete.yaml",
     .text = seed001_discrete,
     .schema = "verl",
     .want = "steps=1,2,5 tool=npu mode=discrete settings={\"contents\":[\"npu\",\"cpu\"]} "
             "save=./outputs/profile | actor ranks=0 | rollout ranks=0 | ref ranks=0",
     .swarn = {NO_TOOL("seed001_discrete.yaml", "7:18", "actor"),
               NO_TOOL("seed001_discrete.yaml", "16:18", "rollout")}},
    /* the same in an agent-loop job on vLLM: the rollout's ranks are replica
     * indices (the Ascend guide; no relocate_results / finish_hook_* keys);
     * vLLM profiles at level1 whatever the level */
    {.name = "seed001_discrete_agent_loop.yaml",
     .text = seed001_discrete,
     .ov = {"+actor_rollout_ref.rollout.mode=async", "+actor_rollout_ref.rollout.name=vllm",
            "+global_profiler.tool=npu"},
     .schema = "verl",
     .want = "steps=1,2,5 tool=npu mode=discrete settings={\"contents\":[\"npu\",\"cpu\"]} "
             "save=./outputs/profile | actor ranks=0 | rollout replicas=0 | ref ranks=0",
     .swarn = {"seed001_discrete_agent_loop.yaml:18:17: key "
               "'actor_rollout_ref.rollout.profiler.ranks': agent-loop rollout: ranks [0] are "
               "inference replica indices (+profd.rollout_ranks=global reads them as global "
               "ranks)",
               "seed001_discrete_agent_loop.yaml:16:18: key "
               "'actor_rollout_ref.rollout.profiler.enable': vllm rollout ignores profiler level "
               "'level0' (uses level1)"}},
    /* 002: the legacy schema: no npu_profile section, so nsys; one section
     * for the hybrid worker: actor, rollout and ref alike */
    {.name = "seed002_disable.yaml",
     .text = "trainer:\n    profile_steps: null # disable profile\n",
     .schema = "verl-legacy",
     .no_window = "trainer.profile_steps lists no step"},
    {.name = "seed002_e2e.yaml",
     .text = "trainer:\n    profile_steps: [1, 2, 5]\nactor_rollout_ref:\n     profiler:\n"
             "         discrete: False\n         all_ranks: True\n",
     .schema = "verl-legacy",
     .want = "steps=1,2,5 tool=nsys mode=e2e settings={} | actor all | rollout all | ref all"},
    {.name = "seed002_discrete.yaml",
     .text = "trainer:\n    profile_steps: [1, 2, 5]\nactor_rollout_ref:\n     profiler:\n"
             "         discrete: True\n         all_ranks: False\n         ranks: [0, 1]\n",
     .schema = "verl-legacy",
     .want = "steps=1,2,5 tool=nsys mode=discrete settings={} | actor ranks=0,1 | rollout "
             "ranks=0,1 | ref ranks=0,1"},
    /* 003: the command lines of the v0.6 guide, over verl's generated config
     * (volcengine b178a3cd): the rollout follows the actor by oc.select, the
     * ref writes its own enable: false */
    {.name = GEN_OLD,
     .corpus = true,
     .ov = {"global_profiler.tool=npu", "global_profiler.steps=[2]",
            "global_profiler.save_path=outputs/profile",
            "actor_rollout_ref.actor.profiler.enable=True",
            "actor_rollout_ref.actor.profiler.ranks=[0]",
            "actor_rollout_ref.actor.profiler.tool_config.npu.level=level1",
            "actor_rollout_ref.actor.profiler.tool_config.npu.discrete=False",
            "actor_rollout_ref.actor.profiler.tool_config.npu.contents=['npu']",
            "actor_rollout_ref.actor.profiler.tool_config.npu.analysis=True"},
     .schema = "verl",
     .want = "steps=2 tool=npu mode=e2e settings={\"contents\":[\"npu\"],\"level\":\"level1\","
             "\"analysis\":true} save=outputs/profile | actor ranks=0 | rollout ranks=0"},
    {.name = GEN_OLD,
     .corpus = true,
     .ov = {"global_profiler.tool=npu", "global_profiler.steps=[2]",
            "global_profiler.save_path=\"outputs/profile\"",
            "actor_rollout_ref.actor.profiler.enable=True",
            "actor_rollout_ref.rollout.profiler.enable=False",
            "actor_rollout_ref.actor.profiler.ranks=[0]",
            "actor_rollout_ref.ref.profiler.enable=False",
            "actor_rollout_ref.ref.profiler.ranks=[0]",
            "actor_rollout_ref.actor.profiler.tool_config.npu.level=\"level0\"",
            "actor_rollout_ref.actor.profiler.tool_config.npu.discrete=True",
            "actor_rollout_ref.actor.profiler.tool_config.npu.contents=['npu']",
            "actor_rollout_ref.actor.profiler.tool_config.npu.analysis=True"},
     .schema = "verl",
     .want = "steps=2 tool=npu mode=discrete settings={\"contents\":[\"npu\"],\"level\":\"level0\","
             "\"analysis\":true} save=outputs/profile | actor ranks=0"},
    /* Hydra overrides of the guides: ++ enables the ref, whose own npu
     * settings (contents []) and empty ranks (rank 0, DistProfiler) apply */
    {.name = GEN_OLD,
     .corpus = true,
     .ov = {"global_profiler.tool=npu", "global_profiler.steps=[2]",
            "actor_rollout_ref.actor.profiler.enable=True",
            "actor_rollout_ref.actor.profiler.ranks=[0,1]",
            "actor_rollout_ref.actor.profiler.tool_config.npu.contents=['npu','cpu']",
            "+global_profiler.note=try1", "++actor_rollout_ref.ref.profiler.enable=True"},
     .schema = "verl",
     .want = "steps=2 tool=npu mode=e2e settings={\"contents\":[\"npu\",\"cpu\"],\"level\":"
             "\"level0\",\"analysis\":true} save=outputs/profile | actor ranks=0,1 | rollout "
             "ranks=0,1 | ref ranks=0 settings={\"contents\":[],\"level\":\"level0\",\"analysis\":"
             "true}",
     .warn = {"override '+global_profiler.note=try1': key 'global_profiler.note': unknown key, "
              "ignored"},
     .swarn = {"verl_generated_ppo_trainer_profiler_sections.yaml:36:14: key "
               "'actor_rollout_ref.ref.profiler.ranks': enabled with all_ranks false and ranks []: "
               "profiles rank 0 (verl's default)"}},
    /* 004: MindSpeed-LLM FSDP2: [5, 10) from 0 is profd's steps 6-10 */
    {.name = "seed004_mindspeed.yaml",
     .text = seed004_mindspeed,
     .schema = "mindspeed",
     .want = "start=6 end=11 tool=npu mode=e2e " MS_SETTINGS(
         "[\"npu\",\"cpu\",\"stack\",\"memory\",\"shapes\"]") " save=./npu_profile | * ranks=0"},
    {.name = "seed004_example1.yaml",
     .text =
         "training:\n"
         "  # ... \xe5\x85\xb6\xe4\xbb\x96\xe8\xae\xad\xe7\xbb\x83\xe5\x8f\x82\xe6\x95\xb0 ...\n"
         "\n"
         "  # --- Profiling: initial analysis ---\n"
         "  profile: true\n"
         "  profile_step_start: 5\n"
         "  profile_step_end: 6 # [5, 6)\n"
         "  profile_ranks: [0] # rank 0 only\n"
         "  profile_level: level1\n"
         "  profile_with_cpu: true\n"
         "  profile_save_path: ./profile_dir\n",
     .schema = "mindspeed",
     .want = "start=6 end=7 tool=npu mode=e2e " MS_SETTINGS(
         "[\"npu\",\"cpu\"]") " save=./profile_dir | * ranks=0"},
    {.name = "seed004_example2.yaml",
     .text = "training:\n"
             "  profile: true\n"
             "  profile_step_start: 5\n"
             "  profile_step_end: 6 # [5, 6)\n"
             "  profile_ranks: [0]\n"
             "  profile_level: level1\n"
             "  profile_with_cpu: true\n"
             "  profile_with_stack: true # operator call stacks\n"
             "  profile_with_memory: true # memory\n"
             "  profile_record_shapes: true # tensor shapes\n"
             "  profile_save_path: ./profile_dir_with_stack\n",
     .schema = "mindspeed",
     .want = "start=6 end=7 tool=npu mode=e2e " MS_SETTINGS(
         "[\"npu\",\"cpu\",\"stack\",\"memory\",\"shapes\"]") " save=./profile_dir_with_stack | * "
                                                              "ranks=0"},
};

/* verl's ascend_profiling_en.rst (corpus/verl/verlproj_ascend_profiling_doc_examples.txt) */
static const pcase_t doc_examples[] = {
    {.name = "doc_disable.yaml",
     .text = "global_profiler:\n  steps: null # disable profile\n",
     .schema = "verl",
     .no_window = "global_profiler.steps is null"},
    {.name = "doc_e2e.yaml",
     .text =
         "global_profiler:\n"
         "   steps: [1, 2, 5]\n"
         "   save_path: ./outputs/profile\n"
         "actor_rollout_ref:\n"
         "   actor:  # Set the profiler collection configuration parameters for the actor role\n"
         "      profiler:\n"
         "         enable: True\n"
         "         all_ranks: True\n"
         "         tool_config:\n"
         "            npu:\n"
         "               discrete: True\n"
         "               contents: [npu, cpu]  # Control collection list\n",
     .schema = "verl",
     .want = "steps=1,2,5 tool=npu mode=discrete settings={\"contents\":[\"npu\",\"cpu\"]} "
             "save=./outputs/profile | actor all | rollout all | ref all",
     .swarn = {NO_TOOL("doc_e2e.yaml", "7:18", "actor")}},
    /* profile_token_start 30, end 60 on the rollout: a sub-step schedule
     * over decode steps, wait 30, active 30 (discrete only) */
    {.name = "doc_separation.yaml",
     .text =
         "global_profiler:\n"
         "   steps: [1, 2, 5]\n"
         "   save_path: ./outputs/profile\n"
         "actor_rollout_ref:\n"
         "   actor:\n"
         "      profiler:\n"
         "         enable: True  # Set to True to collect the training phase\n"
         "         all_ranks: False\n"
         "         ranks: [0]  # Global Rank 0\n"
         "         tool_config:\n"
         "            npu:\n"
         "               discrete: True\n"
         "               contents: [npu, cpu]\n"
         "   rollout:\n"
         "      profiler:\n"
         "         enable: True  # Set to True to collect the inference phase\n"
         "         all_ranks: False\n"
         "         ranks: [0]  # Global GPU rank(s); each is mapped to the replica that owns it\n"
         "         tool_config:\n"
         "            npu:\n"
         "               discrete: True  # Discrete mode must be enabled in Agent Loop mode\n"
         "               profile_token_start: 30\n"
         "               profile_token_end: 60\n"
         "   # ref follow actor settings\n",
     .schema = "verl",
     .want = "steps=1,2,5 tool=npu mode=discrete settings={\"contents\":[\"npu\",\"cpu\"]} "
             "save=./outputs/profile | actor ranks=0 | rollout ranks=0 schedule=0,30,0,30,1 | "
             "ref ranks=0",
     .swarn = {NO_TOOL("doc_separation.yaml", "7:18", "actor"),
               NO_TOOL("doc_separation.yaml", "16:18", "rollout")}},
    {.name = GEN_NEW,
     .corpus = true,
     .ov = {"global_profiler.steps=null"},
     .schema = "verl",
     .no_window = "global_profiler.steps is null"},
    /* verl-project 1dda039b's generated config: rollout follows the actor key
     * by key (contents, level, analysis, discrete); ref does not */
    {.name = GEN_NEW,
     .corpus = true,
     .ov = {"global_profiler.tool=npu", "global_profiler.steps=[1, 2, 5]",
            "global_profiler.save_path=./outputs/profile",
            "actor_rollout_ref.actor.profiler.enable=True",
            "actor_rollout_ref.actor.profiler.all_ranks=False",
            "actor_rollout_ref.actor.profiler.ranks=[0]",
            "actor_rollout_ref.actor.profiler.tool_config.npu.discrete=True",
            "actor_rollout_ref.actor.profiler.tool_config.npu.contents=['npu','cpu']",
            "actor_rollout_ref.actor.profiler.tool_config.npu.level=level1",
            "actor_rollout_ref.actor.profiler.tool_config.npu.analysis=False"},
     .schema = "verl",
     .want =
         "steps=1,2,5 tool=npu mode=discrete settings={\"contents\":[\"npu\",\"cpu\"],\"level\":"
         "\"level1\",\"analysis\":false} save=./outputs/profile | actor ranks=0 | rollout "
         "ranks=0"},
    {.name = GEN_NEW,
     .corpus = true,
     .ov = {"global_profiler.tool=npu", "global_profiler.steps=[1, 2, 5]",
            "global_profiler.save_path=./outputs/profile",
            "actor_rollout_ref.actor.profiler.enable=True",
            "actor_rollout_ref.actor.profiler.all_ranks=False",
            "actor_rollout_ref.actor.profiler.ranks=[0]",
            "actor_rollout_ref.actor.profiler.tool_config.npu.discrete=True",
            "actor_rollout_ref.actor.profiler.tool_config.npu.contents=['npu','cpu']",
            "actor_rollout_ref.actor.profiler.tool_config.npu.level=level1",
            "actor_rollout_ref.actor.profiler.tool_config.npu.analysis=False",
            "actor_rollout_ref.rollout.profiler.enable=True",
            "actor_rollout_ref.rollout.profiler.all_ranks=False",
            "actor_rollout_ref.rollout.profiler.ranks=[0]",
            "actor_rollout_ref.rollout.profiler.tool_config.npu.profile_token_start=30",
            "actor_rollout_ref.rollout.profiler.tool_config.npu.profile_token_end=60"},
     .schema = "verl",
     .want =
         "steps=1,2,5 tool=npu mode=discrete settings={\"contents\":[\"npu\",\"cpu\"],\"level\":"
         "\"level1\",\"analysis\":false} save=./outputs/profile | actor ranks=0 | rollout "
         "ranks=0 schedule=0,30,0,30,1"},
};

static void test_profcfg_corpus(void **state)
{
    RUN(corpus);
}

static void test_profcfg_seed_examples(void **state)
{
    RUN(seeds);
}

static void test_profcfg_doc_examples(void **state)
{
    RUN(doc_examples);
}

/* The settings text itself, as the planner and the backends read it. */
static void test_profcfg_settings_text(void **state)
{
    const char text[] = "global_profiler:\n  tool: npu\n  steps: [2]\n" ACTOR(
        "      ranks: [0]\n      tool_config:\n        npu:\n          _target_: x.NPUToolConfig\n"
        "          name: npu\n          level: level1\n          contents: [npu, cpu]\n"
        "          analysis: false\n          discrete: true\n");
    pd_profcfg_t out;
    char err[256];
    assert_int_equal(pd_profcfg_load("p.yaml", text, strlen(text), NULL, 0, &out, err, sizeof(err)),
                     0);
    assert_int_equal(out.n_specs, 1);
    assert_string_equal(out.specs[0].settings,
                        "{\"level\":\"level1\",\"contents\":[\"npu\",\"cpu\"],\"analysis\":false}");
    assert_string_equal(out.specs[0].tool, "npu");
    assert_string_equal(pp_mode_name(out.specs[0].mode), "discrete");
    assert_string_equal(out.specs[0].source, "p.yaml");
    assert_int_equal(out.specs[0].start, PP_NONE);
    assert_int_equal(out.specs[0].end, PP_NONE);
    assert_null(out.specs[0].job);
    pd_profcfg_free(&out);
    pd_profcfg_free(&out); /* idempotent */
}

/* NULL file name and text; a NUL-free length is honoured. */
static void test_profcfg_api_edges(void **state)
{
    pd_profcfg_t out;
    char err[256];
    const char text[] = "training:\n  profile: true\n  profile_ranks: [0]\n# trailing junk: [";
    assert_int_equal(
        pd_profcfg_load(NULL, text, strlen(text) - 10, NULL, 0, &out, err, sizeof(err)), 0);
    assert_string_equal(out.schema, "mindspeed");
    assert_string_equal(out.specs[0].source, "<config>");
    pd_profcfg_free(&out);
    assert_int_equal(pd_profcfg_load("x", NULL, 5, NULL, 0, &out, err, sizeof(err)), PROFD_EINVAL);
    assert_int_equal(pd_profcfg_load("x", NULL, 0, NULL, 0, &out, err, sizeof(err)), 0);
    assert_string_equal(out.schema, "none");
    pd_profcfg_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profcfg_corpus),       cmocka_unit_test(test_profcfg_seed_examples),
        cmocka_unit_test(test_profcfg_doc_examples), cmocka_unit_test(test_profcfg_settings_text),
        cmocka_unit_test(test_profcfg_api_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
