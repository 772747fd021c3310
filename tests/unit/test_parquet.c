#include <math.h>
#include <stdlib.h>

#include "format/parquet.h"
#include "format/parquet_int.h"
#include "pq_gen.h"
#include "test.h"

/* RLE/bit-packed hybrid round-trips runs, noise and every bit width. */
static void rle_round_trip(void)
{
    pqg_t g;
    pqg_init(&g, 1);
    for (int bw = 0; bw <= 32; bw++) {
        size_t n = 1 + pqg_rand(&g) % 5000;
        uint32_t *v = malloc(n * 4), *back = malloc(n * 4);
        uint64_t mask = bw == 32 ? 0xffffffffull : (1ull << bw) - 1;
        for (size_t i = 0; i < n; i++) {
            uint64_t r = pqg_rand(&g);
            v[i] = (r & 3) == 0 && i ? v[i - 1] : (uint32_t)(r >> 20 & mask);
            if (i > 100 && i < 300) v[i] = (uint32_t)(7 & mask);
        }
        floe_buf_t b = FLOE_BUF_INIT;
        CHECK_EQ(pq_rle_encode_u32(&b, v, n, bw), 0);
        pq_rle_dec_t d;
        pq_rle_dec_init(&d, b.data, b.len, bw);
        CHECK_EQ(pq_rle_dec_u32(&d, back, n), 0);
        CHECK(memcmp(v, back, n * 4) == 0);
        /* truncated input fails instead of reading past it */
        pq_rle_dec_init(&d, b.data, b.len / 2, bw);
        if (bw > 0 && n > 400) CHECK(pq_rle_dec_u32(&d, back, n) < 0);
        /* levels (bit widths up to 8) take the byte-wide encoder: the same bytes */
        if (bw <= 8) {
            uint8_t *v8 = malloc(n);
            for (size_t i = 0; i < n; i++) v8[i] = (uint8_t)v[i];
            floe_buf_t b8 = FLOE_BUF_INIT;
            CHECK_EQ(pq_rle_encode_u8(&b8, v8, n, bw), 0);
            CHECK(b8.len == b.len && memcmp(b8.data, b.data, b.len) == 0);
            floe_buf_free(&b8);
            free(v8);
        }
        floe_buf_free(&b);
        free(v);
        free(back);
    }
    pqg_free(&g);
}

/* DELTA_BINARY_PACKED round-trips sequences, extremes and wrap-around. */
static void delta_round_trip(void)
{
    pqg_t g;
    pqg_init(&g, 2);
    for (int t = 0; t < 40; t++) {
        size_t n = pqg_rand(&g) % 1000;
        bool is32 = t & 1;
        int64_t *v = malloc((n + 1) * 8), *back = malloc((n + 1) * 8);
        for (size_t i = 0; i < n; i++) {
            uint64_t r = pqg_rand(&g);
            int64_t x = t % 4 < 2 ? (int64_t)i * 1000 + (int64_t)(r % 7) : (int64_t)r;
            if (t % 8 == 7) x = (i & 1) ? INT64_MAX : INT64_MIN;
            v[i] = is32 ? (int32_t)x : x;
        }
        floe_buf_t b = FLOE_BUF_INIT;
        CHECK_EQ(pq_delta_encode(&b, v, n, is32), 0);
        size_t used = 0, cnt = 0;
        floe_err_t err;
        CHECK_EQ(pq_delta_count(b.data, b.len, &cnt, &err), 0);
        CHECK_EQ(cnt, n);
        CHECK_EQ(pq_delta_decode(b.data, b.len, back, n, is32, &used, &err), 0);
        CHECK_EQ(used, b.len);
        CHECK(n == 0 || memcmp(v, back, n * 8) == 0);
        if (n > 200) CHECK(pq_delta_decode(b.data, b.len / 2, back, n, is32, &used, &err) < 0);
        floe_buf_free(&b);
        free(v);
        free(back);
    }
    pqg_free(&g);
}

