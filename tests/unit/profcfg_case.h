/* Table-driven cases for the profiling-config tests (test_profcfg*.c). */
#ifndef PROFCFG_CASE_H
#define PROFCFG_CASE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct pcase {
    const char *name; /* file name in messages; a corpus path when corpus is set */
    bool corpus;
    const char *text;   /* inline YAML */
    const char *ov[16]; /* overrides */
    int rc;
    const char *schema;
    const char *specs;   /* JSON array of the requests */
    const char *warn[6]; /* file-level warnings */
    const char *err;
} pcase_t;

/* Load the case and compare everything: the requests as wire JSON, the
 * schema, the file-level warnings, or the exact error (and *out untouched).
 * PROFCFG_DUMP=1 prints what each case produced instead. */
void run_case(const pcase_t *c);
void run_table(const pcase_t *t, size_t n);
#define RUN(table) run_table(table, sizeof(table) / sizeof(table[0]))

/* verl's generated ppo_trainer configs in the corpus */
#define GEN_OLD "verl/verl_generated_ppo_trainer_profiler_sections.yaml"
#define GEN_NEW "verl/verlproj_generated_ppo_trainer_profiler_sections.yaml"

#define ACTOR(body) "actor_rollout_ref:\n  actor:\n    profiler:\n      enable: true\n" body
#define GP(body)    "global_profiler:\n  tool: npu\n  steps: [2]\n" body

#endif
