#include "table/offsets.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/maintain.h"
#include "util/parse.h"

int floe_offsets_encode(const int64_t *offsets, size_t n, floe_buf_t *out)
{
    if (floe_buf_append_u8(out, '{') < 0) return -1;
    int first = 1;
    for (size_t p = 0; p < n; p++) {
        if (offsets[p] < 0) continue;
        if (floe_buf_printf(out, "%s\"%zu\":%lld", first ? "" : ",", p, (long long)offsets[p]) < 0)
            return -1;
        first = 0;
    }
    return floe_buf_append_u8(out, '}');
}

/* Parse text into offsets[0..cap) (-1 where absent).  Partitions in
 * [cap, limit) are checked and left out; from limit on they are refused. */
static int decode(const char *text, int64_t *offsets, size_t cap, int64_t limit, size_t *n,
                  floe_err_t *err)
{
    for (size_t i = 0; i < cap; i++) offsets[i] = -1;
    *n = 0;
    json_error_t je;
    json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (!j || !json_is_object(j)) {
        floe_err_set(err, FLOE_ECORRUPT, "%s is not a JSON object: %s", FLOE_OFFSETS_KEY,
                     j ? "wrong type" : je.text);
        json_decref(j);
        return -1;
    }
    const char *k;
    json_t *v;
    json_object_foreach(j, k, v)
    {
        int64_t p;
        floe_err_t pe;
        if (floe_parse_int64(k, 0, limit - 1, &p, &pe) < 0 || !json_is_integer(v) ||
            json_integer_value(v) < 0) {
            floe_err_set(err, FLOE_ECORRUPT, "%s: bad entry \"%s\"", FLOE_OFFSETS_KEY, k);
            json_decref(j); /* owns k */
            return -1;
        }
        if ((size_t)p >= cap) continue;
        offsets[p] = json_integer_value(v);
        if ((size_t)p + 1 > *n) *n = (size_t)p + 1;
    }
    json_decref(j);
    return 0;
}

int floe_offsets_decode(const char *text, int64_t *offsets, size_t cap, size_t *n, floe_err_t *err)
{
    return decode(text, offsets, cap, (int64_t)cap, n, err);
}

const floe_ice_snapshot_t *floe_offsets_snapshot(const floe_ice_metadata_t *md)
{
    return floe_ice_ancestor_with_summary(md, -1, FLOE_OFFSETS_KEY);
}

int floe_offsets_read(const floe_ice_metadata_t *md, int64_t *out, size_t nparts, floe_err_t *err)
{
    const floe_ice_snapshot_t *s = floe_offsets_snapshot(md);
    if (!s) {
        for (size_t i = 0; i < nparts; i++) out[i] = -1;
        return 0;
    }
    size_t n;
    /* Kafka partition numbers are int32 */
    return decode(floe_ice_props_get(&s->summary, FLOE_OFFSETS_KEY), out, nparts,
                  (int64_t)INT32_MAX + 1, &n, err);
}
