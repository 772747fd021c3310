/* Streaming Parquet writer: pages and row groups with bounded memory.
 *
 * Each leaf column buffers the levels and values of its open page; a full
 * page is encoded, compressed and appended to the column's chunk buffer.
 * When the row group is flushed, every column chunk goes to the sink in
 * schema order (dictionary page first), then a new row group starts.
 * Encodings: RLE_DICTIONARY while the dictionary pays off and stays under
 * its limit; otherwise DELTA_BINARY_PACKED for integers, DELTA_LENGTH_/
 * DELTA_BYTE_ARRAY for byte arrays and PLAIN for the rest.  Statistics are
 * in parquet_stats.c, the dictionary in parquet_dict.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "format/parquet_write_int.h"
#include "util/mem.h"

floe_pq_scratch_t *floe_pq_scratch_new(void)
{
    return calloc(1, sizeof(floe_pq_scratch_t));
}

static void scratch_clear(floe_pq_scratch_t *s)
{
    floe_codec_ctx_free(s->cctx);
    s->cctx = NULL;
    floe_buf_free(&s->page);
    floe_buf_free(&s->z);
    floe_buf_free(&s->hdr);
}

void floe_pq_scratch_free(floe_pq_scratch_t *s)
{
    if (!s) return;
    scratch_clear(s);
    free(s);
}

floe_pq_write_opts_t floe_pq_write_opts_default(void)
{
    floe_pq_write_opts_t o;
    memset(&o, 0, sizeof o);
    o.codec = FLOE_CODEC_ZSTD;
    /* pages are already dictionary/delta encoded: zstd's level 1 matches
     * level 3's size on them at about twice the speed */
    o.level = 1;
    o.page_size = 1 << 20;
    o.row_group_size = 64u << 20;
    o.dict_limit = 1 << 20;
    o.dictionary = true;
    o.delta = true;
    o.delta_byte_array = true;
    o.created_by = "floe";
    return o;
}

int floe_pq_sink_buf(void *ctx, const void *p, size_t n, floe_err_t *err)
{
    if (floe_buf_append(ctx, p, n) < 0) return floe_err_oom(err);
    return 0;
}

int floe_pq_sink_file(void *ctx, const void *p, size_t n, floe_err_t *err)
{
    if (n && fwrite(p, 1, n, ctx) != n) return floe_err_errno(err, errno, "write");
    return 0;
}

static int emit(floe_pq_writer_t *w, const void *p, size_t n, floe_err_t *err)
{
    if (w->sink(w->sink_ctx, p, n, err) < 0) {
        w->failed = true;
        return -1;
    }
    w->offset += n;
    return 0;
}

static bool dict_allowed(const floe_pq_writer_t *w, const pq_col_t *c)
{
    return w->o.dictionary && c->phys != FLOE_PQ_BOOLEAN;
}

static void col_reset_chunk(floe_pq_writer_t *w, pq_col_t *c)
{
    c->mode = dict_allowed(w, c) && !c->dict_failed ? M_DICT : pq_fallback_mode(w, c);
    c->decided = false;
    c->dict_used = false;
    if (c->slots) memset(c->slots, 0, c->nslots * sizeof *c->slots);
    c->dict_n = 0;
    c->dict_bytes = 0;
    c->dvals.len = 0;
    if (c->doff) c->doff[0] = 0;
    c->nidx = 0;
    c->plain_bytes = 0;
    c->vals.len = 0;
    c->lens.len = 0;
    c->has_minmax = false;
    c->null_count = 0;
    c->chunk.len = 0;
    c->chunk_uncompressed = 0;
    c->num_values = 0;
    c->encodings = 0;
}

