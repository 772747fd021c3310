/* libFuzzer target for the REST catalog client's readings of a server's
 * answers (src/iceberg/catalog_rest_int.h): arbitrary bytes as a token
 * endpoint's answer and as a /v1/config answer.  Never a crash, leak or
 * overread. */
#include <stdint.h>
#include <stdlib.h>

#include "iceberg/catalog_rest_int.h"
#include "storage/fileio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *a = json_loadb((const char *)data, size, 0, NULL);
    floe_err_t err;
    char *h = NULL;
    int64_t life;
    if (floe_ice_rest_token_answer(a, &h, &life, &err) == 0) free(h);
    char *prefix = NULL, **eps = NULL;
    size_t n = 0;
    if (floe_ice_rest_config_answer(a, &prefix, &eps, &n, &err) == 0) {
        free(prefix);
        floe_fileio_names_free(eps, n);
    }
    json_decref(a);
    return 0;
}
