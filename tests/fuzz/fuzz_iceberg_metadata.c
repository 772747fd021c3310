/* libFuzzer target: the Iceberg table-metadata JSON reader, plus the REST
 * update/requirement readers.  Whatever parses must serialize and parse
 * again to the same text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/metadata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    floe_err_t e;
    floe_ice_metadata_t *m = floe_ice_metadata_from_json((const char *)data, size, &e);
    if (!m) {
        if (e.msg[0] == '\0') abort();
    } else {
        char *js = floe_ice_metadata_to_json(m, &e);
        if (!js) abort();
        floe_ice_metadata_t *m2 = floe_ice_metadata_from_json(js, strlen(js), &e);
        if (!m2) abort();
        char *js2 = floe_ice_metadata_to_json(m2, &e);
        if (!js2 || strcmp(js, js2) != 0) abort();
        free(js);
        free(js2);
        floe_ice_metadata_free(m2);
        floe_ice_metadata_free(m);
    }
    floe_ice_update_t u;
    if (floe_ice_update_from_json((const char *)data, size, &u, &e) == 0) floe_ice_update_clear(&u);
    floe_ice_req_t r;
    (void)floe_ice_req_from_json((const char *)data, size, &r, &e);
    return 0;
}