/* Write rows with opts, read them back, and compare the JSON of every row. */
static void round_trip(pqg_t *g, const floe_pq_write_opts_t *o, size_t nrows, size_t batch)
{
    floe_err_t err;
    floe_buf_t file = FLOE_BUF_INIT, want = FLOE_BUF_INIT, got = FLOE_BUF_INIT;
    floe_pq_writer_t *w = floe_pq_writer_new(g->s, o, floe_pq_sink_buf, &file, &err);
    CHECK(w != NULL);
    if (!w) return;
    CHECK_EQ(floe_pq_writer_set_kv(w, "iceberg.schema", "{\"type\":\"struct\"}", &err), 0);
    pqg_val_t **rows = malloc(sizeof *rows * (batch ? batch : 1));
    for (size_t done = 0; done < nrows;) {
        size_t k = nrows - done < batch ? nrows - done : batch;
        for (size_t i = 0; i < k; i++) {
            rows[i] = pqg_row(g);
            pqg_json(g->s, rows[i], &want);
            floe_buf_append_u8(&want, '\n');
        }
        int rc = pqg_write(g, w, rows, k, &err);
        CHECK_EQ(rc, 0);
        if (rc) {
            fprintf(stderr, "write: %s\n", err.msg);
            break;
        }
        done += k;
    }
    free(rows);
    CHECK_EQ(floe_pq_writer_close(w, &err), 0);
    CHECK_EQ(floe_pq_writer_bytes(w), file.len);
    floe_pq_writer_free(w);
    floe_pq_reader_t *r = floe_pq_reader_open(file.data, file.len, &err);
    CHECK(r != NULL);
    if (!r) {
        fprintf(stderr, "open: %s\n", err.msg);
        goto out;
    }
    CHECK_EQ(floe_pq_reader_num_rows(r), nrows);
    CHECK_STR(floe_pq_reader_kv(r, "iceberg.schema"), "{\"type\":\"struct\"}");
    for (int rg = 0; rg < floe_pq_reader_num_row_groups(r); rg++) {
        int rc = pqg_read_json(r, rg, &got, &err);
        CHECK_EQ(rc, 0);
        if (rc) {
            fprintf(stderr, "read: %s\n", err.msg);
            break;
        }
    }
    CHECK_EQ(got.len, want.len);
    if (got.len != want.len || memcmp(got.data, want.data, got.len) != 0) {
        CHECK(!"rows differ");
        size_t i = 0;
        while (i < got.len && i < want.len && got.data[i] == want.data[i]) i++;
        size_t s = i > 200 ? i - 200 : 0;
        fprintf(stderr, "first difference at byte %zu\nwant: %.400s\ngot:  %.400s\n", i,
                want.data + s, got.data + s);
    }
    /* the schema survives: same node count and field ids */
    const floe_pq_schema_t *rs = floe_pq_reader_schema(r);
    CHECK_EQ(floe_pq_schema_num_nodes(rs), floe_pq_schema_num_nodes(g->s));
    for (int i = 0; i < floe_pq_schema_num_nodes(rs) && i < floe_pq_schema_num_nodes(g->s); i++) {
        CHECK_EQ(floe_pq_schema_node(rs, i)->field_id, floe_pq_schema_node(g->s, i)->field_id);
        CHECK_EQ(floe_pq_schema_node(rs, i)->logical, floe_pq_schema_node(g->s, i)->logical);
    }
    floe_pq_reader_free(r);
out:
    floe_buf_free(&file);
    floe_buf_free(&want);
    floe_buf_free(&got);
}

/* Every type and nesting, through every codec and encoding choice, with
 * small pages and row groups so that paging and fallback happen. */
static void all_types_every_codec(void)
{
    floe_codec_t codecs[] = {FLOE_CODEC_NONE, FLOE_CODEC_SNAPPY, FLOE_CODEC_GZIP, FLOE_CODEC_ZSTD,
                             FLOE_CODEC_LZ4_RAW};
    for (int ci = 0; ci < 5; ci++) {
        for (int variant = 0; variant < 4; variant++) {
            pqg_t g;
            pqg_init(&g, (uint64_t)(ci * 10 + variant));
            pqg_all_types_schema(&g);
            floe_pq_write_opts_t o = floe_pq_write_opts_default();
            o.codec = codecs[ci];
            o.page_size = variant & 1 ? 700 : 64 << 10;
            o.row_group_size = variant & 2 ? 20000 : 1 << 20;
            o.dict_limit = variant == 1 ? 300 : 1 << 20;
            o.dictionary = variant != 2;
            o.delta = variant != 3;
            o.page_v2 = variant == 3;
            round_trip(&g, &o, 700, 97);
            pqg_free(&g);
        }
    }
}

/* Random schemas (nested, optional, every type) and random rows. */
static void random_schemas(void)
{
    /* FLOE_PQ_SEEDS=N runs more cases when hunting bugs */
    int seeds = getenv("FLOE_PQ_SEEDS") ? atoi(getenv("FLOE_PQ_SEEDS")) : 60;
    for (int t = 0; t < seeds; t++) {
        pqg_t g;
        pqg_init(&g, 1000 + (uint64_t)t);
        pqg_random_schema(&g, 5, 3);
        g.null_rate = (double)(t % 6) * 0.2; /* up to all nulls */
        floe_pq_write_opts_t o = floe_pq_write_opts_default();
        o.codec = (floe_codec_t[]){FLOE_CODEC_ZSTD, FLOE_CODEC_SNAPPY, FLOE_CODEC_NONE}[t % 3];
        o.page_size = 1 + pqg_rand(&g) % 4000;
        o.row_group_size = 1000 + pqg_rand(&g) % 100000;
        o.dict_limit = 1 + pqg_rand(&g) % 2000;
        o.page_v2 = t % 5 == 0;
        g.narrow = t & 1; /* half the cases feed byte levels */
        round_trip(&g, &o, 1 + pqg_rand(&g) % 400, 1 + pqg_rand(&g) % 150);
        pqg_free(&g);
    }
}

