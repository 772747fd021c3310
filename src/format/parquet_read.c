/* Parquet reader: footer, pages, and every encoding the writer emits plus
 * those DuckDB and other writers use (PLAIN, dictionary, RLE, DELTA_*,
 * BYTE_STREAM_SPLIT; data pages v1 and v2).  Every size read from the file
 * is checked before use. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "format/parquet_int.h"
#include "util/mem.h"

#define MAX_PAGE_BYTES (256u << 20) /* uncompressed page cap */
#define MAX_PAGE_VALUES (1u << 24)
#define MAX_CHUNK_LEVELS (1u << 28)

struct floe_pq_reader {
    const uint8_t *data;
    size_t len;
    uint8_t *owned;
    pq_file_meta_t m;
    floe_codec_ctx_t *cctx;
    floe_buf_t page; /* decompressed page */
};

static int corrupt(floe_err_t *err, const char *what, int rg, int col)
{
    return floe_err_set(err, FLOE_ECORRUPT, "row group %d column %d: %s", rg, col, what);
}

floe_pq_reader_t *floe_pq_reader_open(const uint8_t *data, size_t len, floe_err_t *err)
{
    if (len < 12 || memcmp(data, "PAR1", 4) != 0 || memcmp(data + len - 4, "PAR1", 4) != 0) {
        floe_err_set(err, FLOE_ECORRUPT, "not a Parquet file (bad magic or too short)");
        return NULL;
    }
    uint32_t flen = floe_rd_le32(data + len - 8);
    if (flen > len - 12) {
        floe_err_set(err, FLOE_ECORRUPT, "footer length %u exceeds the file", flen);
        return NULL;
    }
    floe_pq_reader_t *r = calloc(1, sizeof *r);
    if (!r || !(r->cctx = floe_codec_ctx_new(0))) {
        free(r);
        floe_err_oom(err);
        return NULL;
    }
    r->data = data;
    r->len = len;
    if (pq_footer_decode(data + len - 8 - flen, flen, &r->m, err) < 0) {
        floe_pq_reader_free(r);
        return NULL;
    }
    /* chunk metadata sanity: types match the schema, offsets inside the data */
    uint64_t data_end = len - 8 - flen;
    for (int g = 0; g < r->m.nrg; g++) {
        for (int c = 0; c < r->m.schema->ncols; c++) {
            pq_chunk_meta_t *cm = &r->m.rgs[g].cols[c];
            const floe_pq_node_t *nd = &r->m.schema->nodes[r->m.schema->col_node[c]];
            floe_codec_t fc;
            if (cm->phys != (int)nd->phys) {
                corrupt(err, "chunk type differs from the schema", g, c);
                goto fail;
            }
            if (pq_codec_to_floe(cm->codec, &fc) < 0) {
                floe_err_set(err, FLOE_EUNSUPPORTED, "row group %d column %d: unsupported codec %d",
                             g, c, cm->codec);
                goto fail;
            }
            if (cm->data_page_offset < 4 || cm->total_compressed < 0 || cm->num_values < 0 ||
                (uint64_t)cm->data_page_offset > data_end) {
                corrupt(err, "bad chunk offsets", g, c);
                goto fail;
            }
            if (cm->dict_page_offset <= 0 || cm->dict_page_offset >= cm->data_page_offset)
                cm->dict_page_offset = -1;
            uint64_t start =
                (uint64_t)(cm->dict_page_offset >= 0 ? cm->dict_page_offset : cm->data_page_offset);
            if ((uint64_t)cm->total_compressed > data_end - start) {
                corrupt(err, "chunk extends past the data", g, c);
                goto fail;
            }
        }
    }
    return r;
fail:
    floe_pq_reader_free(r);
    return NULL;
}

floe_pq_reader_t *floe_pq_reader_open_file(const char *path, floe_err_t *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        floe_err_errno(err, errno, path);
        return NULL;
    }
    floe_buf_t b = FLOE_BUF_INIT;
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && st.st_size > 0 &&
        floe_buf_reserve(&b, (size_t)st.st_size + 1) < 0) {
        fclose(f);
        floe_err_set(err, FLOE_ENOMEM, "out of memory reading %s", path);
        return NULL;
    }
    for (;;) {
        if (b.cap - b.len < 65536 && floe_buf_reserve(&b, 65536) < 0) {
            fclose(f);
            floe_buf_free(&b);
            floe_err_set(err, FLOE_ENOMEM, "out of memory reading %s", path);
            return NULL;
        }
        size_t n = fread(b.data + b.len, 1, b.cap - b.len, f);
        if (n == 0) break;
        b.len += n;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        floe_buf_free(&b);
        floe_err_set(err, FLOE_EIO, "read error on %s", path);
        return NULL;
    }
    floe_pq_reader_t *r = floe_pq_reader_open(b.data ? b.data : (const uint8_t *)"", b.len, err);
    if (!r) {
        floe_buf_free(&b);
        return NULL;
    }
    r->owned = b.data;
    return r;
}

