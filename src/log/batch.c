/* RecordBatch v2: header parsing with CRC32C, multi-batch iteration,
 * in-place patches, record and header iteration, validation, building.
 * Facts from the Kafka protocol documentation ("Record Batch"). */
#include "log/batch.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log/kcodec.h"
#include "util/crc32c.h"
#include "util/varint.h"

const char *floe_compression_name(floe_compression_t codec)
{
    switch (codec) {
    case FLOE_COMPRESSION_NONE: return "none";
    case FLOE_COMPRESSION_GZIP: return "gzip";
    case FLOE_COMPRESSION_SNAPPY: return "snappy";
    case FLOE_COMPRESSION_LZ4: return "lz4";
    case FLOE_COMPRESSION_ZSTD: return "zstd";
    default: return "unknown";
    }
}

int floe_compression_parse(const char *name)
{
    if (!name) return -1;
    if (!strcasecmp(name, "none") || !strcasecmp(name, "uncompressed"))
        return FLOE_COMPRESSION_NONE;
    for (int c = FLOE_COMPRESSION_GZIP; c <= FLOE_COMPRESSION_ZSTD; c++)
        if (!strcasecmp(name, floe_compression_name((floe_compression_t)c))) return c;
    return -1;
}

int32_t floe_batch_last_sequence(const floe_batch_hdr_t *h)
{
    int32_t seq = h->base_sequence, inc = h->last_offset_delta;
    if (seq < 0 || inc < 0) return seq;
    if (seq > INT32_MAX - inc) return inc - (INT32_MAX - seq) - 1;
    return seq + inc;
}

int floe_batch_decode_hdr(const uint8_t *p, size_t n, floe_batch_hdr_t *h, floe_err_t *err)
{
    if (n < FLOE_BATCH_HDR_SIZE)
        return floe_err_set(err, FLOE_ETRUNC, "record batch header needs %d bytes, have %zu",
                            FLOE_BATCH_HDR_SIZE, n);
    h->base_offset = (int64_t)floe_rd_be64(p);
    h->batch_length = (int32_t)floe_rd_be32(p + 8);
    h->partition_leader_epoch = (int32_t)floe_rd_be32(p + 12);
    h->magic = (int8_t)p[16];
    h->crc = floe_rd_be32(p + 17);
    h->attributes = (int16_t)floe_rd_be16(p + 21);
    h->last_offset_delta = (int32_t)floe_rd_be32(p + 23);
    h->base_timestamp = (int64_t)floe_rd_be64(p + 27);
    h->max_timestamp = (int64_t)floe_rd_be64(p + 35);
    h->producer_id = (int64_t)floe_rd_be64(p + 43);
    h->producer_epoch = (int16_t)floe_rd_be16(p + 51);
    h->base_sequence = (int32_t)floe_rd_be32(p + 53);
    h->record_count = (int32_t)floe_rd_be32(p + 57);
    if (h->magic != FLOE_BATCH_MAGIC)
        return floe_err_set(err, FLOE_ECORRUPT, "record batch magic %d (only 2 is supported)",
                            h->magic);
    if (h->batch_length < FLOE_BATCH_HDR_SIZE - FLOE_BATCH_LOG_OVERHEAD)
        return floe_err_set(err, FLOE_ECORRUPT, "record batch length %d is below the header size",
                            h->batch_length);
    return 0;
}

int floe_batch_parse_hdr(const uint8_t *p, size_t n, floe_batch_hdr_t *h, floe_err_t *err)
{
    if (floe_batch_decode_hdr(p, n, h, err) != 0) return -1;
    size_t size = floe_batch_size(h);
    if (n < size)
        return floe_err_set(err, FLOE_ETRUNC, "record batch of %zu bytes, only %zu present", size,
                            n);
    uint32_t crc = floe_crc32c(0, p + FLOE_BATCH_CRC_START, size - FLOE_BATCH_CRC_START);
    if (crc != h->crc)
        return floe_err_set(err, FLOE_ECORRUPT,
                            "record batch CRC mismatch (stored %08x, computed %08x)", h->crc, crc);
    if (h->record_count < 0)
        return floe_err_set(err, FLOE_ECORRUPT, "record batch count %d is negative",
                            h->record_count);
    if (h->record_count > 0 && h->last_offset_delta < 0)
        return floe_err_set(err, FLOE_ECORRUPT, "record batch last offset delta %d is negative",
                            h->last_offset_delta);
    return 0;
}

