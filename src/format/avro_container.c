/* Avro object container files: "Obj\x01", a metadata map (avro.schema,
 * avro.codec and any other keys), a 16-byte sync marker, then blocks of
 * (datum count, byte size, compressed datums, sync marker). */
#include <stdlib.h>
#include <string.h>

#include "format/avro_int.h"
#include "util/mem.h"
#include "util/rand.h"

static const uint8_t MAGIC[4] = {'O', 'b', 'j', 1};

/* ------------------------------------------------------------------ */
/* Writer                                                               */
/* ------------------------------------------------------------------ */

typedef struct meta_entry {
    char *key;
    uint8_t *val;
    size_t len;
} meta_entry_t;

struct floe_avro_writer {
    const floe_avro_schema_t *s;
    floe_avro_writer_opts_t o;
    uint8_t sync[16];
    meta_entry_t *meta;
    size_t n_meta;
    char *schema_json;       /* header avro.schema (ours, or the caller's text) */
    floe_buf_t out;          /* file bytes not yet given to the sink */
    floe_buf_t block;        /* encoded datums of the open block */
    floe_codec_ctx_t *codec; /* compression contexts, reused per block */
    uint64_t block_count, count, produced;
    bool header_done, finished, failed;
};

static int w_oom(floe_err_t *err)
{
    return floe_err_set(err, FLOE_ENOMEM, "avro writer: out of memory");
}

int floe_avro_writer_new(floe_avro_writer_t **out, const floe_avro_schema_t *s,
                         const floe_avro_writer_opts_t *opts, floe_err_t *err)
{
    *out = NULL;
    floe_avro_writer_t *w = calloc(1, sizeof *w);
    if (!w) return w_oom(err);
    floe_avro_writer_opts_t def = FLOE_AVRO_WRITER_OPTS_INIT;
    w->o = opts ? *opts : def;
    if ((unsigned)w->o.codec > FLOE_AVRO_CODEC_ZSTD) {
        int c = (int)w->o.codec;
        free(w);
        return floe_err_set(err, FLOE_EINVAL, "avro writer: bad codec %d", c);
    }
    if (!w->o.block_bytes) w->o.block_bytes = 64 * 1024;
    if (w->o.codec != FLOE_AVRO_CODEC_NULL && !(w->codec = floe_codec_ctx_new(w->o.level))) {
        free(w);
        return w_oom(err);
    }
    if (w->o.sync) memcpy(w->sync, w->o.sync, 16);
    else
        floe_rand_bytes(w->sync, sizeof w->sync);
    w->o.sync = NULL;
    w->s = s;
    *out = w;
    return 0;
}

int floe_avro_writer_set_meta(floe_avro_writer_t *w, const char *key, const void *val, size_t len,
                              floe_err_t *err)
{
    if (w->header_done)
        return floe_err_set(err, FLOE_EINVAL,
                            "avro writer: metadata \"%s\" set after the header was written", key);
    if (strcmp(key, "avro.schema") == 0) {
        /* the caller's own text, provided it is the same schema */
        floe_avro_schema_t *given;
        if (floe_avro_schema_parse(val, len, &given, err) != 0) {
            floe_err_wrap(err, "avro writer: avro.schema");
            return -1;
        }
        char *a = floe_avro_schema_canonical(given, err);
        char *b = a ? floe_avro_schema_canonical(w->s, err) : NULL;
        bool same = a && b && strcmp(a, b) == 0;
        free(a);
        free(b);
        floe_avro_schema_free(given);
        if (!same)
            return floe_err_set(err, FLOE_EINVAL,
                                "avro writer: avro.schema differs from the writer's schema");
        char *copy = strndup(val, len);
        if (!copy) return w_oom(err);
        free(w->schema_json);
        w->schema_json = copy;
        return 0;
    }
    if (strncmp(key, "avro.", 5) == 0)
        return floe_err_set(err, FLOE_EINVAL, "avro writer: metadata key \"%s\" is reserved", key);
    for (size_t i = 0; i < w->n_meta; i++)
        if (strcmp(w->meta[i].key, key) == 0) {
            uint8_t *v = malloc(len ? len : 1);
            if (!v) return w_oom(err);
            if (len) memcpy(v, val, len);
            free(w->meta[i].val);
            w->meta[i].val = v;
            w->meta[i].len = len;
            return 0;
        }
    meta_entry_t *m = realloc(w->meta, (w->n_meta + 1) * sizeof *m);
    if (!m) return w_oom(err);
    w->meta = m;
    char *k = strdup(key);
    uint8_t *v = malloc(len ? len : 1);
    if (!k || !v) {
        free(k);
        free(v);
        return w_oom(err);
    }
    if (len) memcpy(v, val, len);
    m[w->n_meta++] = (meta_entry_t){k, v, len};
    return 0;
}