/* Statistics bounds in the footer follow each type's sort order. */
static void statistics_order(void)
{
    floe_pq_schema_t *s = floe_pq_schema_new();
    floe_err_t err;
    floe_pq_node_t a = floe_pq_leaf("a", FLOE_PQ_OPTIONAL, FLOE_PQ_INT32, 1);
    floe_pq_node_t b = floe_pq_leaf("b", FLOE_PQ_REQUIRED, FLOE_PQ_DOUBLE, 2);
    floe_pq_node_t c = floe_pq_leaf("c", FLOE_PQ_REQUIRED, FLOE_PQ_BYTE_ARRAY, 3);
    c.logical = FLOE_PQ_LT_STRING;
    floe_pq_schema_add(s, &a, &err);
    floe_pq_schema_add(s, &b, &err);
    floe_pq_schema_add(s, &c, &err);
    floe_buf_t file = FLOE_BUF_INIT;
    floe_pq_write_opts_t o = floe_pq_write_opts_default();
    floe_pq_writer_t *w = floe_pq_writer_new(s, &o, floe_pq_sink_buf, &file, &err);
    int16_t def[4] = {1, 0, 1, 1};
    int32_t av[3] = {-5, 7, -100};
    double bv[4] = {NAN, 2.5, -0.0, -3};
    floe_slice_t cv[4] = {floe_slice_str("b"), floe_slice_str("\xc3\xa9"), floe_slice_str("a"),
                          floe_slice_str("ab")};
    CHECK_EQ(floe_pq_write_column(w, 0, 4, def, NULL, av, 3, &err), 0);
    CHECK_EQ(floe_pq_write_column(w, 1, 4, NULL, NULL, bv, 4, &err), 0);
    CHECK_EQ(floe_pq_write_column(w, 2, 4, NULL, NULL, cv, 4, &err), 0);
    /* mismatched counts are refused */
    CHECK(floe_pq_writer_rows(w, 3, &err) < 0);
    CHECK_EQ(floe_pq_writer_rows(w, 4, &err), 0);
    CHECK(floe_pq_write_column(w, 0, 1, def, NULL, av, 2, &err) < 0);
    CHECK_EQ(floe_pq_writer_close(w, &err), 0);
    floe_pq_writer_free(w);
    /* decode the footer and look at the chunk statistics */
    pq_file_meta_t m;
    uint32_t flen = floe_rd_le32(file.data + file.len - 8);
    CHECK_EQ(pq_footer_decode(file.data + file.len - 8 - flen, flen, &m, &err), 0);
    CHECK_EQ(m.num_rows, 4);
    pq_file_meta_free(&m);
    floe_pq_reader_t *r = floe_pq_reader_open(file.data, file.len, &err);
    CHECK(r != NULL);
    floe_pq_column_t col;
    CHECK_EQ(floe_pq_read_column(r, 0, 2, &col, &err), 0);
    CHECK_EQ(col.n_values, 4);
    CHECK(col.n_values == 4 &&
          floe_slice_eq(((floe_slice_t *)col.values)[1], floe_slice_str("\xc3\xa9")));
    floe_pq_column_free(&col);
    floe_pq_reader_free(r);
    floe_buf_free(&file);
    floe_pq_schema_free(s);
}

/* floe_pq_writer_bounds: the bounds over all row groups, whichever
 * encoding each chunk took (dictionary, DELTA, PLAIN), NaN left out, long
 * strings kept whole; byte levels rejected past the column's maximum. */
static void bounds_over_row_groups(void)
{
    floe_pq_schema_t *s = floe_pq_schema_new();
    floe_err_t err;
    floe_pq_node_t a = floe_pq_leaf("a", FLOE_PQ_OPTIONAL, FLOE_PQ_INT64, 1);
    floe_pq_node_t b = floe_pq_leaf("b", FLOE_PQ_REQUIRED, FLOE_PQ_DOUBLE, 2);
    floe_pq_node_t c = floe_pq_leaf("c", FLOE_PQ_REQUIRED, FLOE_PQ_BYTE_ARRAY, 3);
    floe_pq_node_t d = floe_pq_leaf("d", FLOE_PQ_REQUIRED, FLOE_PQ_DOUBLE, 4);
    floe_pq_schema_add(s, &a, &err);
    floe_pq_schema_add(s, &b, &err);
    floe_pq_schema_add(s, &c, &err);
    floe_pq_schema_add(s, &d, &err);
    floe_buf_t file = FLOE_BUF_INIT;
    floe_pq_write_opts_t o = floe_pq_write_opts_default();
    floe_pq_writer_t *w = floe_pq_writer_new(s, &o, floe_pq_sink_buf, &file, &err);
    floe_slice_t lo, hi;
    CHECK(!floe_pq_writer_bounds(w, 0, &lo, &hi)); /* nothing flushed yet */
    enum { N = 20000 };
    int64_t *av = malloc(N * 8);
    double *bv = malloc(N * 8), *dv = malloc(N * 8);
    floe_slice_t *cv = malloc(N * sizeof *cv);
    uint8_t *def = malloc(N);
    char(*txt)[400] = malloc(N * sizeof *txt);
    int64_t amin = INT64_MAX, amax = INT64_MIN;
    for (int g = 0; g < 3; g++) {
        size_t na = 0;
        for (int i = 0; i < N; i++) {
            def[i] = (uint8_t)(i % 7 != 0);
            /* group 0: few distinct values (dictionary); later: all distinct (DELTA) */
            int64_t x = g == 0 ? (i % 5) * 3 - 4 : (int64_t)(i * 7919 % 100003) - 50000 + g * 10;
            if (def[i]) {
                av[na++] = x;
                amin = x < amin ? x : amin;
                amax = x > amax ? x : amax;
            }
            bv[i] = i == 5 ? NAN : g == 1 && i == 77 ? 1e300 : (double)(i % 100) / 4 - g;
            dv[i] = NAN;
            /* long distinct strings: no dictionary, no Parquet footer bounds */
            snprintf(txt[i], sizeof txt[i], "%c%0300d", g == 2 && i == 9 ? '~' : 'k', i + g * N);
            cv[i] = floe_slice_str(txt[i]);
        }
        if (g == 1) cv[3] = floe_slice_str("!"); /* the lowest */
        CHECK_EQ(floe_pq_write_column8(w, 0, N, def, NULL, av, na, &err), 0);
        CHECK_EQ(floe_pq_write_column8(w, 1, N, NULL, NULL, bv, N, &err), 0);
        CHECK_EQ(floe_pq_write_column8(w, 2, N, NULL, NULL, cv, N, &err), 0);
        CHECK_EQ(floe_pq_write_column8(w, 3, N, NULL, NULL, dv, N, &err), 0);
        CHECK_EQ(floe_pq_writer_rows(w, N, &err), 0);
        CHECK_EQ(floe_pq_writer_flush(w, &err), 0);
    }
    def[0] = 2; /* past the column's max definition level */
    CHECK(floe_pq_write_column8(w, 0, 1, def, NULL, av, 1, &err) < 0);
    CHECK(floe_pq_writer_bounds(w, 0, &lo, &hi));
    CHECK(lo.len == 8 && hi.len == 8 && (int64_t)floe_rd_le64(lo.ptr) == amin &&
          (int64_t)floe_rd_le64(hi.ptr) == amax);
    CHECK(floe_pq_writer_bounds(w, 1, &lo, &hi));
    double x, y;
    memcpy(&x, lo.ptr, 8);
    memcpy(&y, hi.ptr, 8);
    CHECK(x == -2 && y == 1e300);
    CHECK(floe_pq_writer_bounds(w, 2, &lo, &hi));
    CHECK(floe_slice_eq(lo, floe_slice_str("!")));
    CHECK(hi.len == 301 && hi.ptr[0] == '~');
    CHECK(!floe_pq_writer_bounds(w, 3, &lo, &hi)); /* only NaN */
    floe_pq_writer_free(w);
    floe_buf_free(&file);
    floe_pq_schema_free(s);
    free(av);
    free(bv);
    free(dv);
    free(cv);
    free(def);
    free(txt);
}