void floe_batch_iter_init(floe_batch_iter_t *it, const uint8_t *p, size_t n)
{
    it->p = p;
    it->n = n;
    it->off = 0;
}

int floe_batch_iter_next(floe_batch_iter_t *it, const uint8_t **batch, size_t *len,
                         floe_batch_hdr_t *h, floe_err_t *err)
{
    if (it->off >= it->n) return 0;
    floe_batch_hdr_t tmp;
    if (!h) h = &tmp;
    if (floe_batch_parse_hdr(it->p + it->off, it->n - it->off, h, err) != 0) {
        floe_err_wrap(err, "batch at byte %zu", it->off);
        return -1;
    }
    size_t size = floe_batch_size(h);
    if (batch) *batch = it->p + it->off;
    if (len) *len = size;
    it->off += size;
    return 1;
}

void floe_batch_set_base_offset(uint8_t *b, int64_t base_offset)
{
    floe_wr_be64(b, (uint64_t)base_offset);
}

void floe_batch_set_leader_epoch(uint8_t *b, int32_t epoch)
{
    floe_wr_be32(b + 12, (uint32_t)epoch);
}

void floe_batch_update_crc(uint8_t *b, size_t len)
{
    floe_wr_be32(b + 17, floe_crc32c(0, b + FLOE_BATCH_CRC_START, len - FLOE_BATCH_CRC_START));
}

void floe_batch_set_log_append_time(uint8_t *b, size_t len, int64_t ts_ms)
{
    uint16_t attr = floe_rd_be16(b + 21) | FLOE_BATCH_ATTR_LOG_APPEND_TIME;
    b[21] = (uint8_t)(attr >> 8);
    b[22] = (uint8_t)attr;
    floe_wr_be64(b + 35, (uint64_t)ts_ms);
    floe_batch_update_crc(b, len);
}

int floe_batch_records(const uint8_t *b, size_t len, const floe_batch_hdr_t *h, floe_buf_t *scratch,
                       size_t max_out, floe_slice_t *out, floe_err_t *err)
{
    size_t size = floe_batch_size(h);
    if (len < size || size < FLOE_BATCH_HDR_SIZE)
        return floe_err_set(err, FLOE_ETRUNC, "record batch shorter than its length");
    const uint8_t *rec = b + FLOE_BATCH_HDR_SIZE;
    size_t rn = size - FLOE_BATCH_HDR_SIZE;
    floe_compression_t codec = floe_batch_compression(h);
    if (codec == FLOE_COMPRESSION_NONE) {
        *out = floe_slice(rec, rn);
        return 0;
    }
    if (codec > FLOE_COMPRESSION_ZSTD)
        return floe_err_set(err, FLOE_ECORRUPT, "unknown compression codec %d", (int)codec);
    floe_buf_reset(scratch);
    if (floe_kcodec_decompress(codec, rec, rn, scratch,
                               max_out ? max_out : FLOE_BATCH_MAX_DECOMPRESSED, err) != 0)
        return -1;
    *out = floe_buf_slice(scratch);
    return 0;
}

/* ---- records ---- */

void floe_record_iter_init(floe_record_iter_t *it, const floe_batch_hdr_t *h, floe_slice_t records)
{
    it->p = records.ptr;
    it->n = records.len;
    it->off = 0;
    it->remaining = h->record_count;
    it->index = 0;
    it->base_offset = h->base_offset;
    it->base_timestamp = h->base_timestamp;
    it->max_timestamp = h->max_timestamp;
    it->log_append_time = floe_batch_is_log_append_time(h);
}

/* A cursor over [p, end) that reports the first problem. */
typedef struct cur {
    const uint8_t *p;
    size_t n, off;
} cur_t;

static int cur_varint(cur_t *c, int32_t *v)
{
    int k = floe_varint_decode(c->p + c->off, c->n - c->off, v);
    if (k < 0) return -1;
    c->off += (size_t)k;
    return 0;
}

static int cur_varlong(cur_t *c, int64_t *v)
{
    int k = floe_varlong_decode(c->p + c->off, c->n - c->off, v);
    if (k < 0) return -1;
    c->off += (size_t)k;
    return 0;
}

/* Nullable bytes: length varint (-1 = null) then the bytes. */
static int cur_bytes(cur_t *c, floe_slice_t *s, bool *is_null, bool nullable)
{
    int32_t len;
    if (cur_varint(c, &len) != 0) return -1;
    if (len < 0) {
        if (len != -1 || !nullable) return -1;
        *s = floe_slice(NULL, 0);
        if (is_null) *is_null = true;
        return 0;
    }
    if ((size_t)len > c->n - c->off) return -1;
    *s = floe_slice(c->p + c->off, (size_t)len);
    if (is_null) *is_null = false;
    c->off += (size_t)len;
    return 0;
}