int floe_avro_writer_set_meta_str(floe_avro_writer_t *w, const char *key, const char *val,
                                  floe_err_t *err)
{
    return floe_avro_writer_set_meta(w, key, val, strlen(val), err);
}

/* Hand what is buffered to the sink, if there is one. */
static int drain(floe_avro_writer_t *w, floe_err_t *err)
{
    if (!w->o.sink || w->out.len == 0) return 0;
    if (w->o.sink(w->o.sink_ctx, w->out.data, w->out.len, err) != 0) {
        w->failed = true;
        return -1;
    }
    floe_buf_reset(&w->out);
    return 0;
}

static int write_header(floe_avro_writer_t *w, floe_err_t *err)
{
    if (w->header_done) return 0;
    if (!w->schema_json && !(w->schema_json = floe_avro_schema_to_json(w->s, err))) return -1;
    const char *codec = floe_avro_codec_name(w->o.codec);
    size_t before = w->out.len;
    int rc = floe_buf_append(&w->out, MAGIC, 4);
    rc |= avro_put_long(&w->out, (int64_t)w->n_meta + 2);
    rc |= avro_put_bytes(&w->out, "avro.schema", 11);
    rc |= avro_put_bytes(&w->out, w->schema_json, strlen(w->schema_json));
    rc |= avro_put_bytes(&w->out, "avro.codec", 10);
    rc |= avro_put_bytes(&w->out, codec, strlen(codec));
    for (size_t i = 0; i < w->n_meta; i++) {
        rc |= avro_put_bytes(&w->out, w->meta[i].key, strlen(w->meta[i].key));
        rc |= avro_put_bytes(&w->out, w->meta[i].val, w->meta[i].len);
    }
    rc |= avro_put_long(&w->out, 0);
    rc |= floe_buf_append(&w->out, w->sync, 16);
    if (rc) return w_oom(err);
    w->produced += w->out.len - before;
    w->header_done = true;
    return drain(w, err);
}

static int flush_block(floe_avro_writer_t *w, floe_err_t *err)
{
    if (w->block_count == 0) return 0;
    floe_buf_t z = FLOE_BUF_INIT;
    const uint8_t *data = w->block.data;
    size_t n = w->block.len;
    if (w->o.codec != FLOE_AVRO_CODEC_NULL) {
        if (avro_codec_compress(w->codec, w->o.codec, w->block.data, w->block.len, &z, err) != 0) {
            floe_buf_free(&z);
            return -1;
        }
        data = z.data;
        n = z.len;
    }
    size_t before = w->out.len;
    int rc = avro_put_long(&w->out, (int64_t)w->block_count);
    rc |= avro_put_long(&w->out, (int64_t)n);
    rc |= floe_buf_append(&w->out, data, n);
    rc |= floe_buf_append(&w->out, w->sync, 16);
    floe_buf_free(&z);
    if (rc) return w_oom(err);
    w->produced += w->out.len - before;
    w->block_count = 0;
    floe_buf_reset(&w->block);
    return drain(w, err);
}

static int check_open(floe_avro_writer_t *w, floe_err_t *err)
{
    if (w->finished) return floe_err_set(err, FLOE_EINVAL, "avro writer: already finished");
    if (w->failed) return floe_err_set(err, FLOE_EIO, "avro writer: failed earlier");
    return write_header(w, err);
}

int floe_avro_writer_append(floe_avro_writer_t *w, const floe_avro_value_t *v, floe_err_t *err)
{
    if (check_open(w, err) != 0) return -1;
    if (v->s != w->s)
        return floe_err_set(err, FLOE_EINVAL, "avro writer: value of another schema node");
    if (floe_avro_encode(v, &w->block, err) != 0) return -1;
    w->block_count++;
    w->count++;
    return w->block.len >= w->o.block_bytes ? flush_block(w, err) : 0;
}

