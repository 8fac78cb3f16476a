// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Table-driven cases for the profiling-config tests (test_profcfg*.c).
 *
 * A case's expected requests are written by hand, from the frameworks'
 * documented semantics, in a compact form (`want`); the runner renders what
 * the reader produced in the same form and compares:
 *
 *   REQUEST [|| REQUEST]           several requests (torch_memory every step)
 *   REQUEST = STEPS [continuous] tool=T mode=M settings=JSON [save=P]
 *             [schedule=S,W,U,A,R] (| SELECTOR)*
 *   STEPS   = steps=1,2,5 | start=6 end=7 (end -1: open)
 *   SELECTOR = ROLE|* [all] [ranks=0,1] [replicas=0] [phases=a,b] [tool=T]
 *              [mode=M] [settings=JSON] [schedule=S,W,U,A,R]
 *
 * (schedule: skip_first, wait, warmup, active, repeat). Settings compare as
 * JSON objects (key order aside); a selector lists only what differs from
 * the request. "" is no request; then `no_window` must be in the reason.
 */
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
    const char *want;      /* the requests (above) */
    const char *warn[6];   /* file-level warnings, exactly */
    const char *swarn[6];  /* the requests' warnings, exactly, in order */
    const char *no_window; /* in the reason when there is no request */
    const char *err;       /* the exact error */
} pcase_t;

/* Load the case and compare everything: the requests in the compact form,
 * the schema, the warnings, the no-window reason, or the exact error (and
 * *out untouched). A mismatch prints the case, what was expected and what
 * was found. */
void run_case(const pcase_t *c);
void run_table(const pcase_t *t, size_t n);
#define RUN(table) run_table(table, sizeof(table) / sizeof(table[0]))

/* verl's generated ppo_trainer configs in the corpus */
#define GEN_OLD "verl/verl_generated_ppo_trainer_profiler_sections.yaml"
#define GEN_NEW "verl/verlproj_generated_ppo_trainer_profiler_sections.yaml"

#define ACTOR(body) "actor_rollout_ref:\n  actor:\n    profiler:\n      enable: true\n" body
#define GP(body)    "global_profiler:\n  tool: npu\n  steps: [2]\n" body

#endif