void floe_pq_reader_free(floe_pq_reader_t *r)
{
    if (!r) return;
    pq_file_meta_free(&r->m);
    floe_codec_ctx_free(r->cctx);
    floe_buf_free(&r->page);
    free(r->owned);
    free(r);
}

const floe_pq_schema_t *floe_pq_reader_schema(const floe_pq_reader_t *r)
{
    return r->m.schema;
}
int64_t floe_pq_reader_num_rows(const floe_pq_reader_t *r)
{
    return r->m.num_rows;
}
int floe_pq_reader_num_row_groups(const floe_pq_reader_t *r)
{
    return r->m.nrg;
}
int64_t floe_pq_reader_row_group_rows(const floe_pq_reader_t *r, int rg)
{
    return rg >= 0 && rg < r->m.nrg ? r->m.rgs[rg].num_rows : -1;
}
const char *floe_pq_reader_created_by(const floe_pq_reader_t *r)
{
    return r->m.created_by;
}
const char *floe_pq_reader_kv(const floe_pq_reader_t *r, const char *key)
{
    for (int i = 0; i < r->m.nkv; i++)
        if (strcmp(r->m.kv[i].key, key) == 0) return r->m.kv[i].value;
    return NULL;
}

void floe_pq_column_free(floe_pq_column_t *c)
{
    if (!c) return;
    free(c->def);
    free(c->rep);
    free(c->values);
    floe_buf_free(&c->bytes);
    memset(c, 0, sizeof *c);
}

/* ---- column decoding ---- */

typedef struct dec {
    floe_pq_column_t *out;
    size_t esize; /* bytes per output value */
    size_t width; /* fixed width of the physical type, 0 for BYTE_ARRAY */
    size_t cap_lev, cap_val;
    /* dictionary: values in output layout; byte arrays as (offset,len) into out->bytes */
    uint8_t *dict;
    size_t dict_n;
    int rg, col;
    /* index mode (pq_read_column_dict): dictionary indices, not values */
    pq_dict_chunk_t *dc;
    size_t cap_idx;
} dec_t;

/* Decode n PLAIN values from p[0..len) into dst (output layout) or, with
 * to_dict, into the dictionary.  *used = bytes consumed. */
static int plain_decode(dec_t *d, const uint8_t *p, size_t len, size_t n, uint8_t *dst,
                        floe_buf_t *bytes_store, size_t *used, floe_err_t *err)
{
    floe_pq_phys_t ph = d->out->phys;
    if (ph == FLOE_PQ_BOOLEAN) {
        if ((n + 7) / 8 > len) return corrupt(err, "PLAIN booleans truncated", d->rg, d->col);
        for (size_t i = 0; i < n; i++) dst[i] = (p[i >> 3] >> (i & 7)) & 1;
        *used = (n + 7) / 8;
        return 0;
    }
    if (d->width && ph != FLOE_PQ_FIXED && ph != FLOE_PQ_INT96) {
        if (n > len / d->width) return corrupt(err, "PLAIN values truncated", d->rg, d->col);
        memcpy(dst, p, n * d->width);
        *used = n * d->width;
        return 0;
    }
    floe_slice_t *sl = (floe_slice_t *)dst;
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        size_t l = d->width;
        if (!l) {
            if (len - pos < 4)
                return corrupt(err, "PLAIN byte array length truncated", d->rg, d->col);
            l = floe_rd_le32(p + pos);
            pos += 4;
        }
        if (l > len - pos) return corrupt(err, "PLAIN byte array truncated", d->rg, d->col);
        size_t off = bytes_store->len;
        if (floe_buf_append(bytes_store, p + pos, l) < 0) return floe_err_oom(err);
        sl[i].ptr = (const uint8_t *)(uintptr_t)off;
        sl[i].len = l;
        pos += l;
    }
    *used = pos;
    return 0;
}