int floe_avro_writer_append_encoded(floe_avro_writer_t *w, const void *p, size_t n, floe_err_t *err)
{
    if (check_open(w, err) != 0) return -1;
    if (floe_buf_append(&w->block, p, n) != 0) return w_oom(err);
    w->block_count++;
    w->count++;
    return w->block.len >= w->o.block_bytes ? flush_block(w, err) : 0;
}

uint64_t floe_avro_writer_count(const floe_avro_writer_t *w)
{
    return w->count;
}
uint64_t floe_avro_writer_bytes_written(const floe_avro_writer_t *w)
{
    return w->produced;
}

int floe_avro_writer_finish(floe_avro_writer_t *w, floe_err_t *err)
{
    if (check_open(w, err) != 0) return -1;
    if (flush_block(w, err) != 0) return -1;
    w->finished = true;
    return drain(w, err);
}

floe_slice_t floe_avro_writer_bytes(const floe_avro_writer_t *w)
{
    return floe_buf_slice(&w->out);
}

uint8_t *floe_avro_writer_take(floe_avro_writer_t *w, size_t *len)
{
    return floe_buf_detach(&w->out, len);
}

void floe_avro_writer_free(floe_avro_writer_t *w)
{
    if (!w) return;
    for (size_t i = 0; i < w->n_meta; i++) {
        free(w->meta[i].key);
        free(w->meta[i].val);
    }
    free(w->meta);
    free(w->schema_json);
    floe_buf_free(&w->out);
    floe_buf_free(&w->block);
    floe_codec_ctx_free(w->codec);
    free(w);
}

int floe_avro_write_file(const floe_avro_schema_t *s, const floe_avro_writer_opts_t *opts,
                         const char *const *meta_keys, const char *const *meta_vals, size_t n_meta,
                         const floe_avro_value_t *const *values, size_t n, uint8_t **out,
                         size_t *out_len, floe_err_t *err)
{
    floe_avro_writer_opts_t o = FLOE_AVRO_WRITER_OPTS_INIT;
    if (opts) o = *opts;
    o.sink = NULL; /* in memory */
    floe_avro_writer_t *w;
    if (floe_avro_writer_new(&w, s, &o, err) != 0) return -1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n_meta; i++)
        rc = floe_avro_writer_set_meta_str(w, meta_keys[i], meta_vals[i], err);
    for (size_t i = 0; rc == 0 && i < n; i++) rc = floe_avro_writer_append(w, values[i], err);
    if (rc == 0) rc = floe_avro_writer_finish(w, err);
    if (rc == 0) {
        *out = floe_avro_writer_take(w, out_len);
        if (!*out) rc = w_oom(err);
    }
    floe_avro_writer_free(w);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Reader                                                               */
/* ------------------------------------------------------------------ */

typedef struct rmeta {
    char *key;
    floe_slice_t val;
} rmeta_t;

struct floe_avro_reader {
    floe_slice_t in; /* what is left of the file */
    floe_avro_schema_t *schema;
    floe_slice_t schema_json;
    floe_avro_codec_t codec;
    rmeta_t *meta;
    size_t n_meta, meta_cap;
    uint8_t sync[16];
    floe_avro_resolver_t *res;
    size_t max_block_bytes;
    uint64_t max_block_count;
    floe_buf_t block;      /* decompressed block */
    floe_codec_ctx_t *ctx; /* decompression contexts, reused per block */
    floe_slice_t cur;      /* undecoded rest of the block */
    uint64_t remaining;    /* datums left in the block */
    uint64_t block_no;
    floe_err_t fail; /* first error, repeated after */
    bool failed;
};