int floe_record_iter_next(floe_record_iter_t *it, floe_record_t *r, floe_err_t *err)
{
    if (it->remaining <= 0) {
        if (it->off != it->n)
            return floe_err_set(err, FLOE_ECORRUPT, "%zu bytes after the last of %d records",
                                it->n - it->off, it->index);
        return 0;
    }
    if (it->off >= it->n)
        return floe_err_set(err, FLOE_ETRUNC, "records end after %d of %d records", it->index,
                            it->index + it->remaining);
    cur_t outer = {it->p, it->n, it->off};
    int32_t rlen;
    if (cur_varint(&outer, &rlen) != 0 || rlen < 0 || (size_t)rlen > outer.n - outer.off)
        return floe_err_set(err, FLOE_ECORRUPT, "record %d: bad length", it->index);
    cur_t c = {it->p + outer.off, (size_t)rlen, 0};
    if (c.n < 1) return floe_err_set(err, FLOE_ECORRUPT, "record %d: empty", it->index);
    r->attributes = (int8_t)c.p[0];
    c.off = 1;
    if (cur_varlong(&c, &r->timestamp_delta) != 0)
        return floe_err_set(err, FLOE_ECORRUPT, "record %d: bad timestamp delta", it->index);
    if (cur_varint(&c, &r->offset_delta) != 0)
        return floe_err_set(err, FLOE_ECORRUPT, "record %d: bad offset delta", it->index);
    if (cur_bytes(&c, &r->key, &r->key_null, true) != 0)
        return floe_err_set(err, FLOE_ECORRUPT, "record %d: bad key", it->index);
    if (cur_bytes(&c, &r->value, &r->value_null, true) != 0)
        return floe_err_set(err, FLOE_ECORRUPT, "record %d: bad value", it->index);
    if (cur_varint(&c, &r->header_count) != 0 || r->header_count < 0)
        return floe_err_set(err, FLOE_ECORRUPT, "record %d: bad header count", it->index);
    size_t hstart = c.off;
    for (int32_t i = 0; i < r->header_count; i++) {
        floe_slice_t hk, hv;
        bool vnull;
        if (cur_bytes(&c, &hk, NULL, false) != 0 || cur_bytes(&c, &hv, &vnull, true) != 0)
            return floe_err_set(err, FLOE_ECORRUPT, "record %d: bad header %d", it->index, i);
    }
    if (c.off != c.n)
        return floe_err_set(err, FLOE_ECORRUPT, "record %d: %zu bytes past its fields", it->index,
                            c.n - c.off);
    r->headers_raw = floe_slice(c.p + hstart, c.off - hstart);
    r->offset = (int64_t)((uint64_t)it->base_offset + (uint64_t)(int64_t)r->offset_delta);
    r->timestamp = it->log_append_time
                       ? it->max_timestamp
                       : (int64_t)((uint64_t)it->base_timestamp + (uint64_t)r->timestamp_delta);
    it->off = outer.off + (size_t)rlen;
    it->remaining--;
    it->index++;
    return 1;
}

void floe_header_iter_init(floe_header_iter_t *hi, const floe_record_t *r)
{
    hi->p = r->headers_raw.ptr;
    hi->n = r->headers_raw.len;
    hi->off = 0;
    hi->remaining = r->header_count;
}

int floe_header_iter_next(floe_header_iter_t *hi, floe_record_header_t *out)
{
    if (hi->remaining <= 0) return 0;
    cur_t c = {hi->p, hi->n, hi->off};
    if (cur_bytes(&c, &out->key, NULL, false) != 0 ||
        cur_bytes(&c, &out->value, &out->value_null, true) != 0)
        return -1;
    hi->off = c.off;
    hi->remaining--;
    return 1;
}

int floe_batch_validate_records(const uint8_t *b, size_t len, const floe_batch_hdr_t *h,
                                floe_buf_t *scratch, size_t max_out, floe_err_t *err)
{
    return floe_batch_check_records(b, len, h, scratch, max_out, 0, err);
}