static int read_dict(dec_t *d, const uint8_t *p, size_t len, int32_t n, int enc, floe_err_t *err)
{
    if (d->dict) return corrupt(err, "second dictionary page", d->rg, d->col);
    if (enc != PQ_ENC_PLAIN && enc != PQ_ENC_PLAIN_DICT)
        return corrupt(err, "dictionary page not PLAIN", d->rg, d->col);
    if (n < 0 || (size_t)n > MAX_PAGE_VALUES || (d->width && (size_t)n > len / d->width) ||
        (!d->width && (size_t)n > len / 4))
        return corrupt(err, "bad dictionary size", d->rg, d->col);
    d->dict = malloc((size_t)(n ? n : 1) * d->esize);
    if (!d->dict) return floe_err_oom(err);
    d->dict_n = (size_t)n;
    size_t used;
    /* byte-array entries land in the column's own byte store, so decoded
     * values can share them instead of copying per value */
    return plain_decode(d, p, len, (size_t)n, d->dict, &d->out->bytes, &used, err);
}

static int bss_decode(dec_t *d, const uint8_t *p, size_t len, size_t n, uint8_t *dst,
                      floe_err_t *err)
{
    size_t w = d->width;
    if (!w || d->out->phys == FLOE_PQ_BOOLEAN || n > len / w)
        return corrupt(err, "bad BYTE_STREAM_SPLIT data", d->rg, d->col);
    if (d->out->phys == FLOE_PQ_FIXED) {
        uint8_t *tmp = malloc(n * w + 1);
        if (!tmp) return floe_err_oom(err);
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < w; k++) tmp[i * w + k] = p[k * n + i];
        size_t used;
        int rc = plain_decode(d, tmp, n * w, n, dst, &d->out->bytes, &used, err);
        free(tmp);
        return rc;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < w; k++) dst[i * w + k] = p[k * n + i];
    return 0;
}