static int r_header(floe_avro_reader_t *r, floe_err_t *err)
{
    floe_slice_t *in = &r->in;
    if (in->len < 4 || memcmp(in->ptr, MAGIC, 4) != 0)
        return floe_err_set(err, in->len < 4 ? FLOE_ETRUNC : FLOE_ECORRUPT,
                            "avro container: not an Avro object container file (bad magic)");
    in->ptr += 4;
    in->len -= 4;
    for (;;) {
        int64_t count;
        if (avro_read_long(in, &count, err) != 0) return -1;
        if (count == 0) break;
        if (count < 0) {
            int64_t size;
            if (count == INT64_MIN || avro_read_long(in, &size, err) != 0) {
                if (count == INT64_MIN)
                    floe_err_set(err, FLOE_ECORRUPT, "avro container: bad metadata count");
                return -1;
            }
            count = -count;
        }
        /* an entry takes two bytes at least */
        if ((uint64_t)count > in->len / 2 + 1)
            return floe_err_set(err, FLOE_ETRUNC,
                                "avro container: metadata of %lld entries in %zu bytes",
                                (long long)count, in->len);
        for (int64_t i = 0; i < count; i++) {
            int64_t kn, vn;
            /* grow as entries arrive, not by the count the file claims */
            if (floe_grow(&r->meta, &r->meta_cap, r->n_meta + 1, sizeof *r->meta) != 0)
                return floe_err_set(err, FLOE_ENOMEM, "avro container: out of memory");
            rmeta_t *m = r->meta;
            if (avro_read_long(in, &kn, err) != 0) return -1;
            if (kn < 0 || (uint64_t)kn > in->len)
                return floe_err_set(err, kn < 0 ? FLOE_ECORRUPT : FLOE_ETRUNC,
                                    "avro container: bad metadata key length %lld", (long long)kn);
            char *key = strndup((const char *)in->ptr, (size_t)kn);
            if (!key) return floe_err_set(err, FLOE_ENOMEM, "avro container: out of memory");
            in->ptr += kn;
            in->len -= (size_t)kn;
            m[r->n_meta].key = key;
            m[r->n_meta].val = floe_slice(NULL, 0);
            r->n_meta++;
            if (avro_read_long(in, &vn, err) != 0) return -1;
            if (vn < 0 || (uint64_t)vn > in->len)
                return floe_err_set(err, vn < 0 ? FLOE_ECORRUPT : FLOE_ETRUNC,
                                    "avro container: bad length %lld of metadata \"%s\"",
                                    (long long)vn, key);
            m[r->n_meta - 1].val = floe_slice(in->ptr, (size_t)vn);
            in->ptr += vn;
            in->len -= (size_t)vn;
        }
    }
    if (in->len < 16)
        return floe_err_set(err, FLOE_ETRUNC, "avro container: header ends before the sync marker");
    memcpy(r->sync, in->ptr, 16);
    in->ptr += 16;
    in->len -= 16;
    floe_slice_t v;
    if (!floe_avro_reader_meta(r, "avro.schema", &v))
        return floe_err_set(err, FLOE_ECORRUPT, "avro container: header has no avro.schema");
    r->schema_json = v;
    if (floe_avro_schema_parse((const char *)v.ptr, v.len, &r->schema, err) != 0) {
        floe_err_wrap(err, "avro container: header avro.schema");
        return -1;
    }
    r->codec = FLOE_AVRO_CODEC_NULL;
    if (floe_avro_reader_meta(r, "avro.codec", &v)) {
        char name[32];
        if (v.len >= sizeof name)
            return floe_err_set(err, FLOE_EUNSUPPORTED, "avro container: unknown codec");
        memcpy(name, v.ptr, v.len);
        name[v.len] = 0;
        if (v.len && floe_avro_codec_parse(name, &r->codec, err) != 0) {
            floe_err_wrap(err, "avro container");
            return -1;
        }
    }
    return 0;
}

int floe_avro_reader_open(floe_avro_reader_t **out, const void *data, size_t len,
                          const floe_avro_reader_opts_t *opts, floe_err_t *err)
{
    *out = NULL;
    floe_avro_reader_t *r = calloc(1, sizeof *r);
    if (!r) return floe_err_set(err, FLOE_ENOMEM, "avro container: out of memory");
    r->in = floe_slice(data, len);
    r->max_block_bytes = opts && opts->max_block_bytes ? opts->max_block_bytes : 64u << 20;
    r->max_block_count = opts && opts->max_block_count ? opts->max_block_count : 16u << 20;
    if (r_header(r, err) != 0 ||
        (opts && opts->reader_schema &&
         floe_avro_resolver_new(r->schema, opts->reader_schema, &r->res, err) != 0)) {
        floe_avro_reader_free(r);
        return -1;
    }
    *out = r;
    return 0;
}

const floe_avro_schema_t *floe_avro_reader_schema(const floe_avro_reader_t *r)
{
    return r->schema;
}
floe_slice_t floe_avro_reader_schema_json(const floe_avro_reader_t *r)
{
    return r->schema_json;
}
floe_avro_codec_t floe_avro_reader_codec(const floe_avro_reader_t *r)
{
    return r->codec;
}
size_t floe_avro_reader_meta_count(const floe_avro_reader_t *r)
{
    return r->n_meta;
}