int floe_batch_check_records(const uint8_t *b, size_t len, const floe_batch_hdr_t *h,
                             floe_buf_t *scratch, size_t max_out, unsigned flags, floe_err_t *err)
{
    if (h->record_count < 1)
        return floe_err_set(err, FLOE_ECORRUPT, "record batch holds no records");
    if (h->last_offset_delta != h->record_count - 1)
        return floe_err_set(err, FLOE_ECORRUPT,
                            "record batch last offset delta %d does not match %d records",
                            h->last_offset_delta, h->record_count);
    floe_slice_t recs;
    if (floe_batch_records(b, len, h, scratch, max_out, &recs, err) != 0) return -1;
    floe_record_iter_t it;
    floe_record_iter_init(&it, h, recs);
    floe_record_t r;
    int rc;
    int32_t i = 0;
    while ((rc = floe_record_iter_next(&it, &r, err)) == 1) {
        if (r.offset_delta != i)
            return floe_err_set(err, FLOE_ECORRUPT, "record %d has offset delta %d", i,
                                r.offset_delta);
        if ((flags & FLOE_BATCH_KEYS_REQUIRED) && r.key_null)
            return floe_err_set(err, FLOE_EINVAL,
                                "record %d has no key: a compacted topic needs one", i);
        i++;
    }
    return rc;
}

/* ---- building ---- */

struct floe_batch_builder {
    floe_batch_opts_t opts;
    floe_buf_t recs; /* encoded records, uncompressed */
    floe_buf_t zbuf; /* compression output */
    size_t count;
    int64_t first_ts;
    int64_t max_ts;
};

void floe_batch_opts_default(floe_batch_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->compression = FLOE_COMPRESSION_NONE;
    o->partition_leader_epoch = -1;
    o->producer_id = -1;
    o->producer_epoch = -1;
    o->base_sequence = -1;
}

floe_batch_builder_t *floe_batch_builder_new(const floe_batch_opts_t *opts)
{
    floe_batch_builder_t *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    if (opts) b->opts = *opts;
    else
        floe_batch_opts_default(&b->opts);
    return b;
}

void floe_batch_builder_free(floe_batch_builder_t *b)
{
    if (!b) return;
    floe_buf_free(&b->recs);
    floe_buf_free(&b->zbuf);
    free(b);
}

void floe_batch_builder_reset(floe_batch_builder_t *b, const floe_batch_opts_t *opts)
{
    if (opts) b->opts = *opts;
    floe_buf_reset(&b->recs);
    b->count = 0;
}

size_t floe_batch_builder_count(const floe_batch_builder_t *b)
{
    return b->count;
}
size_t floe_batch_builder_records_size(const floe_batch_builder_t *b)
{
    return b->recs.len;
}

static size_t varint_len(int32_t v)
{
    return floe_uvarint_len(floe_zigzag32(v));
}
static size_t varlong_len(int64_t v)
{
    return floe_uvarint_len(floe_zigzag64(v));
}

static int put_varint(floe_buf_t *o, int32_t v)
{
    uint8_t tmp[FLOE_VARINT64_MAX_LEN];
    return floe_buf_append(o, tmp, floe_varint_encode(tmp, v));
}

static int put_varlong(floe_buf_t *o, int64_t v)
{
    uint8_t tmp[FLOE_VARINT64_MAX_LEN];
    return floe_buf_append(o, tmp, floe_varlong_encode(tmp, v));
}

static int put_bytes(floe_buf_t *o, const floe_slice_t *s)
{
    if (!s) return put_varint(o, -1);
    if (put_varint(o, (int32_t)s->len) != 0) return -1;
    return floe_buf_append(o, s->ptr, s->len);
}

