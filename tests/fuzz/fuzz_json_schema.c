/* libFuzzer target for the JSON Schema parser (src/format/jschema.c), the
 * registry's JSON Schema compatibility (src/registry/json_compat.c) and
 * the json_schema shredder (src/table/jschema_shred.c): the input up to its
 * first NUL is a schema, what follows are JSON values, one per line.  A
 * schema that parses writes back a canonical text that parses to the same
 * text, and is compatible with itself; values are shredded into one buffer
 * that stays consistent (one rep-0 entry per row in every leaf).  Never a
 * crash, leak or unbounded allocation. */
#include <stdlib.h>
#include <string.h>

#include "format/jschema.h"
#include "registry/registry.h"
#include "table/jschema_shred.h"
#include "table/rows_int.h"
#include "rows_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t slen = nul ? (size_t)(nul - data) : size;
    floe_err_t err = {0};
    floe_jschema_t *s = NULL;
    if (floe_jschema_parse((const char *)data, slen, NULL, 0, &s, &err)) return 0;
    char *t = floe_jschema_canonical(s);
    floe_jschema_t *s2 = NULL;
    if (!t || floe_jschema_parse(t, strlen(t), NULL, 0, &s2, &err)) abort();
    char *t2 = floe_jschema_canonical(s2);
    if (!t2 || strcmp(t, t2)) abort();
    if (!floe_registry_json_compatible(s, s2, NULL)) abort(); /* reflexive */
    free(t);
    free(t2);
    floe_jschema_free(s2);

    floe_rows_opts_t o = {.max_depth = 16, .max_leaves = 64};
    floe_rows_t *r = floe_rows_new(&o);
    floe_jschema_shred_t *j = r ? floe_jschema_shred_new(r) : NULL;
    const uint8_t *p = nul ? nul + 1 : data + size, *end = data + size;
    while (j && p < end) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        floe_rows_begin(r);
        if (floe_jschema_shred(j, 1, s, p, len, &err) || floe_rows_end(r, &err))
            floe_rows_rollback(r);
        rows_check(r);
        p += len + (nl ? 1 : 0);
    }
    floe_jschema_shred_free(j);
    floe_rows_free(r);
    floe_jschema_free(s);
    return 0;
}