const char *floe_avro_reader_meta_key(const floe_avro_reader_t *r, size_t i)
{
    return i < r->n_meta ? r->meta[i].key : NULL;
}

floe_slice_t floe_avro_reader_meta_val(const floe_avro_reader_t *r, size_t i)
{
    return i < r->n_meta ? r->meta[i].val : floe_slice(NULL, 0);
}

bool floe_avro_reader_meta(const floe_avro_reader_t *r, const char *key, floe_slice_t *val)
{
    /* the last of repeated keys wins */
    for (size_t i = r->n_meta; i-- > 0;)
        if (strcmp(r->meta[i].key, key) == 0) {
            if (val) *val = r->meta[i].val;
            return true;
        }
    return false;
}

/* Load the next block; 0 and remaining > 0 (or the end: in.len == 0). */
static int next_block(floe_avro_reader_t *r, floe_err_t *err)
{
    floe_slice_t *in = &r->in;
    int64_t count, size;
    r->block_no++;
    if (avro_read_long(in, &count, err) != 0 || avro_read_long(in, &size, err) != 0) return -1;
    if (count < 0 || (uint64_t)count > r->max_block_count)
        return floe_err_set(err, FLOE_ECORRUPT,
                            "avro container: block count %lld outside [0, %llu]", (long long)count,
                            (unsigned long long)r->max_block_count);
    if (size < 0 || (uint64_t)size > r->max_block_bytes)
        return floe_err_set(err, FLOE_ECORRUPT, "avro container: block size %lld outside [0, %zu]",
                            (long long)size, r->max_block_bytes);
    if ((uint64_t)size + 16 > in->len)
        return floe_err_set(
            err, FLOE_ETRUNC,
            "avro container: file truncated: block of %lld bytes + sync marker, %zu bytes left",
            (long long)size, in->len);
    const uint8_t *data = in->ptr;
    if (memcmp(data + size, r->sync, 16) != 0)
        return floe_err_set(err, FLOE_ECORRUPT,
                            "avro container: sync marker mismatch after the block");
    in->ptr += size + 16;
    in->len -= (size_t)size + 16;
    if (r->codec == FLOE_AVRO_CODEC_NULL) {
        r->cur = floe_slice(data, (size_t)size);
    } else {
        floe_buf_reset(&r->block);
        if (!r->ctx && !(r->ctx = floe_codec_ctx_new(0)))
            return floe_err_set(err, FLOE_ENOMEM, "avro container: out of memory");
        if (avro_codec_decompress(r->ctx, r->codec, data, (size_t)size, r->max_block_bytes,
                                  &r->block, err) != 0)
            return -1;
        r->cur = floe_buf_slice(&r->block);
    }
    r->remaining = (uint64_t)count;
    return 0;
}

int floe_avro_reader_next(floe_avro_reader_t *r, floe_arena_t *a, floe_avro_value_t **out,
                          floe_err_t *err)
{
    if (r->failed) {
        if (err) *err = r->fail;
        return -1;
    }
    floe_err_t local;
    floe_err_t *e = err ? err : &local;
    while (r->remaining == 0) {
        if (r->cur.len != 0) {
            floe_err_set(e, FLOE_ECORRUPT,
                         "avro container: %zu bytes left over after the block's datums",
                         r->cur.len);
            goto fail;
        }
        if (r->in.len == 0) return 0;
        if (next_block(r, e) != 0) goto fail;
    }
    int rc = r->res ? floe_avro_resolver_decode(r->res, &r->cur, a, out, e)
                    : floe_avro_decode(r->schema, &r->cur, a, out, e);
    if (rc != 0) goto fail;
    r->remaining--;
    return 1;
fail:
    floe_err_wrap(e, "block %llu", (unsigned long long)r->block_no);
    r->fail = *e;
    r->failed = true;
    return -1;
}

void floe_avro_reader_free(floe_avro_reader_t *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n_meta; i++) free(r->meta[i].key);
    free(r->meta);
    floe_avro_resolver_free(r->res);
    floe_avro_schema_free(r->schema);
    floe_buf_free(&r->block);
    floe_codec_ctx_free(r->ctx);
    free(r);
}