floe_pq_writer_t *floe_pq_writer_new(const floe_pq_schema_t *s, const floe_pq_write_opts_t *o,
                                     floe_pq_sink_fn sink, void *ctx, floe_err_t *err)
{
    floe_pq_write_opts_t opts = o ? *o : floe_pq_write_opts_default();
    if (pq_codec_from_floe(opts.codec) < 0) {
        floe_err_set(err, FLOE_EINVAL, "codec %s is not a Parquet codec",
                     floe_codec_name(opts.codec));
        return NULL;
    }
    if (s->ncols == 0) {
        floe_err_set(err, FLOE_EINVAL, "schema has no leaf columns");
        return NULL;
    }
    for (int i = 0; i < s->n; i++)
        if (s->nodes[i].phys == FLOE_PQ_INT96) {
            floe_err_set(err, FLOE_EUNSUPPORTED, "INT96 is not written");
            return NULL;
        }
    if (!opts.page_size) opts.page_size = 1 << 20;
    if (!opts.row_group_size) opts.row_group_size = 64u << 20;
    if (!opts.dict_limit) opts.dict_limit = 1 << 20;
    floe_pq_writer_t *w = calloc(1, sizeof *w);
    if (!w) goto oom;
    w->s = s;
    w->o = opts;
    w->sc = opts.scratch ? opts.scratch : &w->own;
    w->created_by = strdup(opts.created_by ? opts.created_by : "floe");
    w->o.created_by = NULL;
    w->sink = sink;
    w->sink_ctx = ctx;
    w->pq_codec = pq_codec_from_floe(opts.codec);
    /* a shared scratch shares its codec context (zstd's is ~0.5 MiB) among
     * writers of one level */
    if (opts.scratch && !opts.scratch->cctx &&
        (opts.scratch->cctx = floe_codec_ctx_new(opts.level)))
        opts.scratch->level = opts.level;
    if (opts.scratch && opts.scratch->cctx && opts.scratch->level == opts.level)
        w->cctx = opts.scratch->cctx;
    else
        w->cctx = w->own_cctx = floe_codec_ctx_new(opts.level);
    w->ncols = s->ncols;
    w->cols = calloc((size_t)s->ncols, sizeof *w->cols);
    if (!w->created_by || !w->cctx || !w->cols) goto oom;
    for (int i = 0; i < s->ncols; i++) {
        pq_col_t *c = &w->cols[i];
        c->node = s->col_node[i];
        c->spec = &s->nodes[c->node];
        c->phys = c->spec->phys;
        c->width = c->phys == FLOE_PQ_BYTE_ARRAY ? 0 : pq_phys_width(c->phys, c->spec->type_length);
        c->settle = opts.page_size + opts.page_size / 8;
        c->max_def = s->max_def[i];
        c->max_rep = s->max_rep[i];
        c->bw_def = pq_bit_width((uint64_t)c->max_def);
        c->bw_rep = pq_bit_width((uint64_t)c->max_rep);
        col_reset_chunk(w, c);
    }
    if (emit(w, "PAR1", 4, err) < 0) {
        floe_pq_writer_free(w);
        return NULL;
    }
    return w;
oom:
    floe_pq_writer_free(w);
    floe_err_oom(err);
    return NULL;
}

void floe_pq_writer_free(floe_pq_writer_t *w)
{
    if (!w) return;
    for (int i = 0; w->cols && i < w->ncols; i++) {
        pq_col_t *c = &w->cols[i];
        free(c->def);
        free(c->rep);
        free(c->slots);
        free(c->doff);
        free(c->idx);
        floe_buf_free(&c->dvals);
        floe_buf_free(&c->vals);
        floe_buf_free(&c->lens);
        floe_buf_free(&c->min);
        floe_buf_free(&c->max);
        floe_buf_free(&c->chunk);
        floe_buf_free(&c->fmin);
        floe_buf_free(&c->fmax);
    }
    free(w->cols);
    for (int g = 0; g < w->nrg; g++) {
        for (int i = 0; i < w->ncols; i++) {
            floe_buf_free(&w->rgs[g].cols[i].stats.min);
            floe_buf_free(&w->rgs[g].cols[i].stats.max);
        }
        free(w->rgs[g].cols);
    }
    free(w->rgs);
    for (int i = 0; i < w->nkv; i++) {
        free(w->kv[i].key);
        free(w->kv[i].value);
    }
    free(w->kv);
    scratch_clear(&w->own);
    free(w->lev8);
    floe_codec_ctx_free(w->own_cctx);
    free(w->created_by);
    free(w);
}

int floe_pq_writer_set_kv(floe_pq_writer_t *w, const char *key, const char *value, floe_err_t *err)
{
    for (int i = 0; i < w->nkv; i++) {
        if (strcmp(w->kv[i].key, key) == 0) {
            char *v = strdup(value);
            if (!v) return floe_err_oom(err);
            free(w->kv[i].value);
            w->kv[i].value = v;
            return 0;
        }
    }
    pq_kv_t *kv = realloc(w->kv, sizeof *kv * (size_t)(w->nkv + 1));
    if (!kv) return floe_err_oom(err);
    w->kv = kv;
    kv[w->nkv].key = strdup(key);
    kv[w->nkv].value = strdup(value);
    if (!kv[w->nkv].key || !kv[w->nkv].value) {
        free(kv[w->nkv].key);
        free(kv[w->nkv].value);
        return floe_err_oom(err);
    }
    w->nkv++;
    return 0;
}

bool floe_pq_writer_bounds(const floe_pq_writer_t *w, int col, floe_slice_t *min, floe_slice_t *max)
{
    if (col < 0 || col >= w->ncols || !w->cols[col].has_fbounds) return false;
    const pq_col_t *c = &w->cols[col];
    *min = floe_buf_slice(&c->fmin);
    *max = floe_buf_slice(&c->fmax);
    return true;
}

uint64_t floe_pq_writer_column_bytes(const floe_pq_writer_t *w, int col)
{
    uint64_t n = 0;
    if (col < 0 || col >= w->ncols) return 0;
    for (int g = 0; g < w->nrg; g++) n += (uint64_t)w->rgs[g].cols[col].total_compressed;
    return n;
}

/* ---- values ---- */

/* Leave dictionary mode.  At the first page the dictionary is dropped and
 * the page's values re-encoded; later, the dictionary pages written so far
 * stay and the rest of the chunk uses the fallback encoding. */
