/* libFuzzer target: the default id columns of an upsert table taken from
 * a record key (table/upsert.h floe_tupsert_ids_from_key) on arbitrary key
 * bytes.  Whatever the input: an error is FLOE_EINVAL with a message; a
 * list it gives parses as table.id.columns, at most FLOE_TUPSERT_MAX_IDS
 * names, and is FLOE_TUPSERT_KEY_COLUMN for a key that is no JSON
 * object. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "table/upsert.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char ids[256];
    floe_err_t e;
    e.msg[0] = 0;
    if (floe_tupsert_ids_from_key(floe_slice(data, size), ids, sizeof ids, &e) < 0) {
        if (e.code != FLOE_EINVAL || !e.msg[0]) abort();
        return 0;
    }
    floe_tupsert_cols_t c;
    if (floe_tupsert_cols_parse(ids, "", &c, &e) < 0 || c.nids > FLOE_TUPSERT_MAX_IDS) abort();
    size_t i = 0;
    while (i < size && strchr(" \t\r\n", data[i])) i++;
    if ((i == size || data[i] != '{') && strcmp(ids, FLOE_TUPSERT_KEY_COLUMN)) abort();
    return 0;
}
