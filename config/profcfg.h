/*
 * Training configurations as users already write them (verl current and
 * legacy schemas, MindSpeed FSDP2 training.profile_*, Megatron-style
 * profile_step_start/end/ranks) turned into window requests.
 *
 * Pure: text in, records out; no file system, clock or sockets (the caller
 * reads the file). The planner (plan.h) then turns each request into windows.
 */
#ifndef PD_PROFCFG_H
#define PD_PROFCFG_H

#include <stddef.h>

#include "profd/proto.h"

typedef struct pd_profcfg {
    pp_window_spec_t *specs; /* window requests, in the order they apply */
    size_t n_specs;
    char **warnings; /* "FILE:LINE:COL: key 'K': ..." lines */
    size_t n_warnings;
    char *schema; /* "verl", "verl-legacy", "mindspeed", "megatron";
                     "none" for an empty document */
} pd_profcfg_t;

/*
 * Parse `text` (YAML, `len` bytes; `file` names it in messages) with Hydra
 * style overrides ("a.b=[1,2]", "+a.b=x", "~a.b") applied first, resolve
 * OmegaConf interpolations, detect the schema and build the requests.
 * A config that profiles nothing (steps: null, profile: false) gives zero
 * requests and no error.
 * Returns 0, or PROFD_ECONFIG with `err` set to one line naming
 * file:line:column, the key, what was expected and what was found; *out is
 * untouched on error. Free with pd_profcfg_free().
 */
int pd_profcfg_load(const char *file, const char *text, size_t len, char *const *overrides,
                    size_t n_overrides, pd_profcfg_t *out, char *err, size_t errlen);

void pd_profcfg_free(pd_profcfg_t *cfg);

#endif