int pq_dict_abandon(floe_pq_writer_t *w, pq_col_t *c, bool drop, floe_err_t *err)
{
    int mode = pq_fallback_mode(w, c);
    c->dict_failed = true;
    if (!drop) {
        if (pq_page_flush(w, c, err) < 0) return -1;
        c->mode = mode;
        return 0;
    }
    c->mode = mode;
    for (size_t i = 0; i < c->nidx; i++) {
        const uint8_t *p;
        size_t n;
        pq_dict_entry(c, c->idx[i], &p, &n);
        if (pq_put_fallback(c, p, n) < 0) return floe_err_oom(err);
    }
    c->nidx = 0;
    c->plain_bytes = 0;
    c->dict_n = 0;
    c->dict_bytes = 0;
    /* nothing refers to the dictionary any more: give its memory back (a
     * high-cardinality column would otherwise keep up to dict_limit x 2
     * of it for the writer's life) */
    floe_buf_free(&c->dvals);
    free(c->slots);
    free(c->doff);
    free(c->idx);
    c->slots = NULL;
    c->doff = NULL;
    c->idx = NULL;
    c->nslots = c->doff_cap = c->cap_idx = 0;
    return 0;
}

static size_t page_estimate(const pq_col_t *c)
{
    if (c->nlev == 0) return 0;
    size_t lev = (c->nlev * (size_t)(c->bw_def + c->bw_rep)) / 8;
    if (c->mode == M_DICT) return lev + c->nidx * (size_t)pq_bit_width(c->dict_n) / 8 + 1;
    if (c->mode == M_DELTA) return lev + c->vals.len / 2;
    return lev + c->vals.len + c->lens.len / 4;
}

/* Append one batch of values (n of them, layout per phys). */
static int put_values(pq_col_t *c, const void *values, size_t from, size_t n, floe_err_t *err)
{
    if (c->mode == M_DICT) {
        if (floe_grow(&c->idx, &c->cap_idx, c->nidx + n, sizeof *c->idx) != 0)
            return floe_err_oom(err);
        uint32_t *out = c->idx + c->nidx;
        if (c->width) {
            const uint8_t *v = (const uint8_t *)values + from * c->width;
            if (c->phys == FLOE_PQ_FIXED) {
                const floe_slice_t *sl = (const floe_slice_t *)values + from;
                for (size_t i = 0; i < n; i++) {
                    int64_t e = pq_dict_put(c, sl[i].ptr, c->width);
                    if (e < 0) return floe_err_oom(err);
                    out[i] = (uint32_t)e;
                }
            } else {
                for (size_t i = 0; i < n; i++) {
                    int64_t e = pq_dict_put(c, v + i * c->width, c->width);
                    if (e < 0) return floe_err_oom(err);
                    out[i] = (uint32_t)e;
                }
            }
        } else {
            const floe_slice_t *sl = (const floe_slice_t *)values + from;
            size_t pb = 0;
            for (size_t i = 0; i < n; i++) {
                int64_t e = pq_dict_put(c, sl[i].ptr, sl[i].len);
                if (e < 0) return floe_err_oom(err);
                out[i] = (uint32_t)e;
                pb += 4 + sl[i].len;
            }
            c->plain_bytes += pb;
        }
        c->nidx += n;
        return 0;
    }
    if (c->phys == FLOE_PQ_BYTE_ARRAY && c->mode == M_DLBA) {
        /* lengths and bytes of the whole batch: one reservation, a copy each */
        const floe_slice_t *sl = (const floe_slice_t *)values + from;
        size_t total = 0;
        for (size_t i = 0; i < n; i++) total += sl[i].len;
        if (floe_buf_reserve_settle(&c->lens, n * 4, c->settle) < 0 ||
            floe_buf_reserve_settle(&c->vals, total + 1, c->settle) < 0)
            return floe_err_oom(err);
        uint8_t *lp = c->lens.data + c->lens.len, *vp = c->vals.data + c->vals.len;
        for (size_t i = 0; i < n; i++) {
            int32_t l = (int32_t)sl[i].len;
            memcpy(lp + 4 * i, &l, 4); /* little-endian hosts only (x86-64, arm64) */
            memcpy(vp, sl[i].ptr, sl[i].len);
            vp += sl[i].len;
        }
        c->lens.len += n * 4;
        c->vals.len += total;
        if (pq_stats_ordered(c)) pq_stats_bytes(c, sl, n);
        return 0;
    }
    if (c->phys == FLOE_PQ_BYTE_ARRAY || c->phys == FLOE_PQ_FIXED) {
        const floe_slice_t *sl = (const floe_slice_t *)values + from;
        for (size_t i = 0; i < n; i++)
            if (pq_put_fallback(c, sl[i].ptr, c->width ? c->width : sl[i].len) < 0)
                return floe_err_oom(err);
        return 0;
    }
    const uint8_t *v = (const uint8_t *)values + from * c->width;
    if (c->phys == FLOE_PQ_BOOLEAN) {
        for (size_t i = 0; i < n; i++) {
            uint8_t b = v[i] != 0;
            if (pq_put_fallback(c, &b, 1) < 0) return floe_err_oom(err);
        }
        return 0;
    }
    /* numbers: the batch as it is (DELTA widens int32 to int64), then the
     * statistics in one loop */
    if (c->mode == M_DELTA && c->phys == FLOE_PQ_INT32) {
        if (floe_buf_reserve_settle(&c->vals, n * 8, c->settle) < 0) return floe_err_oom(err);
        for (size_t i = 0; i < n; i++) {
            int32_t y;
            memcpy(&y, v + 4 * i, 4);
            int64_t x = y;
            memcpy(c->vals.data + c->vals.len + 8 * i, &x, 8);
        }
        c->vals.len += n * 8;
    } else if (floe_buf_reserve_settle(&c->vals, n * c->width, c->settle) < 0 ||
               floe_buf_append(&c->vals, v, n * c->width) < 0) {
        return floe_err_oom(err);
    }
    if (pq_stats_ordered(c)) pq_stats_batch(c, v, n);
    return 0;
}

