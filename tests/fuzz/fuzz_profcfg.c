// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * Fuzz target: the input is YAML text, optionally followed by a NUL byte and
 * Hydra overrides, one per line. It goes through pd_profcfg_load() (YAML,
 * overrides, interpolations, every schema) and pd_config_load_text() (the
 * daemon settings). Besides the sanitizers, the properties every result must
 * have are checked: one-line messages, well-formed requests.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "profcfg.h"
#include "fuzz_props.h"
#include "profd/errors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_OVERRIDES 8

static void check_json_object(const char *s)
{
    cJSON *j = cJSON_Parse(s);
    check(cJSON_IsObject(j), "settings are not a JSON object");
    cJSON_Delete(j);
}

static void check_spec(const pp_window_spec_t *s)
{
    check(s->selectors_n > 0, "a request without selectors");
    check(s->tool != NULL && s->mode != PP_MODE_NONE && s->settings != NULL,
          "request defaults missing");
    check(s->mode == PP_MODE_E2E || s->mode == PP_MODE_DISCRETE, "unknown mode");
    check_json_object(s->settings);
    if (s->steps_n > 0) {
        check(s->start == PP_NONE && s->end == PP_NONE, "both steps and start/end");
        for (size_t i = 0; i < s->steps_n; i++) {
            check(s->steps[i] >= 1, "a step before 1");
            check(i == 0 || s->steps[i] > s->steps[i - 1], "steps not sorted and unique");
        }
    } else {
        check(s->start >= 1, "no steps and no start");
        check(s->end == -1 || s->end > s->start, "end before start");
    }
    for (size_t i = 0; i < s->selectors_n; i++) {
        const pp_selector_t *x = &s->selectors[i];
        check(x->all_ranks || x->ranks_n > 0 || x->replica_ranks_n > 0,
              "a selector selects no rank");
        if (x->settings != NULL) {
            check_json_object(x->settings);
        }
    }
    for (size_t i = 0; i < s->warnings_n; i++) {
        check_line(s->warnings[i]);
    }
    char *json;
    size_t len;
    check(pp_record_encode(&pp_desc_window_spec, s, false, &json, &len) == 0, "encode failed");
    free(json);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const uint8_t *nul = memchr(data, 0, size);
    size_t len = nul ? (size_t)(nul - data) : size;
    char *ov[MAX_OVERRIDES];
    size_t nov = 0;
    char err[512];

    /* overrides: the lines after the NUL */
    for (size_t i = len + 1; nul != NULL && i < size && nov < MAX_OVERRIDES;) {
        const uint8_t *e = memchr(data + i, '\n', size - i);
        size_t n = e ? (size_t)(e - (data + i)) : size - i;
        if ((ov[nov] = malloc(n + 1)) == NULL) {
            break;
        }
        memcpy(ov[nov], data + i, n);
        ov[nov][n] = '\0';
        nov++;
        i += n + 1;
    }

    pd_profcfg_t out;
    int rc = pd_profcfg_load("fuzz.yaml", text, len, ov, nov, &out, err, sizeof(err));
    if (rc == 0) {
        check(out.schema != NULL, "no schema");
        for (size_t i = 0; i < out.n_specs; i++) {
            check_spec(&out.specs[i]);
        }
        for (size_t i = 0; i < out.n_warnings; i++) {
            check_line(out.warnings[i]);
        }
        pd_profcfg_free(&out);
    } else {
        check(rc == PROFD_ECONFIG || rc == PROFD_ENOMEM, "unexpected error code");
        check_line(err);
    }
    for (size_t i = 0; i < nov; i++) {
        free(ov[i]);
    }

    pd_config_t cfg, before;
    memset(&cfg, 0, sizeof(cfg));
    snprintf(cfg.save_path, sizeof(cfg.save_path), "outputs/profile");
    before = cfg;
    rc = pd_config_load_text(&cfg, "fuzz.yaml", text, len, err, sizeof(err));
    if (rc != 0) {
        check_line(err);
        check(memcmp(&cfg, &before, sizeof(cfg)) == 0, "settings changed by a failed load");
    }
    return 0;
}
