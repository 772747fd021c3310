/* libFuzzer target: the JSON shredder on arbitrary bytes.  Input is split
 * on newlines into records appended to one buffer, so shape evolution across
 * rows is exercised; whatever each record does, the buffer stays consistent
 * (one rep-0 entry per row in every leaf, a value per fully defined entry). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "table/rows.h"
#include "rows_check.h"

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
        rows_check(r);
        p += len + (nl ? 1 : 0);
    }
    floe_rows_free(r);
    return 0;
}
