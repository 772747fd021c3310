/* libFuzzer target for the .proto text parser (src/format/proto_parse.c)
 * and schema resolution: arbitrary bytes as a .proto file.  What parses
 * and resolves is written back as text, which must parse and resolve to
 * the same text, and as a FileDescriptorProto, which must decode.  Never a
 * crash, leak or unbounded allocation. */
#include <stdlib.h>
#include <string.h>

#include "format/proto.h"

static char *text_of(const floe_proto_schema_t *s)
{
    floe_buf_t b = FLOE_BUF_INIT;
    if (floe_proto_to_text(floe_proto_schema_file(s), &b)) abort();
    return floe_buf_cstr(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    floe_err_t err = {0};
    floe_proto_file_t *f = NULL;
    if (floe_proto_parse((const char *)data, size, "f.proto", &f, &err)) return 0;
    floe_proto_schema_t *s = NULL;
    if (floe_proto_schema_new(f, NULL, 0, &s, &err)) return 0;
    char *t = text_of(s);
    floe_proto_file_t *g = NULL;
    floe_proto_schema_t *s2 = NULL;
    if (floe_proto_parse(t, strlen(t), "f.proto", &g, &err) ||
        floe_proto_schema_new(g, NULL, 0, &s2, &err))
        abort(); /* our own text must read back */
    char *t2 = text_of(s2);
    if (strcmp(t, t2)) abort();
    floe_buf_t fdp = FLOE_BUF_INIT;
    floe_proto_file_t *h = NULL;
    if (floe_proto_fdp_encode(floe_proto_schema_file(s), &fdp) ||
        floe_proto_fdp_decode(fdp.data, fdp.len, &h, &err))
        abort();
    floe_proto_file_free(h);
    floe_buf_free(&fdp);
    free(t);
    free(t2);
    floe_proto_schema_free(s);
    floe_proto_schema_free(s2);
    return 0;
}