/* Decode n non-null values of a data page into the output. */
static int values_decode(dec_t *d, int enc, const uint8_t *p, size_t len, size_t n, floe_err_t *err)
{
    floe_pq_column_t *o = d->out;
    if (!d->dc && floe_grow(&o->values, &d->cap_val, o->n_values + n, d->esize) < 0)
        return floe_err_oom(err);
    uint8_t *dst = d->dc ? NULL : (uint8_t *)o->values + o->n_values * d->esize;
    floe_pq_phys_t ph = o->phys;
    size_t used;
    switch (enc) {
    case PQ_ENC_PLAIN:
        if (plain_decode(d, p, len, n, dst, &o->bytes, &used, err) < 0) return -1;
        break;
    case PQ_ENC_PLAIN_DICT:
    case PQ_ENC_RLE_DICT: {
        if (!d->dict)
            return corrupt(err, "dictionary-encoded page without a dictionary", d->rg, d->col);
        if (n == 0) break;
        if (len < 1 || p[0] > 32) return corrupt(err, "bad dictionary index width", d->rg, d->col);
        pq_rle_dec_t rd;
        pq_rle_dec_init(&rd, p + 1, len - 1, p[0]);
        if (d->dc) {
            pq_dict_chunk_t *dc = d->dc;
            if (floe_grow(&dc->idx, &d->cap_idx, o->n_values + n, sizeof *dc->idx) < 0)
                return floe_err_oom(err);
            uint32_t *ix = dc->idx + o->n_values;
            if (pq_rle_dec_u32(&rd, ix, n) < 0)
                return corrupt(err, "dictionary indices truncated", d->rg, d->col);
            uint32_t top = 0;
            for (size_t j = 0; j < n; j++) top = ix[j] > top ? ix[j] : top;
            if (top >= d->dict_n)
                return corrupt(err, "dictionary index out of range", d->rg, d->col);
            break;
        }
        uint32_t ix[512];
        for (size_t i = 0; i < n;) {
            size_t k = n - i < 512 ? n - i : 512;
            if (pq_rle_dec_u32(&rd, ix, k) < 0)
                return corrupt(err, "dictionary indices truncated", d->rg, d->col);
            for (size_t j = 0; j < k; j++) {
                if (ix[j] >= d->dict_n)
                    return corrupt(err, "dictionary index out of range", d->rg, d->col);
                memcpy(dst + (i + j) * d->esize, d->dict + (size_t)ix[j] * d->esize, d->esize);
            }
            i += k;
        }
        break;
    }
    case PQ_ENC_RLE: {
        if (ph != FLOE_PQ_BOOLEAN)
            return corrupt(err, "RLE values on a non-boolean column", d->rg, d->col);
        if (len < 4) return corrupt(err, "RLE booleans truncated", d->rg, d->col);
        uint32_t l = floe_rd_le32(p);
        if (l > len - 4) return corrupt(err, "RLE booleans truncated", d->rg, d->col);
        pq_rle_dec_t rd;
        pq_rle_dec_init(&rd, p + 4, l, 1);
        for (size_t i = 0; i < n; i++) {
            uint32_t v;
            if (pq_rle_dec_u32(&rd, &v, 1) < 0 || v > 1)
                return corrupt(err, "bad RLE booleans", d->rg, d->col);
            dst[i] = (uint8_t)v;
        }
        break;
    }
    case PQ_ENC_DELTA_BP: {
        if (ph != FLOE_PQ_INT32 && ph != FLOE_PQ_INT64)
            return corrupt(err, "DELTA_BINARY_PACKED on a non-integer column", d->rg, d->col);
        int64_t *tmp = malloc((n ? n : 1) * sizeof *tmp);
        if (!tmp) return floe_err_oom(err);
        if (pq_delta_decode(p, len, tmp, n, ph == FLOE_PQ_INT32, NULL, err) < 0) {
            free(tmp);
            return -1;
        }
        if (ph == FLOE_PQ_INT64) memcpy(dst, tmp, n * 8);
        else
            for (size_t i = 0; i < n; i++) ((int32_t *)(void *)dst)[i] = (int32_t)tmp[i];
        free(tmp);
        break;
    }
    case PQ_ENC_DELTA_LBA:
    case PQ_ENC_DELTA_BA: {
        if (ph != FLOE_PQ_BYTE_ARRAY && ph != FLOE_PQ_FIXED)
            return corrupt(err, "DELTA byte arrays on a non-byte-array column", d->rg, d->col);
        int64_t *pre = NULL, *suf = malloc((n ? n : 1) * sizeof *suf);
        if (!suf) return floe_err_oom(err);
        size_t pos = 0, k;
        int rc = 0;
        if (enc == PQ_ENC_DELTA_BA) {
            pre = malloc((n ? n : 1) * sizeof *pre);
            if (!pre) {
                free(suf);
                return floe_err_oom(err);
            }
            rc = pq_delta_decode(p, len, pre, n, true, &k, err);
            pos = k;
        }
        if (!rc) rc = pq_delta_decode(p + pos, len - pos, suf, n, true, &k, err);
        if (!rc) pos += k;
        floe_slice_t *sl = (floe_slice_t *)dst;
        size_t prev_off = 0, prev_len = 0;
        for (size_t i = 0; i < n && !rc; i++) {
            int64_t pl = pre ? pre[i] : 0, sn = suf[i];
            if (pl < 0 || sn < 0 || (size_t)pl > prev_len || (size_t)sn > len - pos ||
                (d->width && (size_t)(pl + sn) != d->width)) {
                rc = corrupt(err, "bad DELTA byte-array lengths", d->rg, d->col);
                break;
            }
            size_t off = o->bytes.len;
            if (floe_buf_reserve(&o->bytes, (size_t)(pl + sn)) < 0) {
                rc = floe_err_oom(err);
                break;
            }
            if (pl) memcpy(o->bytes.data + off, o->bytes.data + prev_off, (size_t)pl);
            if (sn) memcpy(o->bytes.data + off + pl, p + pos, (size_t)sn);
            o->bytes.len += (size_t)(pl + sn);
            pos += (size_t)sn;
            sl[i].ptr = (const uint8_t *)(uintptr_t)off;
            sl[i].len = (size_t)(pl + sn);
            prev_off = off;
            prev_len = (size_t)(pl + sn);
        }
        free(pre);
        free(suf);
        if (rc) return -1;
        break;
    }
    case PQ_ENC_BSS:
        if (bss_decode(d, p, len, n, dst, err) < 0) return -1;
        break;
    default:
        return floe_err_set(err, FLOE_EUNSUPPORTED,
                            "row group %d column %d: encoding %d not supported", d->rg, d->col,
                            enc);
    }
    o->n_values += n;
    return 0;
}

static int levels_decode(dec_t *d, const uint8_t *p, size_t len, int16_t *dst, size_t n,
                         int16_t max, floe_err_t *err)
{
    pq_rle_dec_t rd;
    pq_rle_dec_init(&rd, p, len, pq_bit_width((uint64_t)max));
    if (pq_rle_dec_i16(&rd, dst, n, max) < 0) return corrupt(err, "bad levels", d->rg, d->col);
    return 0;
}

/* The page whose header is h and compressed bytes body[0..h->compressed)
 * into r->page (h->uncompressed bytes); the first lev_len bytes (v2
 * levels) are stored as they are. */
static int page_decompress(floe_pq_reader_t *r, const pq_page_header_t *h, const uint8_t *body,
                           size_t lev_len, floe_codec_t codec, floe_err_t *err)
{
    r->page.len = 0;
    if (floe_buf_reserve(&r->page, (size_t)h->uncompressed + 1) < 0) return floe_err_oom(err);
    memcpy(r->page.data, body, lev_len);
    size_t want = (size_t)h->uncompressed - lev_len;
    return floe_decompress_exact(r->cctx, codec, body + lev_len, (size_t)h->compressed - lev_len,
                                 r->page.data + lev_len, want, err);
}