/* A column whose dictionary one row group gave up starts the file's later
 * row groups in the fallback encoding (no hashing and re-encoding to learn
 * it again); a column whose dictionary pays keeps it; every value reads
 * back. */
static void dictionary_given_up_stays_off(void)
{
    floe_pq_schema_t *s = floe_pq_schema_new();
    floe_err_t err;
    floe_pq_node_t a = floe_pq_leaf("c", FLOE_PQ_REQUIRED, FLOE_PQ_BYTE_ARRAY, 1);
    floe_pq_node_t b = floe_pq_leaf("e", FLOE_PQ_REQUIRED, FLOE_PQ_BYTE_ARRAY, 2);
    floe_pq_schema_add(s, &a, &err);
    floe_pq_schema_add(s, &b, &err);
    floe_buf_t file = FLOE_BUF_INIT;
    floe_pq_write_opts_t o = floe_pq_write_opts_default();
    floe_pq_writer_t *w = floe_pq_writer_new(s, &o, floe_pq_sink_buf, &file, &err);
    enum { N = 20000 };
    char(*txt)[120] = malloc(N * sizeof *txt);
    static const char *kinds[] = {"view", "click", "buy"};
    floe_slice_t *cv = malloc(N * sizeof *cv), *ev = malloc(N * sizeof *ev);
    for (int g = 0; g < 3; g++) {
        for (int i = 0; i < N; i++) {
            /* group 0: all distinct (2 MB of dictionary: given up); then 3 values */
            if (g == 0) snprintf(txt[i], sizeof txt[i], "%0100d", i);
            else
                snprintf(txt[i], sizeof txt[i], "%s", kinds[i % 3]);
            cv[i] = floe_slice_str(txt[i]);
            ev[i] = floe_slice_str(kinds[(i / 7) % 3]);
        }
        CHECK_EQ(floe_pq_write_column8(w, 0, N, NULL, NULL, cv, N, &err), 0);
        CHECK_EQ(floe_pq_write_column8(w, 1, N, NULL, NULL, ev, N, &err), 0);
        CHECK_EQ(floe_pq_writer_rows(w, N, &err), 0);
        CHECK_EQ(floe_pq_writer_flush(w, &err), 0);
    }
    CHECK_EQ(floe_pq_writer_close(w, &err), 0);
    floe_pq_writer_free(w);
    /* the footer: which row groups have dictionaries */
    CHECK(file.len > 12);
    uint32_t flen = floe_rd_le32(file.data + file.len - 8);
    pq_file_meta_t m;
    memset(&m, 0, sizeof m);
    CHECK_EQ(pq_footer_decode(file.data + file.len - 8 - flen, flen, &m, &err), 0);
    CHECK_EQ(m.nrg, 3);
    for (int g = 0; g < m.nrg; g++) {
        const pq_chunk_meta_t *c = &m.rgs[g].cols[0], *e = &m.rgs[g].cols[1];
        CHECK(c->dict_page_offset < 0);
        CHECK(!(c->encodings & (1u << PQ_ENC_RLE_DICT)));
        CHECK(c->encodings & (1u << PQ_ENC_DELTA_LBA | 1u << PQ_ENC_DELTA_BA));
        CHECK(e->dict_page_offset >= 0);
        CHECK(e->encodings & (1u << PQ_ENC_RLE_DICT));
    }
    pq_file_meta_free(&m);
    floe_pq_reader_t *r = floe_pq_reader_open(file.data, file.len, &err);
    CHECK(r != NULL);
    for (int g = 0; r && g < 3; g++) {
        floe_pq_column_t col;
        CHECK_EQ(floe_pq_read_column(r, g, 0, &col, &err), 0);
        CHECK_EQ(col.n_values, N);
        const floe_slice_t *got = col.values;
        for (int i = 0; i < N; i += 997) {
            char want[120];
            if (g == 0) snprintf(want, sizeof want, "%0100d", i);
            else
                snprintf(want, sizeof want, "%s", kinds[i % 3]);
            CHECK(floe_slice_eq(got[i], floe_slice_str(want)));
        }
        floe_pq_column_free(&col);
    }
    floe_pq_reader_free(r);
    floe_buf_free(&file);
    floe_pq_schema_free(s);
    free(txt);
    free(cv);
    free(ev);
}

