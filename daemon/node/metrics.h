// SPDX-License-Identifier: Apache-2.0
// Copyright The profd authors
/*
 * The metrics endpoint's text (Prometheus text format 0.0.4): per-role
 * step-time summaries, registered and stalled ranks, windows by state,
 * captures by status, bytes gathered, step events taken in and dropped,
 * refused requests, errors, trigger windows. Built on the loop thread when
 * a scrape comes (listen.metrics, net/http.h). Loop thread only.
 */
#ifndef PD_METRICS_H
#define PD_METRICS_H

#include <stddef.h>

#include "node.h"

#define PD_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* The page, malloc'ed (*len bytes). 0 or PROFD_ENOMEM. */
int pd_metrics_text(pd_node_t *n, char **out, size_t *len);

#endif