static int read_chunk(floe_pq_reader_t *r, int rg, int col, floe_pq_column_t *out,
                      pq_dict_chunk_t *dc, floe_err_t *err)
{
    memset(out, 0, sizeof *out);
    const floe_pq_schema_t *s = r->m.schema;
    if (rg < 0 || rg >= r->m.nrg || col < 0 || col >= s->ncols)
        return floe_err_set(err, FLOE_EINVAL, "no row group %d column %d", rg, col);
    const pq_chunk_meta_t *cm = &r->m.rgs[rg].cols[col];
    const floe_pq_node_t *nd = &s->nodes[s->col_node[col]];
    int16_t max_def = s->max_def[col], max_rep = s->max_rep[col];
    floe_codec_t codec;
    pq_codec_to_floe(cm->codec, &codec);
    dec_t d;
    memset(&d, 0, sizeof d);
    d.out = out;
    d.rg = rg;
    d.col = col;
    d.dc = dc;
    out->phys = nd->phys;
    d.esize = floe_pq_value_size(nd->phys);
    d.width = nd->phys == FLOE_PQ_BYTE_ARRAY ? 0 : pq_phys_width(nd->phys, nd->type_length);
    if (nd->phys == FLOE_PQ_FIXED && d.width == 0)
        return corrupt(err, "fixed column without a length", rg, col);
    size_t pos = (size_t)(cm->dict_page_offset >= 0 ? cm->dict_page_offset : cm->data_page_offset);
    size_t end = pos + (size_t)cm->total_compressed;
    size_t cap_def = 0, cap_rep = 0;
    int rc = 0;
    while (pos < end && out->n_levels < (size_t)cm->num_values) {
        pq_page_header_t h;
        size_t hl;
        if (pq_page_header_decode(r->data + pos, end - pos, &h, &hl, err) < 0) {
            floe_err_wrap(err, "row group %d column %d", rg, col);
            rc = -1;
            break;
        }
        pos += hl;
        if ((size_t)h.compressed > end - pos) {
            rc = corrupt(err, "page extends past its chunk", rg, col);
            break;
        }
        const uint8_t *body = r->data + pos;
        pos += (size_t)h.compressed;
        if (h.type != PQ_PAGE_DATA && h.type != PQ_PAGE_DATA_V2 && h.type != PQ_PAGE_DICT) continue;
        if ((size_t)h.uncompressed > MAX_PAGE_BYTES) {
            rc = corrupt(err, "page too large", rg, col);
            break;
        }
        if ((size_t)h.num_values > MAX_PAGE_VALUES ||
            out->n_levels + (size_t)h.num_values > MAX_CHUNK_LEVELS) {
            rc = corrupt(err, "too many values in a page", rg, col);
            break;
        }
        /* v2: levels are stored uncompressed ahead of the values */
        size_t lev_len = 0;
        bool compressed = true;
        if (h.type == PQ_PAGE_DATA_V2) {
            lev_len = (size_t)h.def_len + (size_t)h.rep_len;
            if (lev_len > (size_t)h.compressed || lev_len > (size_t)h.uncompressed) {
                rc = corrupt(err, "bad v2 level lengths", rg, col);
                break;
            }
            compressed = h.is_compressed;
        }
        if (page_decompress(r, &h, body, lev_len, compressed ? codec : FLOE_CODEC_NONE, err) < 0) {
            floe_err_wrap(err, "row group %d column %d", rg, col);
            rc = -1;
            break;
        }
        const uint8_t *pg = r->page.data;
        size_t plen = (size_t)h.uncompressed;
        if (h.type == PQ_PAGE_DICT) {
            if (read_dict(&d, pg, plen, h.num_values, h.encoding, err) < 0) {
                rc = -1;
                break;
            }
            continue;
        }
        size_t n = (size_t)h.num_values;
        if (floe_grow(&out->def, &cap_def, out->n_levels + n, 2) < 0 ||
            floe_grow(&out->rep, &cap_rep, out->n_levels + n, 2) < 0) {
            rc = floe_err_oom(err);
            break;
        }
        int16_t *dl = out->def + out->n_levels, *rl = out->rep + out->n_levels;
        size_t vp = 0;
        if (h.type == PQ_PAGE_DATA_V2) {
            if (max_rep && levels_decode(&d, pg, (size_t)h.rep_len, rl, n, max_rep, err) < 0) {
                rc = -1;
                break;
            }
            if (max_def &&
                levels_decode(&d, pg + h.rep_len, (size_t)h.def_len, dl, n, max_def, err) < 0) {
                rc = -1;
                break;
            }
            vp = lev_len;
        } else {
            for (int pass = 0; pass < 2; pass++) {
                int16_t mx = pass == 0 ? max_rep : max_def;
                if (!mx) continue;
                if (plen - vp < 4) {
                    rc = corrupt(err, "levels truncated", rg, col);
                    break;
                }
                uint32_t l = floe_rd_le32(pg + vp);
                vp += 4;
                if (l > plen - vp) {
                    rc = corrupt(err, "levels truncated", rg, col);
                    break;
                }
                if (levels_decode(&d, pg + vp, l, pass == 0 ? rl : dl, n, mx, err) < 0) {
                    rc = -1;
                    break;
                }
                vp += l;
            }
            if (rc) break;
        }
        if (max_rep && out->n_levels == 0 && n > 0 && rl[0] != 0) {
            rc = corrupt(err, "first repetition level is not 0", rg, col);
            break;
        }
        size_t nv = n;
        if (max_def) {
            nv = 0;
            for (size_t i = 0; i < n; i++) nv += dl[i] == max_def;
        }
        if (values_decode(&d, h.encoding, pg + vp, plen - vp, nv, err) < 0) {
            rc = -1;
            break;
        }
        out->n_levels += n;
    }
    if (!rc && out->n_levels != (size_t)cm->num_values)
        rc = corrupt(err, "chunk holds fewer values than its metadata says", rg, col);
    if (!rc && dc && !d.dict) rc = corrupt(err, "no dictionary page", rg, col);
    if (dc && !rc) {
        dc->dict = d.dict;
        dc->ndict = d.dict_n;
    } else {
        free(d.dict);
    }
    if (rc) {
        if (dc) {
            free(dc->idx);
            memset(dc, 0, sizeof *dc);
        }
        floe_pq_column_free(out);
        return -1;
    }
    if (!max_def) {
        free(out->def);
        out->def = NULL;
    }
    if (!max_rep) {
        free(out->rep);
        out->rep = NULL;
    }
    if (d.esize == sizeof(floe_slice_t) &&
        (nd->phys == FLOE_PQ_BYTE_ARRAY || nd->phys == FLOE_PQ_FIXED ||
         nd->phys == FLOE_PQ_INT96)) {
        floe_slice_t *sl = dc ? dc->dict : out->values;
        size_t n = dc ? dc->ndict : out->n_values;
        static const uint8_t empty[1];
        const uint8_t *base = out->bytes.data ? out->bytes.data : empty;
        for (size_t i = 0; i < n; i++) sl[i].ptr = base + (uintptr_t)sl[i].ptr;
    }
    return 0;
}

