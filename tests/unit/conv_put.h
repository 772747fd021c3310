/* One record through a converter, for unit tests of converters and upsert
 * tables.  (Linked into every test binary, like tmp_dir.c.) */
#ifndef FLOE_TESTS_CONV_PUT_H
#define FLOE_TESTS_CONV_PUT_H

#include <stdint.h>

#include "table/convert.h"

/* Convert one record of partition 0 at offset off, timestamp 1 s, into c:
 * key NULL is a null key, value NULL a tombstone (both borrowed for the
 * call).  0 or -1 (the record refused). */
int floe_test_conv_put(floe_conv_t *c, int64_t off, const char *key, const char *value);

#endif