int floe_batch_builder_add(floe_batch_builder_t *b, int64_t timestamp_ms, const floe_slice_t *key,
                           const floe_slice_t *value, const floe_record_header_t *headers,
                           size_t nheaders, floe_err_t *err)
{
    if (b->count >= (size_t)INT32_MAX - 1)
        return floe_err_set(err, FLOE_ERANGE, "too many records in one batch");
    const size_t lim = (size_t)INT32_MAX / 2;
    if ((key && key->len > lim) || (value && value->len > lim) || nheaders > lim)
        return floe_err_set(err, FLOE_ERANGE, "record too large");
    if (b->count == 0) {
        b->first_ts = timestamp_ms;
        b->max_ts = timestamp_ms;
    }
    if (timestamp_ms > b->max_ts) b->max_ts = timestamp_ms;
    int64_t ts_delta = (int64_t)((uint64_t)timestamp_ms - (uint64_t)b->first_ts);
    int32_t off_delta = (int32_t)b->count;
    /* body length first, so the record can be written in one pass */
    size_t body = 1 + varlong_len(ts_delta) + varint_len(off_delta);
    body += key ? varint_len((int32_t)key->len) + key->len : 1;
    body += value ? varint_len((int32_t)value->len) + value->len : 1;
    body += varint_len((int32_t)nheaders);
    for (size_t i = 0; i < nheaders; i++) {
        const floe_record_header_t *h = &headers[i];
        if (h->key.len > lim || h->value.len > lim)
            return floe_err_set(err, FLOE_ERANGE, "record header too large");
        body += varint_len((int32_t)h->key.len) + h->key.len;
        body += h->value_null ? 1 : varint_len((int32_t)h->value.len) + h->value.len;
    }
    if (body > lim) return floe_err_set(err, FLOE_ERANGE, "record too large");
    size_t mark = b->recs.len;
    int rc = put_varint(&b->recs, (int32_t)body);
    rc |= floe_buf_append_u8(&b->recs, 0);
    rc |= put_varlong(&b->recs, ts_delta);
    rc |= put_varint(&b->recs, off_delta);
    rc |= put_bytes(&b->recs, key);
    rc |= put_bytes(&b->recs, value);
    rc |= put_varint(&b->recs, (int32_t)nheaders);
    for (size_t i = 0; i < nheaders; i++) {
        rc |= put_bytes(&b->recs, &headers[i].key);
        rc |= put_bytes(&b->recs, headers[i].value_null ? NULL : &headers[i].value);
    }
    if (rc != 0) {
        b->recs.len = mark;
        return floe_err_set(err, FLOE_ENOMEM, "out of memory building a record batch");
    }
    b->count++;
    return 0;
}

int floe_batch_builder_finish(floe_batch_builder_t *b, floe_buf_t *out, floe_err_t *err)
{
    if (b->count == 0) return floe_err_set(err, FLOE_EINVAL, "empty record batch");
    const floe_batch_opts_t *o = &b->opts;
    const uint8_t *body = b->recs.data;
    size_t body_len = b->recs.len;
    if (o->compression != FLOE_COMPRESSION_NONE) {
        floe_buf_reset(&b->zbuf);
        if (floe_kcodec_compress(o->compression, o->compression_level, b->recs.data, b->recs.len,
                                 &b->zbuf, err) != 0)
            return -1;
        body = b->zbuf.data;
        body_len = b->zbuf.len;
    }
    size_t total = FLOE_BATCH_HDR_SIZE + body_len;
    if (total - FLOE_BATCH_LOG_OVERHEAD > (size_t)INT32_MAX)
        return floe_err_set(err, FLOE_ERANGE, "record batch too large");
    if (floe_buf_reserve(out, total) != 0)
        return floe_err_set(err, FLOE_ENOMEM, "out of memory building a record batch");
    uint8_t *h = out->data + out->len;
    int16_t attr = (int16_t)(o->compression & FLOE_BATCH_ATTR_COMPRESSION_MASK);
    if (o->log_append_time) attr |= FLOE_BATCH_ATTR_LOG_APPEND_TIME;
    if (o->transactional) attr |= FLOE_BATCH_ATTR_TRANSACTIONAL;
    if (o->control) attr |= FLOE_BATCH_ATTR_CONTROL;
    floe_wr_be64(h, (uint64_t)o->base_offset);
    floe_wr_be32(h + 8, (uint32_t)(total - FLOE_BATCH_LOG_OVERHEAD));
    floe_wr_be32(h + 12, (uint32_t)o->partition_leader_epoch);
    h[16] = FLOE_BATCH_MAGIC;
    h[21] = (uint8_t)((uint16_t)attr >> 8);
    h[22] = (uint8_t)attr;
    floe_wr_be32(h + 23, (uint32_t)(b->count - 1));
    floe_wr_be64(h + 27, (uint64_t)b->first_ts);
    floe_wr_be64(h + 35, (uint64_t)b->max_ts);
    floe_wr_be64(h + 43, (uint64_t)o->producer_id);
    h[51] = (uint8_t)((uint16_t)o->producer_epoch >> 8);
    h[52] = (uint8_t)o->producer_epoch;
    floe_wr_be32(h + 53, (uint32_t)o->base_sequence);
    floe_wr_be32(h + 57, (uint32_t)b->count);
    memcpy(h + FLOE_BATCH_HDR_SIZE, body, body_len);
    floe_batch_update_crc(h, total);
    out->len += total;
    return 0;
}
