/* For the shredders' fuzz targets: abort unless every leaf of r is
 * consistent (as many definition as repetition levels, one rep-0 entry per
 * row, no level above the leaf's maximum, a value per fully defined
 * entry). */
#ifndef FLOE_FUZZ_ROWS_CHECK_H
#define FLOE_FUZZ_ROWS_CHECK_H

#include <stdlib.h>

#include "table/rows_int.h"

static void rows_check(floe_rows_t *r)
{
    size_t n;
    floe_rcol_t *const *l = floe_rows_leaves(r, &n);
    for (size_t i = 0; i < n; i++) {
        size_t rows = 0, vals = 0;
        if (l[i]->defs.len != l[i]->reps.len) abort();
        for (size_t k = 0; k < l[i]->defs.len; k++) {
            if (l[i]->reps.data[k] == 0) rows++;
            if (l[i]->defs.data[k] > l[i]->node->def) abort();
            if (l[i]->defs.data[k] == l[i]->node->def) vals++;
        }
        if (rows != floe_rows_count(r) || vals != l[i]->nvals) abort();
    }
}

#endif
