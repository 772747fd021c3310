/* libFuzzer target: manifest and manifest-list readers (Avro containers
 * with Iceberg header metadata) on arbitrary bytes; the paths they give
 * go through the reachable-file set (normal forms, hashing), where each
 * must then be found. */
#include <stdint.h>
#include <stdlib.h>

#include "iceberg/maintain.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    floe_err_t e;
    floe_ice_manifest_entry_t *ents;
    size_t n;
    if (floe_ice_manifest_parse(data, size, &ents, &n, &e) == 0) {
        floe_ice_reach_t *r = floe_ice_reach_new(true, &e);
        for (size_t i = 0; i < n; i++) {
            if (!ents[i].file.path) abort();
            if (r &&
                floe_ice_reach_add_file(r, ents[i].file.path, FLOE_ICE_FILE_DATA,
                                        ents[i].file.file_size, &e) == 0 &&
                !floe_ice_reach_has(r, ents[i].file.path))
                abort();
        }
        floe_ice_reach_free(r);
        floe_ice_manifest_entries_free(ents, n);
    } else if (e.msg[0] == '\0') {
        abort();
    }
    floe_ice_manifest_file_t *files;
    if (floe_ice_manifest_list_parse(data, size, &files, &n, &e) == 0) {
        for (size_t i = 0; i < n; i++)
            if (!files[i].path) abort();
        floe_ice_manifest_files_free(files, n);
    }
    return 0;
}
