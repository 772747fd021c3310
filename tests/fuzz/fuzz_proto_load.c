/* libFuzzer target for a registry's Protobuf schema string
 * (floe_proto_load in src/format/proto_fdp.c): arbitrary bytes as .proto
 * text or a base64 FileDescriptorProto.  Bytes that parse as text load as
 * that text; bytes that load otherwise are base64 (whitespace around) of a
 * descriptor that decodes to the same file; a given name names the file.
 * Never a crash, leak or unbounded allocation. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "format/proto.h"
#include "util/base64.h"

static char *text_of(const floe_proto_file_t *f)
{
    floe_buf_t b = FLOE_BUF_INIT;
    if (floe_proto_to_text(f, &b)) abort();
    char *t = floe_buf_cstr(&b);
    if (!t) abort();
    return t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    floe_err_t err = {0};
    floe_proto_file_t *f = NULL, *g = NULL, *h = NULL;
    int loaded = floe_proto_load(p, size, "f.proto", &f, &err);
    if (!floe_proto_parse(p, size, "f.proto", &g, &err)) {
        if (loaded) abort(); /* text that parses is text */
    } else if (!loaded) {
        size_t n = size;
        while (n && isspace((unsigned char)p[n - 1])) n--;
        while (n && isspace((unsigned char)*p)) p++, n--;
        floe_buf_t b = FLOE_BUF_INIT;
        if (floe_base64_decode(&b, p, n) || floe_proto_fdp_decode(b.data, b.len, &g, &err))
            abort(); /* loaded, but not a base64 descriptor */
        floe_buf_free(&b);
        g->name = "f.proto";
    }
    if (!loaded) {
        if (strcmp(f->name, "f.proto")) abort();
        char *a = text_of(f), *b = text_of(g);
        if (strcmp(a, b)) abort();
        free(a);
        free(b);
        if (floe_proto_load((const char *)data, size, NULL, &h, &err)) abort();
        floe_proto_file_free(h);
    }
    floe_proto_file_free(f);
    floe_proto_file_free(g);
    return 0;
}