/* ---- pages ---- */

static int put_le32(floe_buf_t *b, uint32_t v)
{
    return floe_buf_append_le32(b, v);
}
static void floe_wr_le32_(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static int encode_values(floe_pq_writer_t *w, pq_col_t *c, floe_buf_t *b, int *enc)
{
    (void)w;
    switch (c->mode) {
    case M_DICT: {
        if (c->nidx == 0) { /* all nulls: no need for the dictionary */
            *enc = PQ_ENC_PLAIN;
            return 0;
        }
        int bw = pq_bit_width(c->dict_n > 0 ? c->dict_n - 1 : 0);
        *enc = PQ_ENC_RLE_DICT;
        if (floe_buf_append_u8(b, (uint8_t)bw) < 0) return -1;
        return pq_rle_encode_u32(b, c->idx, c->nidx, bw);
    }
    case M_PLAIN:
        *enc = PQ_ENC_PLAIN;
        if (c->phys == FLOE_PQ_BOOLEAN) return pq_bool_pack(b, c->vals.data, c->vals.len);
        return floe_buf_append(b, c->vals.data, c->vals.len);
    case M_DELTA:
        *enc = PQ_ENC_DELTA_BP;
        return pq_delta_encode(b, (const int64_t *)c->vals.data, c->vals.len / 8,
                               c->phys == FLOE_PQ_INT32);
    default: {
        /* DELTA_BYTE_ARRAY when shared prefixes save a quarter of the
         * bytes, else DELTA_LENGTH_BYTE_ARRAY; decided per page */
        size_t n = c->lens.len / 4;
        const int32_t *len = (const int32_t *)(void *)c->lens.data;
        int32_t *pre = malloc((n ? n : 1) * 2 * sizeof *pre);
        if (!pre) return -1;
        int32_t *suf = pre + n;
        const uint8_t *prev = NULL, *p = c->vals.data;
        size_t pn = 0, shared = 0;
        for (size_t i = 0; i < n; i++) {
            size_t l = (size_t)len[i], k = 0, m = l < pn ? l : pn;
            while (k < m && p[k] == prev[k]) k++;
            pre[i] = (int32_t)k;
            suf[i] = (int32_t)(l - k);
            shared += k;
            prev = p;
            pn = l;
            p += l;
        }
        int rc;
        if (shared * 4 <= c->vals.len || !w->o.delta_byte_array) {
            *enc = PQ_ENC_DELTA_LBA;
            rc = pq_delta_encode_i32(b, len, n);
            if (!rc) rc = floe_buf_append(b, c->vals.data, c->vals.len);
        } else {
            *enc = PQ_ENC_DELTA_BA;
            rc = pq_delta_encode_i32(b, pre, n);
            if (!rc) rc = pq_delta_encode_i32(b, suf, n);
            p = c->vals.data;
            for (size_t i = 0; i < n && !rc; i++) {
                rc = floe_buf_append(b, p + pre[i], (size_t)suf[i]);
                p += len[i];
            }
        }
        free(pre);
        return rc;
    }
    }
}

/* Room for extra more bytes in a buffer that may grow large (column
 * chunks): past 2 MiB, grow in 2 MiB-aligned blocks advised as huge pages,
 * which cuts page faults (the dominant kernel cost of buffering a row
 * group) by up to 512x.  Memory stays free()-able like floe_buf_t's. */
int pq_big_reserve(floe_buf_t *b, size_t extra)
{
    const size_t huge = 2u << 20;
    if (b->cap - b->len >= extra) return 0;
    size_t need = b->len + extra;
    if (need < huge) return floe_buf_reserve(b, extra);
    size_t cap = b->cap * 2 > need ? b->cap * 2 : need;
    cap = (cap + huge - 1) & ~(huge - 1);
    uint8_t *p = aligned_alloc(huge, cap);
    if (!p) return -1;
#ifdef MADV_HUGEPAGE
    madvise(p, cap, MADV_HUGEPAGE);
#endif
    if (b->len) memcpy(p, b->data, b->len);
    free(b->data);
    b->data = p;
    b->cap = cap;
    return 0;
}

/* Compress body and append header + body to the chunk. */
static int put_page(floe_pq_writer_t *w, pq_col_t *c, pq_page_header_t *h, const uint8_t *raw,
                    size_t raw_len, const uint8_t *body, size_t body_len, floe_err_t *err)
{
    w->sc->z.len = 0;
    if (floe_compress(w->cctx, w->o.codec, body, body_len, &w->sc->z, err) < 0) return -1;
    if (raw_len + body_len > INT32_MAX || raw_len + w->sc->z.len > INT32_MAX)
        return floe_err_set(err, FLOE_ERANGE, "page too large");
    h->uncompressed = (int32_t)(raw_len + body_len);
    h->compressed = (int32_t)(raw_len + w->sc->z.len);
    w->sc->hdr.len = 0;
    if (pq_page_header_encode(&w->sc->hdr, h) < 0 ||
        pq_big_reserve(&c->chunk, w->sc->hdr.len + raw_len + w->sc->z.len) < 0 ||
        floe_buf_append(&c->chunk, w->sc->hdr.data, w->sc->hdr.len) < 0 ||
        floe_buf_append(&c->chunk, raw, raw_len) < 0 ||
        floe_buf_append(&c->chunk, w->sc->z.data, w->sc->z.len) < 0)
        return floe_err_oom(err);
    c->chunk_uncompressed += (int64_t)(w->sc->hdr.len + raw_len + body_len);
    return 0;
}

/* Whether the dictionary (entries + bit-packed indices) beats the fallback
 * encoding for the values seen so far in this chunk's first page. */
static bool dict_pays(const floe_pq_writer_t *w, const pq_col_t *c)
{
    size_t plain = c->width ? c->nidx * c->width : c->plain_bytes;
    size_t dict = c->dict_bytes + c->nidx * (size_t)pq_bit_width(c->dict_n) / 8;
    double factor =
        (c->phys == FLOE_PQ_INT32 || c->phys == FLOE_PQ_INT64) && w->o.delta ? 0.5 : 0.8;
    return (double)dict <= factor * (double)plain;
}

int pq_page_flush(floe_pq_writer_t *w, pq_col_t *c, floe_err_t *err)
{
    if (c->nlev == 0) return 0;
    if (c->mode == M_DICT && !c->decided) {
        /* first page: keep the dictionary only when it pays */
        if (!dict_pays(w, c) && pq_dict_abandon(w, c, true, err) < 0) return -1;
        c->decided = true;
    }
    floe_buf_t *b = &w->sc->page;
    b->len = 0;
    size_t raw_len = 0;
    int rc = 0;
    pq_page_header_t h;
    memset(&h, 0, sizeof h);
    h.num_values = (int32_t)c->nlev;
    if (w->o.page_v2) {
        /* levels stay uncompressed in front of the (compressed) values */
        if (c->max_rep) rc = pq_rle_encode_u8(b, c->rep, c->nlev, c->bw_rep);
        h.rep_len = (int32_t)b->len;
        if (!rc && c->max_def) rc = pq_rle_encode_u8(b, c->def, c->nlev, c->bw_def);
        h.def_len = (int32_t)(b->len - (size_t)h.rep_len);
        raw_len = b->len;
        h.type = PQ_PAGE_DATA_V2;
        h.num_nulls = (int32_t)(c->nlev - c->page_vals);
        h.num_rows = (int32_t)c->page_rows;
        h.is_compressed = w->o.codec != FLOE_CODEC_NONE;
    } else {
        h.type = PQ_PAGE_DATA;
        for (int pass = 0; pass < 2 && !rc; pass++) {
            uint8_t *lv = pass == 0 ? c->rep : c->def;
            int bw = pass == 0 ? c->bw_rep : c->bw_def;
            if ((pass == 0 ? c->max_rep : c->max_def) == 0) continue;
            size_t at = b->len;
            rc = put_le32(b, 0);
            if (!rc) rc = pq_rle_encode_u8(b, lv, c->nlev, bw);
            if (!rc) floe_wr_le32_(b->data + at, (uint32_t)(b->len - at - 4));
        }
    }
    int enc = 0;
    if (!rc) rc = encode_values(w, c, b, &enc);
    if (rc) return floe_err_oom(err);
    h.encoding = enc;
    if (w->o.page_v2 && !h.is_compressed) {
        /* codec none: nothing to compress */
    }
    if (put_page(w, c, &h, b->data, raw_len, b->data + raw_len, b->len - raw_len, err) < 0)
        return -1;
    c->encodings |= 1u << enc;
    if (enc == PQ_ENC_RLE_DICT) c->dict_used = true;
    c->num_values += (int64_t)c->nlev;
    c->nlev = 0;
    c->page_vals = 0;
    c->page_rows = 0;
    c->nidx = 0;
    c->plain_bytes = 0;
    c->vals.len = 0;
    c->lens.len = 0;
    return 0;
}

static int grow_levels(pq_col_t *c, size_t extra)
{
    if (c->nlev + extra <= c->cap_lev) return 0;
    size_t cap = c->cap_lev ? c->cap_lev : 4096;
    while (cap < c->nlev + extra) cap *= 2;
    if (c->max_def) {
        uint8_t *d = realloc(c->def, cap * sizeof *d);
        if (!d) return -1;
        c->def = d;
    }
    if (c->max_rep) {
        uint8_t *r = realloc(c->rep, cap * sizeof *r);
        if (!r) return -1;
        c->rep = r;
    }
    c->cap_lev = cap;
    return 0;
}

/* Checks shared by both level widths: the column exists and takes the
 * levels given. */
pq_col_t *pq_column_for(floe_pq_writer_t *w, int col, size_t n_levels, bool has_def, bool has_rep,
                        floe_err_t *err)
{
    if (w->closed || w->failed) {
        floe_err_set(err, FLOE_ECLOSED, "parquet writer is closed or failed");
        return NULL;
    }
    if (col < 0 || col >= w->ncols) {
        floe_err_set(err, FLOE_EINVAL, "no column %d", col);
        return NULL;
    }
    pq_col_t *c = &w->cols[col];
    if ((c->max_def && !has_def && n_levels) || (c->max_rep && !has_rep && n_levels)) {
        floe_err_set(err, FLOE_EINVAL, "column %s needs %s levels", c->spec->name,
                     c->max_def && !has_def ? "definition" : "repetition");
        return NULL;
    }
    return c;
}

int floe_pq_write_column(floe_pq_writer_t *w, int col, size_t n_levels, const int16_t *def,
                         const int16_t *rep, const void *values, size_t n_values, floe_err_t *err)
{
    pq_col_t *c = pq_column_for(w, col, n_levels, def != NULL, rep != NULL, err);
    if (!c) return -1;
    const char *name = c->spec->name;
    /* narrow the levels (checked against the column's maxima) */
    size_t need = (c->max_def ? n_levels : 0) + (c->max_rep ? n_levels : 0);
    if (floe_grow(&w->lev8, &w->cap_lev8, need, 1) != 0) return floe_err_oom(err);
    uint8_t *d8 = NULL, *r8 = NULL;
    if (c->max_def) {
        d8 = w->lev8;
        for (size_t i = 0; i < n_levels; i++) {
            if ((uint16_t)def[i] > (uint16_t)c->max_def)
                return floe_err_set(err, FLOE_EINVAL, "column %s: definition level %d > %d", name,
                                    def[i], c->max_def);
            d8[i] = (uint8_t)def[i];
        }
    }
    if (c->max_rep) {
        r8 = w->lev8 + (c->max_def ? n_levels : 0);
        for (size_t i = 0; i < n_levels; i++) {
            if ((uint16_t)rep[i] > (uint16_t)c->max_rep)
                return floe_err_set(err, FLOE_EINVAL, "column %s: repetition level %d > %d", name,
                                    rep[i], c->max_rep);
            r8[i] = (uint8_t)rep[i];
        }
    }
    return pq_write_levels(w, c, n_levels, d8, r8, values, n_values, NULL, err);
}

int floe_pq_write_column8(floe_pq_writer_t *w, int col, size_t n_levels, const uint8_t *def,
                          const uint8_t *rep, const void *values, size_t n_values, floe_err_t *err)
{
    pq_col_t *c = pq_column_for(w, col, n_levels, def != NULL, rep != NULL, err);
    if (!c) return -1;
    return pq_write_levels(w, c, n_levels, c->max_def ? def : NULL, c->max_rep ? rep : NULL, values,
                           n_values, NULL, err);
}

/* The levels (unchecked) and values of one batch into column c. */
int pq_write_levels(floe_pq_writer_t *w, pq_col_t *c, size_t n_levels, const uint8_t *def,
                    const uint8_t *rep, const void *values, size_t n_values, const dict_src_t *ds,
                    floe_err_t *err)
{
    const char *name = c->spec->name;
    /* check levels and count values and rows: one branch-free pass each */
    size_t nv = 0, rows = 0;
    if (c->max_def) {
        uint8_t top = 0, md = (uint8_t)c->max_def;
        for (size_t i = 0; i < n_levels; i++) {
            top = def[i] > top ? def[i] : top;
            nv += def[i] == md;
        }
        if (top > md)
            return floe_err_set(err, FLOE_EINVAL, "column %s: definition level %d > %d", name, top,
                                c->max_def);
    } else {
        nv = n_levels;
    }
    if (c->max_rep) {
        /* batches hold whole rows, so pages can start at row boundaries */
        if (n_levels && rep[0] != 0)
            return floe_err_set(err, FLOE_EINVAL,
                                "column %s: a batch must start a row (repetition level 0)", name);
        uint8_t top = 0;
        for (size_t i = 0; i < n_levels; i++) {
            top = rep[i] > top ? rep[i] : top;
            rows += rep[i] == 0;
        }
        if (top > c->max_rep)
            return floe_err_set(err, FLOE_EINVAL, "column %s: repetition level %d > %d", name, top,
                                c->max_rep);
    } else {
        rows = n_levels;
    }
    if (nv != n_values)
        return floe_err_set(err, FLOE_EINVAL, "column %s: %zu values for %zu defined levels", name,
                            n_values, nv);
    if (n_values && !values && !ds)
        return floe_err_set(err, FLOE_EINVAL, "column %s: values missing", name);
    if (ds) {
        /* entries of a decoded chunk: checked by the reader */
    } else if (c->phys == FLOE_PQ_FIXED) {
        const floe_slice_t *sl = values;
        for (size_t i = 0; i < n_values; i++)
            if (sl[i].len != c->width)
                return floe_err_set(err, FLOE_EINVAL,
                                    "column %s: fixed value of %zu bytes, expected %zu", name,
                                    sl[i].len, c->width);
    } else if (c->phys == FLOE_PQ_BYTE_ARRAY) {
        const floe_slice_t *sl = values;
        for (size_t i = 0; i < n_values; i++)
            if (sl[i].len > (64u << 20))
                return floe_err_set(err, FLOE_ERANGE,
                                    "column %s: value of %zu bytes (limit 64 MiB)", name,
                                    sl[i].len);
    }
    /* feed in slices, cutting pages at record boundaries */
    bool no_nulls = nv == n_levels, flat = rows == n_levels;
    size_t i = 0, vi = 0;
    while (i < n_levels) {
        size_t e = n_levels - i > 4096 ? i + 4096 : n_levels;
        if (c->max_rep)
            while (e < n_levels && rep[e] != 0) e++;
        if (c->phys == FLOE_PQ_BYTE_ARRAY && no_nulls && flat && !ds) {
            /* large values: end the slice where the page would pass its
             * size (or, while the dictionary is on trial, an eighth of its
             * limit), so page buffers and a doomed dictionary stay small */
            const floe_slice_t *sl = (const floe_slice_t *)values + vi;
            size_t est = page_estimate(c), room = est < w->o.page_size ? w->o.page_size - est : 0;
            if (c->mode == M_DICT && !c->decided && room > w->o.dict_limit / 8)
                room = w->o.dict_limit / 8;
            size_t j = 0, b = 0;
            while (j < e - i && (j == 0 || b + sl[j].len <= room)) b += sl[j++].len;
            e = i + j;
        }
        size_t k = e - i;
        if (grow_levels(c, k) < 0) return floe_err_oom(err);
        size_t kv = k, kr = k;
        if (c->max_def) {
            memcpy(c->def + c->nlev, def + i, k * sizeof *def);
            if (!no_nulls) {
                kv = 0;
                for (size_t j = i; j < e; j++) kv += def[j] == c->max_def;
                c->null_count += (int64_t)(k - kv);
            }
        }
        if (c->max_rep) {
            memcpy(c->rep + c->nlev, rep + i, k * sizeof *rep);
            if (!flat) {
                kr = 0;
                for (size_t j = i; j < e; j++) kr += rep[j] == 0;
            }
        }
        if (kv &&
            (ds ? pq_put_dict_src(c, ds, vi, kv, err) : put_values(c, values, vi, kv, err)) < 0) {
            w->failed = true;
            return -1;
        }
        c->nlev += k;
        c->page_vals += kv;
        c->page_rows += kr;
        vi += kv;
        i = e;
        if (c->mode == M_DICT && !c->decided && !c->dict_used &&
            (c->nidx >= 16384 || (c->nidx >= 64 && c->dict_bytes * 8 > w->o.dict_limit)) &&
            c->dict_n * 10 > c->nidx * 9 && !dict_pays(w, c)) {
            /* clearly high cardinality: stop hashing early */
            if (pq_dict_abandon(w, c, true, err) < 0) {
                w->failed = true;
                return -1;
            }
            c->decided = true;
        }
        if (c->mode == M_DICT && c->dict_bytes > w->o.dict_limit) {
            if (pq_dict_abandon(w, c, !c->dict_used, err) < 0) {
                w->failed = true;
                return -1;
            }
            c->decided = true;
        }
        if (page_estimate(c) >= w->o.page_size && pq_page_flush(w, c, err) < 0) {
            w->failed = true;
            return -1;
        }
    }
    c->rows_pending += rows;
    return 0;
}

static int rg_flush(floe_pq_writer_t *w, floe_err_t *err)
{
    if (w->rg_rows == 0) return 0;
    if (floe_grow(&w->rgs, &w->cap_rg, (size_t)w->nrg + 1, sizeof *w->rgs) != 0)
        return floe_err_oom(err);
    pq_row_group_meta_t *rg = &w->rgs[w->nrg];
    memset(rg, 0, sizeof *rg);
    rg->cols = calloc((size_t)w->ncols, sizeof *rg->cols);
    if (!rg->cols) return floe_err_oom(err);
    w->nrg++;
    rg->num_rows = (int64_t)w->rg_rows;
    rg->file_offset = (int64_t)w->offset;
    for (int i = 0; i < w->ncols; i++) {
        pq_col_t *c = &w->cols[i];
        pq_chunk_meta_t *m = &rg->cols[i];
        if (pq_page_flush(w, c, err) < 0) goto fail;
        int64_t start = (int64_t)w->offset;
        int64_t unc = c->chunk_uncompressed, comp = 0;
        m->dict_page_offset = -1;
        if (c->dict_used) {
            /* dictionary page first; bounds of all entries feed the stats */
            floe_buf_t *b = &w->sc->page;
            b->len = 0;
            for (size_t e = 0; e < c->dict_n; e++) {
                const uint8_t *p;
                size_t n;
                pq_dict_entry(c, e, &p, &n);
                if (!c->width && floe_buf_append_le32(b, (uint32_t)n) < 0) goto oom;
                if (floe_buf_append(b, p, n) < 0) goto oom;
                if (pq_stats_ordered(c)) pq_stats_add(c, p, n);
            }
            pq_page_header_t h;
            memset(&h, 0, sizeof h);
            h.type = PQ_PAGE_DICT;
            h.num_values = (int32_t)c->dict_n;
            h.encoding = PQ_ENC_PLAIN;
            size_t before = c->chunk.len;
            /* put_page appends to the chunk; move it to the front by emitting
             * the header and body directly */
            if (put_page(w, c, &h, NULL, 0, b->data, b->len, err) < 0) goto fail;
            size_t dict_len = c->chunk.len - before;
            m->dict_page_offset = start;
            if (emit(w, c->chunk.data + before, dict_len, err) < 0) goto fail;
            comp += (int64_t)dict_len;
            c->chunk.len = before;
            unc = c->chunk_uncompressed;
            c->encodings |= 1u << PQ_ENC_PLAIN;
        }
        m->data_page_offset = (int64_t)w->offset;
        if (emit(w, c->chunk.data, c->chunk.len, err) < 0) goto fail;
        comp += (int64_t)c->chunk.len;
        m->phys = c->phys;
        m->codec = w->pq_codec;
        m->encodings = c->encodings | (c->max_def || c->max_rep ? 1u << PQ_ENC_RLE : 0);
        m->num_values = c->num_values;
        m->total_uncompressed = unc;
        m->total_compressed = comp;
        m->has_stats = true;
        m->stats.null_count = c->null_count;
        pq_fbounds_add(c);
        if (c->has_minmax && c->min.len <= 256 && c->max.len <= 256) {
            m->stats.has_minmax = true;
            if (c->phys == FLOE_PQ_FLOAT || c->phys == FLOE_PQ_DOUBLE) {
                /* zero bounds are written as -0.0 (min) and +0.0 (max) */
                if (c->phys == FLOE_PQ_FLOAT) {
                    float f;
                    memcpy(&f, c->min.data, 4);
                    if (f == 0) {
                        f = -0.0f;
                        memcpy(c->min.data, &f, 4);
                    }
                    memcpy(&f, c->max.data, 4);
                    if (f == 0) {
                        f = 0.0f;
                        memcpy(c->max.data, &f, 4);
                    }
                } else {
                    double d;
                    memcpy(&d, c->min.data, 8);
                    if (d == 0) {
                        d = -0.0;
                        memcpy(c->min.data, &d, 8);
                    }
                    memcpy(&d, c->max.data, 8);
                    if (d == 0) {
                        d = 0.0;
                        memcpy(c->max.data, &d, 8);
                    }
                }
            }
            if (floe_buf_append(&m->stats.min, c->min.data, c->min.len) < 0 ||
                floe_buf_append(&m->stats.max, c->max.data, c->max.len) < 0)
                goto oom;
        }
        rg->total_byte_size += unc;
        rg->total_compressed += comp;
        c->rows_pending = 0;
        col_reset_chunk(w, c);
    }
    w->rg_rows = 0;
    return 0;
oom:
    floe_err_oom(err);
fail:
    w->failed = true;
    return -1;
}

int floe_pq_writer_rows(floe_pq_writer_t *w, size_t n_rows, floe_err_t *err)
{
    if (w->closed || w->failed)
        return floe_err_set(err, FLOE_ECLOSED, "parquet writer is closed or failed");
    for (int i = 0; i < w->ncols; i++) {
        if (w->cols[i].rows_pending != n_rows)
            return floe_err_set(err, FLOE_EINVAL, "column %s holds %zu pending rows, not %zu",
                                w->cols[i].spec->name, w->cols[i].rows_pending, n_rows);
    }
    for (int i = 0; i < w->ncols; i++) w->cols[i].rows_pending = 0;
    w->rows += n_rows;
    w->rg_rows += n_rows;
    uint64_t buffered = floe_pq_writer_bytes(w) - w->offset;
    if (buffered >= w->o.row_group_size) return rg_flush(w, err);
    return 0;
}

int floe_pq_writer_flush(floe_pq_writer_t *w, floe_err_t *err)
{
    if (w->closed || w->failed)
        return floe_err_set(err, FLOE_ECLOSED, "parquet writer is closed or failed");
    for (int i = 0; i < w->ncols; i++)
        if (w->cols[i].rows_pending)
            return floe_err_set(err, FLOE_EINVAL,
                                "column %s has rows not yet committed with floe_pq_writer_rows",
                                w->cols[i].spec->name);
    return rg_flush(w, err);
}

uint64_t floe_pq_writer_bytes(const floe_pq_writer_t *w)
{
    uint64_t b = w->offset;
    for (int i = 0; i < w->ncols; i++) {
        const pq_col_t *c = &w->cols[i];
        b += c->chunk.len + page_estimate(c) +
             (c->mode == M_DICT || c->dict_used ? c->dict_bytes : 0);
    }
    return b;
}

uint64_t floe_pq_writer_num_rows(const floe_pq_writer_t *w)
{
    return w->rows;
}

int floe_pq_writer_close(floe_pq_writer_t *w, floe_err_t *err)
{
    if (w->closed) return 0;
    if (floe_pq_writer_flush(w, err) < 0) return -1;
    floe_buf_t *b = &w->sc->page;
    b->len = 0;
    if (pq_footer_encode(b, w->s, (int64_t)w->rows, w->rgs, w->nrg, w->kv, w->nkv, w->created_by,
                         err) < 0) {
        w->failed = true;
        return -1;
    }
    uint32_t flen = (uint32_t)b->len;
    if (floe_buf_append_le32(b, flen) < 0 || floe_buf_append(b, "PAR1", 4) < 0) {
        w->failed = true;
        return floe_err_oom(err);
    }
    if (emit(w, b->data, b->len, err) < 0) return -1;
    w->closed = true;
    return 0;
}
