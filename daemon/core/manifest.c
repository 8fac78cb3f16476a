// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/* The manifest record of a finished window (see manifest.h). */
#include <stdlib.h>
#include <string.h>

#include "manifest.h"

int pd_manifest_cmp(const void *a, const void *b)
{
    const pp_capture_t *x = a, *y = b;
    int c = strcmp(x->role, y->role);
    if (c == 0) {
        c = strcmp(x->phase ? x->phase : "", y->phase ? y->phase : "");
    }
    if (c == 0) {
        c = (x->rank > y->rank) - (x->rank < y->rank);
    }
    if (c == 0) {
        c = (x->replica_rank > y->replica_rank) - (x->replica_rank < y->replica_rank);
    }
    if (c == 0) {
        c = (x->first_step > y->first_step) - (x->first_step < y->first_step);
    }
    return c;
}

int pd_manifest_build(const pd_window_t *w, pp_manifest_t *out)
{
    pp_manifest_t man;
    size_t ncap = 0, k = 0, nroles;
    for (size_t i = 0; i < w->nmembers; i++) {
        ncap += w->members[i].ncaps;
    }
    pp_record_init(&pp_desc_manifest, &man);
    int64_t *steps = calloc(2, sizeof(*steps));
    pp_capture_t *caps = ncap ? calloc(ncap, sizeof(*caps)) : NULL;
    char **roles = pd_windows_roles(w, &nroles);
    if (steps == NULL || (ncap && caps == NULL) ||
        (roles == NULL && w->spec.selectors_n + w->nmembers > 0)) {
        free(steps);
        free(caps);
        free(roles);
        return PROFD_ENOMEM;
    }
    man.version = 1;
    man.job = (char *)w->job;
    man.window.id = w->id;
    man.window.name = (char *)w->name;
    steps[0] = w->first;
    steps[1] = w->last == PP_NONE ? -1 : w->last + 1;
    for (size_t i = 0; i < w->nmembers; i++) {
        for (size_t c = 0; c < w->members[i].ncaps; c++) {
            caps[k] = w->members[i].caps[c]; /* shallow: borrowed */
            /* an open window ends with the last step any capture reached */
            if (w->last == PP_NONE && caps[k].last_step != PP_NONE &&
                caps[k].last_step + 1 > steps[1]) {
                steps[1] = caps[k].last_step + 1;
            }
            k++;
        }
    }
    if (k > 1) {
        qsort(caps, k, sizeof(*caps), pd_manifest_cmp);
    }
    man.window.steps = steps;
    man.window.steps_n = 2;
    man.window.roles = roles;
    man.window.roles_n = nroles;
    man.window.tool = (char *)pd_windows_tool(w);
    man.window.mode = pd_windows_mode(w);
    man.window.settings =
        (char *)pd_plan_settings(&w->spec, w->nmembers ? w->members[0].selector : -1);
    man.window.source = w->spec.source;
    man.window.warnings = w->warnings;
    man.window.warnings_n = w->nwarnings;
    man.captures = caps;
    man.captures_n = k;
    *out = man;
    return 0;
}

void pd_manifest_free(pp_manifest_t *m)
{
    free(m->window.steps);
    free(m->window.roles);
    free(m->captures);
    m->window.steps = NULL;
    m->window.roles = NULL;
    m->captures = NULL;
}
