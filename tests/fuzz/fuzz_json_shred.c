/* libFuzzer target: the JSON shredder on arbitrary bytes.  Input is split
 * on newlines into records appended to one buffer, so shape evolution across
 * rows is exercised; whatever each record does, the buffer stays consistent
 * (one rep-0 entry per row in every leaf, a value per fully defined entry). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "table/rows.h"

static void check(floe_rows_t *r)
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    floe_rows_opts_t o = {.widen_long_to_double = size & 1,
                          .infer_timestamps = size & 2,
                          .coerce = size & 4,
                          .max_depth = 16,
                          .max_leaves = 64};
    floe_rows_t *r = floe_rows_new(&o);
    if (!r) return 0;
    const uint8_t *p = data, *end = data + size;
    while (p < end) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        floe_err_t e;
        floe_rows_begin(r);
        if (floe_rows_json(r, floe_rows_root(r), p, len, &e) < 0 || floe_rows_end(r, &e) < 0) {
            if (!e.msg[0]) abort();
            floe_rows_rollback(r);
        }
        check(r);
        p += len + (nl ? 1 : 0);
    }
    floe_rows_free(r);
    return 0;
}
