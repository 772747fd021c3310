/* libFuzzer target for src/storage/s3_xml.c: arbitrary bytes as an S3
 * answer: a ListObjectsV2 page (entries, token), a DeleteObjects answer
 * and an error's Code/Message.  Never a crash, leak or overread. */
#include <stdint.h>
#include <stdlib.h>

#include "storage/s3_xml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    floe_fileio_entry_t *e = NULL;
    size_t n = 0, cap = 0;
    char *tok = NULL;
    floe_err_t err;
    size_t plen = size ? data[0] % 8 : 0;
    if (s3_xml_list(data, size, plen, &e, &n, &cap, &tok, &err) == 0) free(tok);
    floe_fileio_entries_free(e, n);
    const char *keys[] = {"a", "b/c", ""};
    bool gone[3] = {true, true, true};
    s3_xml_delete_errors(data, size, keys, 3, gone, &err);
    char t[32];
    s3_xml_text(data, size, "Code", t, sizeof t);
    return 0;
}