/* Writers sharing one floe_pq_scratch_t (buffers and codec context),
 * their pages interleaved, write the very bytes a writer of its own does;
 * a writer of another level keeps its own context. */
static void shared_scratch_same_bytes(void)
{
    for (int t = 0; t < 6; t++) {
        pqg_t g;
        pqg_init(&g, 500 + (uint64_t)t);
        pqg_random_schema(&g, 5, 3);
        floe_pq_write_opts_t o = floe_pq_write_opts_default();
        o.page_size = 200 + pqg_rand(&g) % 3000;
        o.row_group_size = 5000;
        floe_pq_scratch_t *sc = floe_pq_scratch_new();
        CHECK(sc != NULL);
        floe_err_t err;
        floe_buf_t solo = FLOE_BUF_INIT, a = FLOE_BUF_INIT, b = FLOE_BUF_INIT, c = FLOE_BUF_INIT;
        floe_pq_writer_t *ws = floe_pq_writer_new(g.s, &o, floe_pq_sink_buf, &solo, &err);
        floe_pq_write_opts_t so = o;
        so.scratch = sc;
        floe_pq_writer_t *wa = floe_pq_writer_new(g.s, &so, floe_pq_sink_buf, &a, &err);
        floe_pq_writer_t *wb = floe_pq_writer_new(g.s, &so, floe_pq_sink_buf, &b, &err);
        so.level = 5; /* another level: its own context, still the shared buffers */
        floe_pq_writer_t *wc = floe_pq_writer_new(g.s, &so, floe_pq_sink_buf, &c, &err);
        CHECK(ws && wa && wb && wc);
        for (int batch = 0; batch < 8; batch++) {
            pqg_val_t *rows[40];
            for (int i = 0; i < 40; i++) rows[i] = pqg_row(&g);
            CHECK_EQ(pqg_write(&g, ws, rows, 40, &err), 0);
            CHECK_EQ(pqg_write(&g, wa, rows, 40, &err), 0);
            CHECK_EQ(pqg_write(&g, wc, rows, 40, &err), 0);
            CHECK_EQ(pqg_write(&g, wb, rows, 40, &err), 0);
        }
        CHECK_EQ(floe_pq_writer_close(wa, &err), 0);
        CHECK_EQ(floe_pq_writer_close(ws, &err), 0);
        CHECK_EQ(floe_pq_writer_close(wc, &err), 0);
        CHECK_EQ(floe_pq_writer_close(wb, &err), 0);
        CHECK(a.len == solo.len && memcmp(a.data, solo.data, a.len) == 0);
        CHECK(b.len == solo.len && memcmp(b.data, solo.data, b.len) == 0);
        floe_pq_reader_t *r = floe_pq_reader_open(c.data, c.len, &err);
        CHECK(r != NULL && floe_pq_reader_num_rows(r) == 320);
        floe_pq_reader_free(r);
        floe_pq_writer_free(ws);
        floe_pq_writer_free(wa);
        floe_pq_writer_free(wb);
        floe_pq_writer_free(wc);
        floe_pq_scratch_free(sc);
        floe_buf_free(&solo);
        floe_buf_free(&a);
        floe_buf_free(&b);
        floe_buf_free(&c);
        pqg_free(&g);
    }
}

/* Truncated and bit-flipped files fail cleanly (ASan checks the rest). */
static void corrupt_files(void)
{
    pqg_t g;
    pqg_init(&g, 77);
    pqg_all_types_schema(&g);
    floe_err_t err;
    floe_buf_t file = FLOE_BUF_INIT;
    floe_pq_write_opts_t o = floe_pq_write_opts_default();
    o.page_size = 2000;
    floe_pq_writer_t *w = floe_pq_writer_new(g.s, &o, floe_pq_sink_buf, &file, &err);
    pqg_val_t *rows[50];
    for (int i = 0; i < 50; i++) rows[i] = pqg_row(&g);
    CHECK_EQ(pqg_write(&g, w, rows, 50, &err), 0);
    CHECK_EQ(floe_pq_writer_close(w, &err), 0);
    floe_pq_writer_free(w);
    int failures = 0, trials = 0;
    uint8_t *copy = malloc(file.len);
    for (int t = 0; t < 400; t++) {
        memcpy(copy, file.data, file.len);
        size_t len = file.len;
        if (t < 50) len = file.len * (size_t)t / 50;
        else
            for (int k = 0; k < 1 + t % 4; k++)
                copy[pqg_rand(&g) % file.len] ^= (uint8_t)(1u << (pqg_rand(&g) % 8));
        floe_pq_reader_t *r = floe_pq_reader_open(copy, len, &err);
        trials++;
        if (!r) {
            failures++;
            continue;
        }
        floe_buf_t out = FLOE_BUF_INIT;
        for (int rg = 0; rg < floe_pq_reader_num_row_groups(r); rg++)
            if (pqg_read_json(r, rg, &out, &err) < 0) {
                failures++;
                break;
            }
        floe_buf_free(&out);
        floe_pq_reader_free(r);
    }
    CHECK(failures >= 50); /* every truncation at least */
    free(copy);
    floe_buf_free(&file);
    pqg_free(&g);
}

