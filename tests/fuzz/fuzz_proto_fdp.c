/* libFuzzer target for the FileDescriptorProto decoder
 * (src/format/proto_fdp.c) and schema resolution: arbitrary bytes as a
 * serialized descriptor.  What decodes is written as text and as a
 * descriptor again; what also resolves must read back from its own text.
 * Never a crash, leak or unbounded allocation. */
#include <stdlib.h>
#include <string.h>

#include "format/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    floe_err_t err = {0};
    floe_proto_file_t *f = NULL;
    if (floe_proto_fdp_decode(data, size, &f, &err)) return 0;
    floe_buf_t b = FLOE_BUF_INIT;
    if (floe_proto_to_text(f, &b) || floe_proto_fdp_encode(f, &b)) abort();
    floe_buf_free(&b);
    floe_proto_schema_t *s = NULL;
    if (floe_proto_schema_new(f, NULL, 0, &s, &err)) return 0;
    if (floe_proto_to_text(floe_proto_schema_file(s), &b)) abort();
    char *t = floe_buf_cstr(&b);
    floe_proto_file_t *g = NULL;
    floe_proto_schema_t *s2 = NULL;
    /* names from a descriptor may be any bytes, so its text need not parse;
     * what parses goes through resolution too */
    if (!floe_proto_parse(t, strlen(t), "f.proto", &g, &err) &&
        !floe_proto_schema_new(g, NULL, 0, &s2, &err))
        floe_proto_schema_free(s2);
    free(t);
    floe_proto_schema_free(s);
    return 0;
}