/* The header of the page at *pos of a chunk ending at end into *h, its
 * compressed bytes at *body; *pos moves past the page.  -1 with *err when
 * the header is bad or the page passes the chunk's end. */
static int next_page(const floe_pq_reader_t *r, size_t *pos, size_t end, pq_page_header_t *h,
                     size_t *hl, const uint8_t **body, int rg, int col, floe_err_t *err)
{
    if (pq_page_header_decode(r->data + *pos, end - *pos, h, hl, err) < 0) {
        floe_err_wrap(err, "row group %d column %d", rg, col);
        return -1;
    }
    if (h->compressed < 0 || (size_t)h->compressed > end - *pos - *hl)
        return corrupt(err, "page extends past its chunk", rg, col);
    *body = r->data + *pos + *hl;
    *pos += *hl + (size_t)h->compressed;
    return 0;
}

int floe_pq_read_column(floe_pq_reader_t *r, int rg, int col, floe_pq_column_t *out,
                        floe_err_t *err)
{
    return read_chunk(r, rg, col, out, NULL, err);
}

int pq_read_column_dict(floe_pq_reader_t *r, int rg, int col, floe_pq_column_t *out,
                        pq_dict_chunk_t *dc, floe_err_t *err)
{
    memset(dc, 0, sizeof *dc);
    const floe_pq_schema_t *s = r->m.schema;
    if (rg < 0 || rg >= r->m.nrg || col < 0 || col >= s->ncols)
        return floe_err_set(err, FLOE_EINVAL, "no row group %d column %d", rg, col);
    const pq_chunk_meta_t *cm = &r->m.rgs[rg].cols[col];
    /* a dictionary page first, then only dictionary-encoded data pages */
    size_t pos = (size_t)(cm->dict_page_offset >= 0 ? cm->dict_page_offset : cm->data_page_offset);
    size_t end = pos + (size_t)cm->total_compressed;
    bool first = true;
    while (pos < end) {
        pq_page_header_t h;
        size_t hl;
        const uint8_t *body;
        if (next_page(r, &pos, end, &h, &hl, &body, rg, col, err) < 0) return -1;
        if (first != (h.type == PQ_PAGE_DICT)) return 0;
        if (!first && ((h.type != PQ_PAGE_DATA && h.type != PQ_PAGE_DATA_V2) ||
                       (h.encoding != PQ_ENC_RLE_DICT && h.encoding != PQ_ENC_PLAIN_DICT)))
            return 0;
        first = false;
    }
    if (first) return 0;
    if (read_chunk(r, rg, col, out, dc, err) < 0) return -1;
    return 1;
}