/* Projection: find fields by id and read only the columns under them. */
static void projection_by_field_id(void)
{
    pqg_t g;
    pqg_init(&g, 31);
    pqg_all_types_schema(&g);
    floe_err_t err;
    floe_buf_t file = FLOE_BUF_INIT;
    floe_pq_write_opts_t o = floe_pq_write_opts_default();
    o.row_group_size = 5000;
    floe_pq_writer_t *w = floe_pq_writer_new(g.s, &o, floe_pq_sink_buf, &file, &err);
    pqg_val_t *rows[300];
    for (int i = 0; i < 300; i++) rows[i] = pqg_row(&g);
    for (int i = 0; i < 300; i += 50) CHECK_EQ(pqg_write(&g, w, rows + i, 50, &err), 0);
    CHECK_EQ(floe_pq_writer_close(w, &err), 0);
    floe_pq_writer_free(w);
    floe_pq_reader_t *r = floe_pq_reader_open(file.data, file.len, &err);
    CHECK(r != NULL);
    const floe_pq_schema_t *s = floe_pq_reader_schema(r);
    CHECK(floe_pq_reader_num_row_groups(r) > 1);
    /* "items" (a list of structs holding a list) has two leaf columns */
    int items = -1;
    for (int i = 0; i < floe_pq_schema_num_nodes(g.s); i++)
        if (strcmp(floe_pq_schema_node(g.s, i)->name, "items") == 0)
            items = floe_pq_schema_node(g.s, i)->field_id;
    int node = floe_pq_schema_find_field(s, items);
    CHECK(node >= 0);
    int cols[8];
    int n = floe_pq_schema_columns_under(s, node, cols, 8);
    CHECK_EQ(n, 2);
    CHECK_EQ(floe_pq_schema_max_rep(s, cols[1]), 2);
    int64_t rows_seen = 0;
    for (int rg = 0; rg < floe_pq_reader_num_row_groups(r); rg++) {
        floe_pq_column_t c;
        CHECK_EQ(floe_pq_read_column(r, rg, cols[0], &c, &err), 0);
        for (size_t i = 0; i < c.n_levels; i++) rows_seen += c.rep[i] == 0;
        floe_pq_column_free(&c);
    }
    CHECK_EQ(rows_seen, 300);
    CHECK_EQ(floe_pq_schema_find_field(s, 999999), -1);
    floe_pq_column_t c;
    CHECK(floe_pq_read_column(r, 99, 0, &c, &err) < 0);
    floe_pq_reader_free(r);
    floe_buf_free(&file);
    pqg_free(&g);
}

/* The footer of a file in memory (caller frees with pq_file_meta_free). */
static int footer_of(const floe_buf_t *f, pq_file_meta_t *m)
{
    floe_err_t err;
    memset(m, 0, sizeof *m);
    if (f->len < 12) return -1;
    uint32_t flen = floe_rd_le32(f->data + f->len - 8);
    return pq_footer_decode(f->data + f->len - 8 - flen, flen, m, &err);
}

/* Concatenate files[0..n) (same schema) into out with one writer: chunk by
 * chunk through floe_pq_write_chunk (copy), else decoded and written again;
 * a row group per `per` inputs.  Counts the chunks taken whole in *whole. */
static int concat(const floe_pq_schema_t *s, floe_buf_t *files, int n, int per, bool copy,
                  floe_buf_t *out, int *whole)
{
    floe_err_t err;
    floe_pq_write_opts_t o = floe_pq_write_opts_default();
    o.row_group_size = SIZE_MAX / 4;
    o.page_size = 3000;
    floe_pq_writer_t *w = floe_pq_writer_new(s, &o, floe_pq_sink_buf, out, &err);
    if (!w) return -1;
    int rc = 0;
    for (int f = 0; f < n && !rc; f++) {
        floe_pq_reader_t *r = floe_pq_reader_open(files[f].data, files[f].len, &err);
        if (!r) {
            rc = -1;
            break;
        }
        for (int g = 0; g < floe_pq_reader_num_row_groups(r) && !rc; g++) {
            for (int c = 0; c < floe_pq_schema_num_columns(s) && !rc; c++) {
                floe_pq_chunk_counts_t k;
                int done = copy ? floe_pq_write_chunk(w, c, r, g, c, &k, &err) : 0;
                if (done < 0) rc = -1;
                if (done != 0) {
                    *whole += done > 0;
                    continue;
                }
                floe_pq_column_t col;
                if (floe_pq_read_column(r, g, c, &col, &err) < 0) {
                    rc = -1;
                    break;
                }
                rc = floe_pq_write_column(w, c, col.n_levels, col.def, col.rep, col.values,
                                          col.n_values, &err);
                floe_pq_column_free(&col);
            }
            if (!rc) rc = floe_pq_writer_rows(w, (size_t)floe_pq_reader_row_group_rows(r, g), &err);
        }
        if (!rc && (f + 1) % per == 0) rc = floe_pq_writer_flush(w, &err);
        floe_pq_reader_free(r);
    }
    if (!rc) rc = floe_pq_writer_close(w, &err);
    if (rc) fprintf(stderr, "concat: %s\n", err.msg);
    floe_pq_writer_free(w);
    return rc;
}

/* Files of one schema written with random options, concatenated chunk by
 * chunk (pages copied, dictionaries merged) read back as the rows that
 * went in, with the same statistics, value and null counts per row group
 * as when every chunk is decoded and written again. */
