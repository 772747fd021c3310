/* Bytes written as hex pairs in unit tests ("0a 02 6869"; spaces between
 * pairs ignored).  (Linked into every test binary, like tmp_dir.c.) */
#ifndef FLOE_TESTS_HEX_H
#define FLOE_TESTS_HEX_H

#include <stddef.h>
#include <stdint.h>

/* The bytes of h into out (room for strlen(h) / 2); returns their count. */
size_t floe_test_unhex(const char *h, uint8_t *out);

#endif