void pq_dict_chunk_free(pq_dict_chunk_t *dc)
{
    free(dc->dict);
    free(dc->idx);
    memset(dc, 0, sizeof *dc);
}

/* ---- chunks as stored ---- */

/* Decode n levels (bit width of max) from p[0..len) and count those equal
 * to `want`; -1 when the data is bad. */
static int count_levels(const uint8_t *p, size_t len, size_t n, int16_t max, int16_t want,
                        int64_t *count, int16_t *first)
{
    pq_rle_dec_t rd;
    pq_rle_dec_init(&rd, p, len, pq_bit_width((uint64_t)max));
    uint64_t c = 0;
    uint32_t f = 0;
    if (pq_rle_count(&rd, n, (uint32_t)max, (uint32_t)want, &c, &f) < 0) return -1;
    *count = (int64_t)c;
    *first = (int16_t)f;
    return 0;
}

/* Value encodings of pages that may be copied as they are. */
#define COPY_ENCODINGS                                                     \
    ((1u << PQ_ENC_PLAIN) | (1u << PQ_ENC_RLE) | (1u << PQ_ENC_DELTA_BP) | \
     (1u << PQ_ENC_DELTA_LBA) | (1u << PQ_ENC_DELTA_BA) | (1u << PQ_ENC_BSS))