static void copy_chunks(void)
{
    int seeds = getenv("FLOE_PQ_SEEDS") ? atoi(getenv("FLOE_PQ_SEEDS")) : 40;
    int whole = 0, decoded = 0;
    for (int t = 0; t < seeds; t++) {
        pqg_t g;
        pqg_init(&g, 5000 + (uint64_t)t);
        if (t % 4 == 0) pqg_all_types_schema(&g);
        else
            pqg_random_schema(&g, 5, 3);
        g.null_rate = (double)(t % 5) * 0.2;
        floe_err_t err;
        floe_buf_t files[4], want = FLOE_BUF_INIT, got = FLOE_BUF_INIT;
        floe_buf_t a = FLOE_BUF_INIT, b = FLOE_BUF_INIT;
        int nf = 2 + t % 3;
        for (int f = 0; f < nf; f++) {
            memset(&files[f], 0, sizeof files[f]);
            floe_pq_write_opts_t o = floe_pq_write_opts_default();
            /* mostly the writer's codec (copied), sometimes another (decoded) */
            o.codec = f == 1 && t % 3 == 0 ? FLOE_CODEC_SNAPPY : FLOE_CODEC_ZSTD;
            o.page_size = 200 + pqg_rand(&g) % 4000;
            o.row_group_size = 2000 + pqg_rand(&g) % 40000;
            o.dict_limit = 50 + pqg_rand(&g) % 3000;
            o.dictionary = (t + f) % 4 != 0;
            o.page_v2 = (t + f) % 5 == 0;
            /* a footer floe wrote is trusted for null counts; another
             * writer's pages have their levels counted */
            o.created_by = (t + f) % 2 ? "floe" : "parquet-mr version 1.13.1";
            floe_pq_writer_t *w = floe_pq_writer_new(g.s, &o, floe_pq_sink_buf, &files[f], &err);
            size_t nrows = 1 + pqg_rand(&g) % 300;
            pqg_val_t **rows = malloc(nrows * sizeof *rows);
            for (size_t i = 0; i < nrows; i++) {
                rows[i] = pqg_row(&g);
                pqg_json(g.s, rows[i], &want);
                floe_buf_append_u8(&want, '\n');
            }
            CHECK_EQ(pqg_write(&g, w, rows, nrows, &err), 0);
            CHECK_EQ(floe_pq_writer_close(w, &err), 0);
            floe_pq_writer_free(w);
            free(rows);
        }
        int wa = 0, wb = 0;
        int per = 1 + t % 3;
        CHECK_EQ(concat(g.s, files, nf, per, true, &a, &wa), 0);
        CHECK_EQ(concat(g.s, files, nf, per, false, &b, &wb), 0);
        whole += wa;
        decoded += wb == 0;
        floe_pq_reader_t *r = floe_pq_reader_open(a.data, a.len, &err);
        CHECK(r != NULL);
        for (int rg = 0; r && rg < floe_pq_reader_num_row_groups(r); rg++)
            CHECK_EQ(pqg_read_json(r, rg, &got, &err), 0);
        floe_pq_reader_free(r);
        CHECK(got.len == want.len && memcmp(got.data, want.data, got.len) == 0);
        pq_file_meta_t ma, mb;
        CHECK_EQ(footer_of(&a, &ma), 0);
        CHECK_EQ(footer_of(&b, &mb), 0);
        CHECK_EQ(ma.nrg, mb.nrg);
        for (int rg = 0; rg < ma.nrg && rg < mb.nrg; rg++) {
            CHECK_EQ(ma.rgs[rg].num_rows, mb.rgs[rg].num_rows);
            for (int c = 0; c < ma.schema->ncols; c++) {
                const pq_chunk_meta_t *x = &ma.rgs[rg].cols[c], *y = &mb.rgs[rg].cols[c];
                CHECK_EQ(x->num_values, y->num_values);
                CHECK_EQ(x->stats.null_count, y->stats.null_count);
                CHECK_EQ(x->stats.has_minmax, y->stats.has_minmax);
                if (x->stats.has_minmax && y->stats.has_minmax) {
                    CHECK(x->stats.min.len == y->stats.min.len &&
                          !memcmp(x->stats.min.data, y->stats.min.data, x->stats.min.len));
                    CHECK(x->stats.max.len == y->stats.max.len &&
                          !memcmp(x->stats.max.data, y->stats.max.data, x->stats.max.len));
                }
            }
        }
        pq_file_meta_free(&ma);
        pq_file_meta_free(&mb);
        for (int f = 0; f < nf; f++) floe_buf_free(&files[f]);
        floe_buf_free(&want);
        floe_buf_free(&got);
        floe_buf_free(&a);
        floe_buf_free(&b);
        pqg_free(&g);
    }
    CHECK(whole > 100); /* the copy paths ran, not only the fallback */
    CHECK_EQ(decoded, seeds);
}

/* Dictionary-encoded chunks of several files merge into one dictionary:
 * the output chunk has one dictionary page holding the union of entries,
 * its pages index it (each file's indices mapped), and every value reads
 * back. */
