/* libFuzzer target: the key index files (table/keyidx.h) on arbitrary
 * bytes.  The first byte steers: bit 0 fixes the checksums up first, so
 * the fuzzer reaches the fields behind them; bit 1 reads the bytes as a
 * file through floe_tkeyidx_load (the paged format, magic "FLKIDX2\n",
 * or the in-memory one), else through floe_tkeyidx_decode.  Whatever the
 * input: an error is FLOE_ECORRUPT or FLOE_ENOMEM with a message; an
 * index that loads answers lookups, takes a put and a delete, encodes to
 * as many keys as it counts, and decodes again. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "table/keyidx.h"
#include "util/buf.h"
#include "util/crc32c.h"

#define PAGE 4096

static void put_le32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4); /* little-endian hosts */
}

/* The checksums of a paged file: header, every whole page, the trailer. */
static void fix_paged(uint8_t *p, size_t n)
{
    if (n < 52) return;
    floe_wr_be32(p + 48, floe_crc32c(0, p, 48));
    uint64_t npages = floe_rd_be32(p + 20);
    for (uint64_t i = 1; i < npages && (i + 1) * PAGE <= n; i++)
        floe_wr_be32(p + i * PAGE, floe_crc32c(0, p + i * PAGE + 4, PAGE - 4));
    uint64_t t = npages * PAGE;
    if (t < n && n - t >= 4) put_le32(p + n - 4, floe_crc32c(0, p + t, n - t - 4));
}

static const char *tmp_path(void)
{
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/tmp/fuzz-keyidx-%d", (int)getpid());
    return path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size) return 0;
    bool fix = data[0] & 1, file = data[0] & 2;
    size_t n = size - 1;
    uint8_t *p = malloc(n ? n : 1);
    if (!p) return 0;
    memcpy(p, data + 1, n);
    bool paged = n >= 8 && !memcmp(p, "FLKIDX2\n", 8);
    if (fix && paged) fix_paged(p, n);
    else if (fix && n >= 4)
        put_le32(p + n - 4, floe_crc32c(0, p, n - 4));
    floe_err_t e;
    e.msg[0] = 0;
    floe_tkeyidx_t *x = NULL;
    if (file) {
        FILE *f = fopen(tmp_path(), "wb");
        if (!f) abort();
        if (fwrite(p, 1, n, f) != n) abort();
        fclose(f);
        x = floe_tkeyidx_load(tmp_path(), &e);
    } else {
        x = floe_tkeyidx_decode(p, n, &e);
    }
    if (!x) {
        if ((e.code != FLOE_ECORRUPT && e.code != FLOE_ENOMEM) || !e.msg[0]) abort();
    } else {
        floe_tkeyidx_loc_t l;
        if (floe_tkeyidx_get(x, "\x6e\x01\x00\x00\x00\x37", 6, &l) == 1 && !l.path) abort();
        if (floe_tkeyidx_put(x, "fuzz", 4, "/f.parquet", 1, NULL) >= 0 &&
            floe_tkeyidx_del(x, "fuzz", 4, NULL) != 1)
            abort();
        floe_buf_t b = FLOE_BUF_INIT;
        if (floe_tkeyidx_encode(x, &b) == 0) {
            floe_tkeyidx_t *y = floe_tkeyidx_decode(b.data, b.len, &e);
            if (!y || floe_tkeyidx_count(y) != floe_tkeyidx_count(x) ||
                floe_tkeyidx_snapshot(y) != floe_tkeyidx_snapshot(x))
                abort();
            floe_tkeyidx_free(y);
        }
        floe_buf_free(&b);
        floe_tkeyidx_free(x);
    }
    if (file) unlink(tmp_path());
    free(p);
    return 0;
}
