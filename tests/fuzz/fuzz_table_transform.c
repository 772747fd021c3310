/* libFuzzer target: the value transforms (table/transform.h) on arbitrary
 * bytes.  The first byte picks the steps and options, the rest is the
 * value.  Whatever the input: an error has a message; a result is JSON the
 * shredder reads without a syntax error; flatten's result flattens to
 * itself. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "table/transform.h"

static const floe_xform_step_t plans[4][2] = {{FLOE_XF_DEBEZIUM_UNWRAP, 0},
                                              {FLOE_XF_FLATTEN, 0},
                                              {FLOE_XF_DEBEZIUM_UNWRAP, FLOE_XF_FLATTEN},
                                              {FLOE_XF_FLATTEN, FLOE_XF_DEBEZIUM_UNWRAP}};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size) return 0;
    floe_xform_t x;
    memset(&x, 0, sizeof x);
    int plan = data[0] & 3;
    x.nsteps = plan >= 2 ? 2 : 1;
    memcpy(x.steps, plans[plan], sizeof plans[plan]);
    x.cdc_metadata = data[0] & 4;
    strcpy(x.delim, data[0] & 8 ? "." : "_");
    bool null = (data[0] & 0x30) == 0x30;
    floe_rows_opts_t o = {.max_depth = 16, .max_leaves = 64};
    floe_rows_t *r = floe_rows_new(&o);
    if (!r) return 0;
    floe_buf_t out = FLOE_BUF_INIT, again = FLOE_BUF_INIT;
    floe_err_t e;
    e.msg[0] = 0;
    floe_xform_op_t op;
    int rc = floe_xform_apply(&x, r, data + 1, size - 1, null, &out, &op, &e);
    if (rc < 0 && !e.msg[0]) abort();
    if (rc == 1 && !null) {
        floe_rows_begin(r);
        if (floe_rows_json(r, floe_rows_root(r), out.data, out.len, &e) < 0) {
            if (!strncmp(e.msg, "invalid JSON", 12)) abort();
            floe_rows_rollback(r);
        } else if (floe_rows_end(r, &e) < 0) {
            floe_rows_rollback(r);
        }
        if (x.steps[x.nsteps - 1] == FLOE_XF_FLATTEN) {
            floe_xform_t f = x;
            f.nsteps = 1;
            f.steps[0] = FLOE_XF_FLATTEN;
            if (floe_xform_apply(&f, r, out.data, out.len, false, &again, &op, &e) != 1 ||
                again.len != out.len || memcmp(again.data, out.data, out.len))
                abort();
        }
    }
    floe_buf_free(&out);
    floe_buf_free(&again);
    floe_rows_free(r);
    return 0;
}