int pq_chunk_scan(floe_pq_reader_t *r, int rg, int col, bool nans, bool trust, pq_chunk_scan_t *out,
                  floe_err_t *err)
{
    memset(out, 0, sizeof *out);
    const floe_pq_schema_t *s = r->m.schema;
    if (rg < 0 || rg >= r->m.nrg || col < 0 || col >= s->ncols)
        return floe_err_set(err, FLOE_EINVAL, "no row group %d column %d", rg, col);
    const pq_chunk_meta_t *cm = &r->m.rgs[rg].cols[col];
    if (cm->dict_page_offset >= 0 ||
        (cm->encodings & ((1u << PQ_ENC_PLAIN_DICT) | (1u << PQ_ENC_RLE_DICT))))
        return 0;
    int16_t max_def = s->max_def[col], max_rep = s->max_rep[col];
    floe_pq_phys_t phys = s->nodes[s->col_node[col]].phys;
    size_t width = phys == FLOE_PQ_DOUBLE ? 8 : 4;
    floe_codec_t codec;
    pq_codec_to_floe(cm->codec, &codec);
    size_t pos = (size_t)cm->data_page_offset, end = pos + (size_t)cm->total_compressed;
    /* headers first: any dictionary page or dictionary-encoded page, or
     * values whose NaNs cannot be counted, and the chunk is decoded instead */
    int64_t levels = 0, unc = 0;
    uint32_t encs = max_def || max_rep ? 1u << PQ_ENC_RLE : 0;
    for (size_t at = pos; at < end;) {
        pq_page_header_t h;
        size_t hl;
        const uint8_t *body;
        if (next_page(r, &at, end, &h, &hl, &body, rg, col, err) < 0) return -1;
        if (h.type != PQ_PAGE_DATA && h.type != PQ_PAGE_DATA_V2) return 0;
        /* only encodings this reader decodes without a dictionary */
        if (h.encoding < 0 || h.encoding > 31 || !((1u << h.encoding) & COPY_ENCODINGS)) return 0;
        if (nans && h.encoding != PQ_ENC_PLAIN) return 0;
        if (h.num_values < 0 || (size_t)h.uncompressed > MAX_PAGE_BYTES)
            return corrupt(err, "bad page header", rg, col);
        levels += h.num_values;
        unc += (int64_t)(hl + (size_t)h.uncompressed);
        encs |= 1u << h.encoding;
    }
    if (levels != cm->num_values)
        return corrupt(err, "chunk holds fewer values than its metadata says", rg, col);
    out->bytes = r->data + pos;
    out->len = end - pos;
    out->codec = cm->codec;
    out->stats = cm->has_stats ? &cm->stats : NULL;
    out->encodings = encs;
    out->uncompressed = unc;
    if (trust && !nans && cm->has_stats && cm->stats.null_count >= 0 &&
        cm->stats.null_count <= levels) {
        /* the footer's counts, as its writer kept them */
        out->levels = levels;
        out->nulls = cm->stats.null_count;
        out->rows = max_rep ? r->m.rgs[rg].num_rows : levels;
        return 1;
    }
    /* else the levels of each page: values, nulls and rows counted */
    out->encodings = 0;
    out->uncompressed = 0;
    while (pos < end) {
        pq_page_header_t h;
        size_t hl;
        const uint8_t *body;
        if (next_page(r, &pos, end, &h, &hl, &body, rg, col, err) < 0) return -1;
        size_t n = (size_t)h.num_values;
        int64_t full = (int64_t)n, rows = (int64_t)n;
        int16_t first_rep = 0, first_def;
        out->uncompressed += (int64_t)(hl + (size_t)h.uncompressed);
        out->encodings |= 1u << h.encoding;
        if (max_def || max_rep) out->encodings |= 1u << PQ_ENC_RLE;
        if (h.type == PQ_PAGE_DATA_V2) {
            size_t lev_len = (size_t)h.def_len + (size_t)h.rep_len;
            if (h.def_len < 0 || h.rep_len < 0 || lev_len > (size_t)h.compressed ||
                lev_len > (size_t)h.uncompressed)
                return corrupt(err, "bad v2 level lengths", rg, col);
            if ((max_rep &&
                 count_levels(body, (size_t)h.rep_len, n, max_rep, 0, &rows, &first_rep) < 0) ||
                (max_def && count_levels(body + h.rep_len, (size_t)h.def_len, n, max_def, max_def,
                                         &full, &first_def) < 0))
                return corrupt(err, "bad levels", rg, col);
            if (nans && full) {
                if (page_decompress(r, &h, body, lev_len, h.is_compressed ? codec : FLOE_CODEC_NONE,
                                    err) < 0)
                    return -1;
                if ((size_t)full > ((size_t)h.uncompressed - lev_len) / width)
                    return corrupt(err, "PLAIN values truncated", rg, col);
                const uint8_t *v = r->page.data + lev_len;
                for (int64_t i = 0; i < full; i++) {
                    if (width == 8) {
                        double x;
                        memcpy(&x, v + 8 * i, 8);
                        out->nans += x != x;
                    } else {
                        float x;
                        memcpy(&x, v + 4 * i, 4);
                        out->nans += x != x;
                    }
                }
            }
        } else if (max_def || max_rep || nans) {
            if (page_decompress(r, &h, body, 0, codec, err) < 0) {
                floe_err_wrap(err, "row group %d column %d", rg, col);
                return -1;
            }
            const uint8_t *pg = r->page.data;
            size_t plen = (size_t)h.uncompressed, vp = 0;
            for (int pass = 0; pass < 2; pass++) {
                int16_t mx = pass == 0 ? max_rep : max_def;
                if (!mx) continue;
                if (plen - vp < 4) return corrupt(err, "levels truncated", rg, col);
                uint32_t l = floe_rd_le32(pg + vp);
                vp += 4;
                if (l > plen - vp) return corrupt(err, "levels truncated", rg, col);
                if (count_levels(pg + vp, l, n, mx, pass == 0 ? 0 : max_def,
                                 pass == 0 ? &rows : &full,
                                 pass == 0 ? &first_rep : &first_def) < 0)
                    return corrupt(err, "bad levels", rg, col);
                vp += l;
            }
            if (nans) {
                if ((size_t)full > (plen - vp) / width)
                    return corrupt(err, "PLAIN values truncated", rg, col);
                for (int64_t i = 0; i < full; i++) {
                    if (width == 8) {
                        double x;
                        memcpy(&x, pg + vp + 8 * i, 8);
                        out->nans += x != x;
                    } else {
                        float x;
                        memcpy(&x, pg + vp + 4 * i, 4);
                        out->nans += x != x;
                    }
                }
            }
        }
        if (out->levels == 0 && n && first_rep != 0)
            return corrupt(err, "first repetition level is not 0", rg, col);
        out->levels += (int64_t)n;
        out->nulls += (int64_t)n - full;
        out->rows += rows;
    }
    if (out->levels != cm->num_values)
        return corrupt(err, "chunk holds fewer values than its metadata says", rg, col);
    return 1;
}