static void copy_merges_dictionaries(void)
{
    floe_pq_schema_t *s = floe_pq_schema_new();
    floe_err_t err;
    floe_pq_node_t a = floe_pq_leaf("country", FLOE_PQ_OPTIONAL, FLOE_PQ_BYTE_ARRAY, 1);
    a.logical = FLOE_PQ_LT_STRING;
    floe_pq_schema_add(s, &a, &err);
    static const char *names[] = {"US", "DE", "FR", "JP", "BR", "IN", "GB", "CA"};
    floe_buf_t files[3], out = FLOE_BUF_INIT;
    enum { N = 5000 };
    floe_slice_t *v = malloc(N * sizeof *v);
    uint8_t *def = malloc(N);
    for (int f = 0; f < 3; f++) {
        memset(&files[f], 0, sizeof files[f]);
        floe_pq_writer_t *w = floe_pq_writer_new(s, NULL, floe_pq_sink_buf, &files[f], &err);
        size_t nv = 0;
        for (int i = 0; i < N; i++) {
            def[i] = i % 11 != 0;
            /* file f holds names[f .. f+4]: overlapping, each file in its own order */
            if (def[i]) v[nv++] = floe_slice_str(names[f + (i * 7 + f) % 5]);
        }
        CHECK_EQ(floe_pq_write_column8(w, 0, N, def, NULL, v, nv, &err), 0);
        CHECK_EQ(floe_pq_writer_rows(w, N, &err), 0);
        CHECK_EQ(floe_pq_writer_close(w, &err), 0);
        floe_pq_writer_free(w);
    }
    int whole = 0;
    CHECK_EQ(concat(s, files, 3, 3, true, &out, &whole), 0);
    CHECK_EQ(whole, 3);
    /* one row group: its chunk has one dictionary page with the 7 names the
     * files hold between them, then data pages only */
    pq_file_meta_t m;
    CHECK_EQ(footer_of(&out, &m), 0);
    CHECK_EQ(m.nrg, 1);
    if (m.nrg == 1) {
        const pq_chunk_meta_t *c = &m.rgs[0].cols[0];
        CHECK(c->dict_page_offset >= 0);
        CHECK(c->encodings & (1u << PQ_ENC_RLE_DICT));
        CHECK_EQ(c->stats.null_count, 3 * ((N + 10) / 11)); /* i % 11 == 0 */
        CHECK(c->stats.has_minmax && c->stats.min.len == 2 && !memcmp(c->stats.min.data, "BR", 2));
        size_t at = (size_t)c->dict_page_offset, end = at + (size_t)c->total_compressed;
        int dicts = 0, entries = 0, data = 0;
        while (at < end) {
            pq_page_header_t h;
            size_t used;
            if (pq_page_header_decode(out.data + at, end - at, &h, &used, &err) < 0) break;
            if (h.type == PQ_PAGE_DICT) {
                CHECK_EQ(data, 0);
                dicts++;
                entries = h.num_values;
            } else {
                data++;
            }
            at += used + (size_t)h.compressed;
        }
        CHECK_EQ(dicts, 1);
        CHECK_EQ(entries, 7);
        CHECK(data >= 1);
    }
    pq_file_meta_free(&m);
    floe_pq_reader_t *r = floe_pq_reader_open(out.data, out.len, &err);
    CHECK(r != NULL);
    floe_pq_column_t col;
    if (r && floe_pq_read_column(r, 0, 0, &col, &err) == 0) {
        CHECK_EQ(col.n_levels, 3 * N);
        size_t k = 0;
        bool ok = true;
        for (int f = 0; f < 3; f++)
            for (int i = 0; i < N; i++) {
                bool d = col.def[f * N + i] != 0;
                ok &= d == (i % 11 != 0);
                if (d)
                    ok &= floe_slice_eq(((floe_slice_t *)col.values)[k++],
                                        floe_slice_str(names[f + (i * 7 + f) % 5]));
            }
        CHECK(ok);
        floe_pq_column_free(&col);
    } else {
        CHECK(!"read");
    }
    floe_pq_reader_free(r);
    for (int f = 0; f < 3; f++) floe_buf_free(&files[f]);
    floe_buf_free(&out);
    free(v);
    free(def);
    floe_pq_schema_free(s);
}

/* A column of empty strings only: its dictionary has one empty entry,
 * written, merged into another writer's and read back (its bytes were
 * once never allocated: an offset from NULL, which clang's UB sanitizer
 * flags). */
static void empty_strings_dictionary(void)
{
    floe_pq_schema_t *s = floe_pq_schema_new();
    floe_err_t err;
    floe_pq_node_t a = floe_pq_leaf("e", FLOE_PQ_REQUIRED, FLOE_PQ_BYTE_ARRAY, 1);
    floe_pq_schema_add(s, &a, &err);
    floe_buf_t files[2], out = FLOE_BUF_INIT;
    floe_slice_t v[3] = {floe_slice_str(""), floe_slice_str(""), floe_slice_str("")};
    for (int f = 0; f < 2; f++) {
        memset(&files[f], 0, sizeof files[f]);
        floe_pq_writer_t *w = floe_pq_writer_new(s, NULL, floe_pq_sink_buf, &files[f], &err);
        CHECK_EQ(floe_pq_write_column8(w, 0, 3, NULL, NULL, v, 3, &err), 0);
        CHECK_EQ(floe_pq_writer_rows(w, 3, &err), 0);
        CHECK_EQ(floe_pq_writer_close(w, &err), 0);
        floe_pq_writer_free(w);
    }
    int whole = 0;
    CHECK_EQ(concat(s, files, 2, 2, true, &out, &whole), 0);
    CHECK_EQ(whole, 2);
    floe_pq_reader_t *r = floe_pq_reader_open(out.data, out.len, &err);
    CHECK(r != NULL);
    floe_pq_column_t col;
    if (r && floe_pq_read_column(r, 0, 0, &col, &err) == 0) {
        CHECK_EQ(col.n_values, 6);
        for (size_t i = 0; i < col.n_values; i++) CHECK_EQ(((floe_slice_t *)col.values)[i].len, 0);
        floe_pq_column_free(&col);
    }
    floe_pq_reader_free(r);
    for (int f = 0; f < 2; f++) floe_buf_free(&files[f]);
    floe_buf_free(&out);
    floe_pq_schema_free(s);
}

TEST_MAIN(RUN(rle_round_trip); RUN(projection_by_field_id); RUN(delta_round_trip);
          RUN(all_types_every_codec); RUN(random_schemas); RUN(statistics_order);
          RUN(bounds_over_row_groups); RUN(dictionary_given_up_stays_off);
          RUN(shared_scratch_same_bytes); RUN(corrupt_files); RUN(copy_chunks);
          RUN(copy_merges_dictionaries); RUN(empty_strings_dictionary))
