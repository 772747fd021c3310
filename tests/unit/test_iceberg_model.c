/* Iceberg model: bucket hash vectors and single-value serialization from
 * the spec's appendices, transforms, spec parsing, partition paths, schema
 * evolution, metadata JSON round trips, updates and requirements. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "iceberg/metadata.h"

static floe_ice_value_t vi(floe_ice_kind_t k, int32_t i)
{
    floe_ice_value_t v;
    memset(&v, 0, sizeof v);
    v.kind = k;
    v.v.i = i;
    return v;
}

static floe_ice_value_t vl(floe_ice_kind_t k, int64_t l)
{
    floe_ice_value_t v;
    memset(&v, 0, sizeof v);
    v.kind = k;
    v.v.l = l;
    return v;
}

static int32_t hash_of(const floe_ice_value_t *v)
{
    int32_t h = 0;
    floe_err_t e;
    CHECK(floe_ice_bucket_hash(v, &h, &e) == 0);
    return h;
}

/* Spec Appendix B: "32-bit Hash Requirements" test values. */
static void bucket_hash_spec_vectors(void)
{
    floe_ice_value_t v = vi(FLOE_ICE_INT, 34);
    CHECK_EQ(hash_of(&v), 2017239379);
    v = vl(FLOE_ICE_LONG, 34);
    CHECK_EQ(hash_of(&v), 2017239379);
    floe_ice_value_t d;
    CHECK(floe_ice_value_set_decimal64(&d, 1420, 2) == 0); /* 14.20 */
    CHECK_EQ(d.len, 2);
    CHECK_EQ(hash_of(&d), -500754589);
    floe_ice_value_clear(&d);
    v = vi(FLOE_ICE_DATE, floe_ice_days_from_civil(2017, 11, 16));
    CHECK_EQ(v.v.i, 17486);
    CHECK_EQ(hash_of(&v), -653330422);
    v = vl(FLOE_ICE_TIME, (22LL * 3600 + 31 * 60 + 8) * 1000000);
    CHECK_EQ(hash_of(&v), -662762989);
    int64_t ts = ((int64_t)17486 * 86400 + 22 * 3600 + 31 * 60 + 8) * 1000000;
    v = vl(FLOE_ICE_TIMESTAMP, ts);
    CHECK_EQ(hash_of(&v), -2047944441);
    v = vl(FLOE_ICE_TIMESTAMPTZ, ts); /* 2017-11-16T14:31:08-08:00 */
    CHECK_EQ(hash_of(&v), -2047944441);
    floe_ice_value_t s;
    CHECK(floe_ice_value_set_bytes(&s, FLOE_ICE_STRING, "iceberg", 7) == 0);
    CHECK_EQ(hash_of(&s), 1210000089);
    floe_ice_value_clear(&s);
    static const uint8_t uuid[16] = {0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd,
                                     0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7, 0x85, 0xe7};
    CHECK(floe_ice_value_set_bytes(&s, FLOE_ICE_UUID, uuid, 16) == 0);
    CHECK_EQ(hash_of(&s), 1488055340);
    floe_ice_value_clear(&s);
    static const uint8_t b4[4] = {0, 1, 2, 3};
    CHECK(floe_ice_value_set_bytes(&s, FLOE_ICE_FIXED, b4, 4) == 0);
    CHECK_EQ(hash_of(&s), -188683207);
    floe_ice_value_clear(&s);
    CHECK(floe_ice_value_set_bytes(&s, FLOE_ICE_BINARY, b4, 4) == 0);
    CHECK_EQ(hash_of(&s), -188683207);
    floe_ice_value_clear(&s);
    floe_ice_value_t f = {.kind = FLOE_ICE_FLOAT, .v.f = 1.0f};
    CHECK_EQ(hash_of(&f), -142385009);
    floe_ice_value_t g = {.kind = FLOE_ICE_DOUBLE, .v.d = 1.0};
    CHECK_EQ(hash_of(&g), -142385009);
    /* bucket[N] = (hash & MAX_INT) % N */
    floe_ice_transform_t t = {FLOE_ICE_T_BUCKET, 16};
    floe_ice_type_t *it = floe_ice_type_prim(FLOE_ICE_INT);
    floe_ice_value_t out;
    floe_err_t e;
    v = vi(FLOE_ICE_INT, 34);
    CHECK(floe_ice_transform_apply(t, it, &v, &out, &e) == 0);
    CHECK_EQ(out.v.i, (2017239379 & 0x7fffffff) % 16);
    floe_ice_type_free(it);
}

static void check_ser(const floe_ice_value_t *v, const uint8_t *want, size_t n)
{
    floe_buf_t b = FLOE_BUF_INIT;
    floe_err_t e;
    CHECK(floe_ice_value_serialize(v, &b, &e) == 0);
    CHECK_EQ(b.len, n);
    CHECK(b.len == n && memcmp(b.data, want, n) == 0);
    floe_buf_free(&b);
}

/* Spec Appendix D: binary single-value serialization. */
static void single_value_serialization(void)
{
    floe_ice_value_t v = {.kind = FLOE_ICE_BOOLEAN, .v.b = true};
    check_ser(&v, (const uint8_t *)"\x01", 1);
    v = vi(FLOE_ICE_INT, 34);
    check_ser(&v, (const uint8_t *)"\x22\x00\x00\x00", 4);
    v = vl(FLOE_ICE_LONG, -2);
    check_ser(&v, (const uint8_t *)"\xfe\xff\xff\xff\xff\xff\xff\xff", 8);
    v = (floe_ice_value_t){.kind = FLOE_ICE_FLOAT, .v.f = 1.0f};
    check_ser(&v, (const uint8_t *)"\x00\x00\x80\x3f", 4);
    v = (floe_ice_value_t){.kind = FLOE_ICE_DOUBLE, .v.d = 1.0};
    check_ser(&v, (const uint8_t *)"\x00\x00\x00\x00\x00\x00\xf0\x3f", 8);
    v = vi(FLOE_ICE_DATE, 17486);
    check_ser(&v, (const uint8_t *)"\x4e\x44\x00\x00", 4);
    floe_ice_value_t d;
    CHECK(floe_ice_value_set_decimal64(&d, 1420, 2) == 0);
    check_ser(&d, (const uint8_t *)"\x05\x8c", 2);
    floe_ice_value_clear(&d);
    CHECK(floe_ice_value_set_decimal64(&d, -1, 2) == 0);
    check_ser(&d, (const uint8_t *)"\xff", 1);
    floe_ice_value_clear(&d);
    CHECK(floe_ice_value_set_decimal64(&d, -128, 0) == 0);
    check_ser(&d, (const uint8_t *)"\x80", 1);
    floe_ice_value_clear(&d);
    CHECK(floe_ice_value_set_decimal64(&d, 128, 0) == 0);
    check_ser(&d, (const uint8_t *)"\x00\x80", 2);
    CHECK(floe_ice_value_decimal(&d) == 128);
    floe_ice_value_clear(&d);
    CHECK(floe_ice_value_set_bytes(&d, FLOE_ICE_STRING, "iceberg", 7) == 0);
    check_ser(&d, (const uint8_t *)"iceberg", 7);
    /* round trip + length checks */
    floe_ice_type_t *st = floe_ice_type_prim(FLOE_ICE_STRING),
                    *lt = floe_ice_type_prim(FLOE_ICE_LONG);
    floe_ice_value_t back;
    floe_err_t e;
    CHECK(floe_ice_value_deserialize(st, (const uint8_t *)"iceberg", 7, &back, &e) == 0);
    CHECK(floe_ice_value_eq(&back, &d));
    floe_ice_value_clear(&back);
    CHECK(floe_ice_value_deserialize(lt, (const uint8_t *)"abc", 3, &back, &e) == -1);
    CHECK_EQ(e.code, FLOE_ECORRUPT);
    floe_ice_value_clear(&d);
    floe_ice_type_free(st);
    floe_ice_type_free(lt);
}

static void transforms(void)
{
    floe_err_t e;
    floe_ice_value_t out;
    floe_ice_type_t *it = floe_ice_type_prim(FLOE_ICE_INT),
                    *tt = floe_ice_type_prim(FLOE_ICE_TIMESTAMP);
    floe_ice_type_t *st = floe_ice_type_prim(FLOE_ICE_STRING), *dt = floe_ice_type_decimal(9, 2);
    floe_ice_transform_t t;
    /* truncate: floor for negatives */
    CHECK(floe_ice_transform_parse("truncate[10]", &t, &e) == 0);
    floe_ice_value_t v = vi(FLOE_ICE_INT, -1);
    CHECK(floe_ice_transform_apply(t, it, &v, &out, &e) == 0);
    CHECK_EQ(out.v.i, -10);
    v = vi(FLOE_ICE_INT, 15);
    CHECK(floe_ice_transform_apply(t, it, &v, &out, &e) == 0);
    CHECK_EQ(out.v.i, 10);
    floe_ice_value_t dv;
    CHECK(floe_ice_value_set_decimal64(&dv, 1065, 2) == 0); /* 10.65 -> 10.50 */
    CHECK(floe_ice_transform_apply(t, dt, &dv, &out, &e) == 0);
    CHECK(floe_ice_value_decimal(&out) == 1060);
    floe_ice_value_clear(&out);
    floe_ice_value_clear(&dv);
    /* string truncation counts code points */
    t.param = 3;
    floe_ice_value_t sv;
    CHECK(floe_ice_value_set_bytes(&sv, FLOE_ICE_STRING, "\xc3\xa9t\xc3\xa9s", 7) == 0);
    CHECK(floe_ice_transform_apply(t, st, &sv, &out, &e) == 0);
    CHECK_EQ(out.len, 5);
    floe_ice_value_clear(&out);
    floe_ice_value_clear(&sv);
    /* time transforms, including before the epoch */
    int64_t ts = ((int64_t)17486 * 86400 + 22 * 3600 + 31 * 60 + 8) * 1000000;
    v = vl(FLOE_ICE_TIMESTAMP, ts);
    CHECK(floe_ice_transform_parse("year", &t, &e) == 0);
    CHECK(floe_ice_transform_apply(t, tt, &v, &out, &e) == 0);
    CHECK_EQ(out.v.i, 47);
    floe_buf_t b = FLOE_BUF_INIT;
    floe_ice_transform_human(t, &out, &b);
    CHECK(b.len == 4 && memcmp(b.data, "2017", 4) == 0);
    CHECK(floe_ice_transform_parse("month", &t, &e) == 0);
    CHECK(floe_ice_transform_apply(t, tt, &v, &out, &e) == 0);
    CHECK_EQ(out.v.i, 47 * 12 + 10);
    b.len = 0;
    floe_ice_transform_human(t, &out, &b);
    CHECK_STR(floe_buf_cstr(&b), "2017-11");
    CHECK(floe_ice_transform_parse("day", &t, &e) == 0);
    CHECK(floe_ice_transform_apply(t, tt, &v, &out, &e) == 0);
    CHECK_EQ(out.kind, FLOE_ICE_DATE);
    CHECK_EQ(out.v.i, 17486);
    b.len = 0;
    floe_ice_transform_human(t, &out, &b);
    CHECK_STR(floe_buf_cstr(&b), "2017-11-16");
    CHECK(floe_ice_transform_parse("hour", &t, &e) == 0);
    CHECK(floe_ice_transform_apply(t, tt, &v, &out, &e) == 0);
    CHECK_EQ(out.v.i, 17486 * 24 + 22);
    b.len = 0;
    floe_ice_transform_human(t, &out, &b);
    CHECK_STR(floe_buf_cstr(&b), "2017-11-16-22");
    v = vl(FLOE_ICE_TIMESTAMP, -1); /* 1969-12-31T23:59:59.999999 */
    CHECK(floe_ice_transform_apply(t, tt, &v, &out, &e) == 0);
    CHECK_EQ(out.v.i, -1);
    CHECK(floe_ice_transform_parse("day", &t, &e) == 0);
    CHECK(floe_ice_transform_apply(t, tt, &v, &out, &e) == 0);
    CHECK_EQ(out.v.i, -1);
    CHECK(floe_ice_transform_parse("month", &t, &e) == 0);
    CHECK(floe_ice_transform_apply(t, tt, &v, &out, &e) == 0);
    CHECK_EQ(out.v.i, -1);
    b.len = 0;
    floe_ice_transform_human(t, &out, &b);
    CHECK_STR(floe_buf_cstr(&b), "1969-12");
    /* void, nulls, refusals */
    CHECK(floe_ice_transform_parse("void", &t, &e) == 0);
    v = vi(FLOE_ICE_INT, 5);
    CHECK(floe_ice_transform_apply(t, it, &v, &out, &e) == 0);
    CHECK(out.is_null);
    CHECK(floe_ice_transform_parse("hour", &t, &e) == 0);
    CHECK(floe_ice_transform_apply(t, it, &v, &out, &e) == -1);
    CHECK(floe_ice_transform_parse("bucket[0]", &t, &e) == -1);
    CHECK(floe_ice_transform_parse("frobnicate", &t, &e) == -1);
    floe_buf_free(&b);
    floe_ice_type_free(it);
    floe_ice_type_free(tt);
    floe_ice_type_free(st);
    floe_ice_type_free(dt);
}

/* id 1 region string, 2 ts timestamptz, 3 user_id long, 4 email string,
 * 5 info struct<6 city string>, 7 tags list<8 string>, 9 m map<10 string, 11 int> */
static floe_ice_schema_t *sample_schema(void)
{
    floe_ice_type_t *root = floe_ice_type_struct();
    floe_ice_struct_add(root, 1, "region", true, floe_ice_type_prim(FLOE_ICE_STRING), NULL);
    floe_ice_struct_add(root, 2, "ts", false, floe_ice_type_prim(FLOE_ICE_TIMESTAMPTZ), NULL);
    floe_ice_struct_add(root, 3, "user_id", true, floe_ice_type_prim(FLOE_ICE_LONG), "user");
    floe_ice_struct_add(root, 4, "email", false, floe_ice_type_prim(FLOE_ICE_STRING), NULL);
    floe_ice_type_t *info = floe_ice_type_struct();
    floe_ice_struct_add(info, 6, "city", false, floe_ice_type_prim(FLOE_ICE_STRING), NULL);
    floe_ice_struct_add(root, 5, "info", false, info, NULL);
    floe_ice_struct_add(root, 7, "tags", false,
                        floe_ice_type_list(8, false, floe_ice_type_prim(FLOE_ICE_STRING)), NULL);
    floe_ice_struct_add(root, 9, "m", false,
                        floe_ice_type_map(10, floe_ice_type_prim(FLOE_ICE_STRING), 11, true,
                                          floe_ice_type_prim(FLOE_ICE_INT)),
                        NULL);
    floe_ice_struct_add(root, 12, "price", false, floe_ice_type_decimal(9, 2), NULL);
    floe_ice_struct_add(root, 13, "h", false, floe_ice_type_fixed(16), NULL);
    floe_ice_schema_t *s = floe_ice_schema_new(0, root);
    s->identifier_ids = malloc(sizeof(int32_t));
    s->identifier_ids[0] = 3;
    s->n_identifier_ids = 1;
    return s;
}

static void spec_parse_and_paths(void)
{
    floe_ice_schema_t *s = sample_schema();
    floe_err_t e;
    CHECK(floe_ice_schema_validate(s, &e) == 0);
    int32_t last = 999;
    floe_ice_spec_t *sp = floe_ice_spec_parse(
        s, "region, day(ts), bucket(user_id, 16), truncate(email, 5), info.city", 0, &last, &e);
    CHECK(sp != NULL);
    if (!sp) {
        floe_ice_schema_free(s);
        return;
    }
    CHECK_EQ(sp->nfields, 5);
    CHECK_EQ(last, 1004);
    CHECK_STR(sp->fields[0].name, "region");
    CHECK_STR(sp->fields[1].name, "ts_day");
    CHECK_STR(sp->fields[2].name, "user_id_bucket");
    CHECK_EQ(sp->fields[2].transform.param, 16);
    CHECK_STR(sp->fields[3].name, "email_trunc");
    CHECK_STR(sp->fields[4].name, "info_city");
    CHECK_EQ(sp->fields[4].source_id, 6);
    floe_ice_value_t vals[5];
    memset(vals, 0, sizeof vals);
    floe_ice_value_set_bytes(&vals[0], FLOE_ICE_STRING, "eu west", 7);
    vals[1] = vi(FLOE_ICE_DATE, 17486);
    vals[2] = vi(FLOE_ICE_INT, 3);
    vals[3].is_null = true;
    floe_ice_value_set_bytes(&vals[4], FLOE_ICE_STRING, "a/b", 3);
    floe_buf_t b = FLOE_BUF_INIT;
    CHECK(floe_ice_spec_partition_path(sp, vals, &b, &e) == 0);
    CHECK_STR(floe_buf_cstr(&b),
              "region=eu+west/ts_day=2017-11-16/user_id_bucket=3/email_trunc=null/info_city=a%2Fb");
    floe_buf_free(&b);
    floe_ice_value_clear(&vals[0]);
    floe_ice_value_clear(&vals[4]);
    floe_ice_type_t *pt = floe_ice_spec_partition_type(sp, s, &e);
    CHECK(pt && pt->nfields == 5 && pt->fields[1].type->kind == FLOE_ICE_DATE &&
          pt->fields[2].type->kind == FLOE_ICE_INT && pt->fields[1].id == 1001);
    floe_ice_type_free(pt);
    floe_ice_spec_free(sp);
    /* errors */
    last = 999;
    CHECK(floe_ice_spec_parse(s, "nosuch", 0, &last, &e) == NULL);
    CHECK(strstr(e.msg, "nosuch") != NULL);
    CHECK(floe_ice_spec_parse(s, "hour(region)", 0, &last, &e) == NULL);
    CHECK(floe_ice_spec_parse(s, "bucket(user_id)", 0, &last, &e) == NULL);
    CHECK(floe_ice_spec_parse(s, "day(ts", 0, &last, &e) == NULL);
    sp = floe_ice_spec_parse(s, "", 0, &last, &e);
    CHECK(sp && sp->nfields == 0);
    floe_ice_spec_free(sp);
    sp = floe_ice_spec_parse(s, "bucket(16, user_id), year(ts), void(email)", 0, &last, &e);
    CHECK(sp && sp->nfields == 3 && sp->fields[0].transform.param == 16 &&
          strcmp(sp->fields[2].name, "email_null") == 0);
    floe_ice_spec_free(sp);
    floe_ice_schema_free(s);
}

static void schema_evolution(void)
{
    floe_ice_schema_t *s = sample_schema();
    floe_err_t e;
    int32_t last = floe_ice_schema_max_id(s);
    CHECK_EQ(last, 13);
    floe_ice_type_t *nested = floe_ice_type_struct();
    floe_ice_struct_add(nested, 1, "x", false, floe_ice_type_prim(FLOE_ICE_INT), NULL);
    floe_ice_struct_add(nested, 2, "y", false,
                        floe_ice_type_list(3, false, floe_ice_type_prim(FLOE_ICE_INT)), NULL);
    CHECK(floe_ice_schema_add_column(s, &last, NULL, "extra", nested, NULL, &e) == 0);
    CHECK_EQ(last, 17);
    const floe_ice_field_t *f = floe_ice_schema_find_name(s, "extra.y.element");
    CHECK(f && f->id == 17);
    CHECK(floe_ice_schema_add_column(s, &last, "info", "zip", floe_ice_type_prim(FLOE_ICE_STRING),
                                     NULL, &e) == 0);
    CHECK_EQ(last, 18);
    f = floe_ice_schema_find_name(s, "info.zip");
    CHECK(f && f->id == 18 && !f->required);
    CHECK(floe_ice_schema_add_column(s, &last, NULL, "region", floe_ice_type_prim(FLOE_ICE_INT),
                                     NULL, &e) == -1);
    CHECK(floe_ice_schema_add_column(s, &last, "region", "x", floe_ice_type_prim(FLOE_ICE_INT),
                                     NULL, &e) == -1);
    CHECK_EQ(last, 18);
    /* promotions */
    floe_ice_type_t *lt = floe_ice_type_prim(FLOE_ICE_LONG), *d12 = floe_ice_type_decimal(12, 2),
                    *d12s3 = floe_ice_type_decimal(12, 3),
                    *st = floe_ice_type_prim(FLOE_ICE_STRING);
    CHECK(floe_ice_schema_promote(s, "m.value", lt, &e) == 0);
    CHECK(floe_ice_schema_find(s, 11)->type->kind == FLOE_ICE_LONG);
    CHECK(floe_ice_schema_promote(s, "price", d12, &e) == 0);
    CHECK_EQ(floe_ice_schema_find(s, 12)->type->precision, 12);
    CHECK(floe_ice_schema_promote(s, "price", d12s3, &e) == -1);
    CHECK(strstr(e.msg, "incompatible") != NULL);
    CHECK(floe_ice_schema_promote(s, "user_id", st, &e) == -1);
    CHECK(floe_ice_schema_promote(s, "info", lt, &e) == -1);
    floe_ice_type_free(lt);
    floe_ice_type_free(d12);
    floe_ice_type_free(d12s3);
    floe_ice_type_free(st);
    /* optional, rename */
    CHECK(floe_ice_schema_make_optional(s, "region", &e) == 0);
    CHECK(!floe_ice_schema_find(s, 1)->required);
    CHECK(floe_ice_schema_make_optional(s, "user_id", &e) == -1); /* identifier */
    CHECK(floe_ice_schema_rename(s, "info.city", "town", &e) == 0);
    CHECK(floe_ice_schema_find_name(s, "info.town")->id == 6);
    CHECK(floe_ice_schema_rename(s, "email", "region", &e) == -1);
    CHECK(floe_ice_schema_validate(s, &e) == 0);
    char name[64];
    CHECK_STR(floe_ice_schema_field_name(s, 17, name, sizeof name), "extra.y.element");
    floe_ice_schema_free(s);
}

static void metadata_roundtrip_and_updates(void)
{
    floe_ice_schema_t *s = sample_schema();
    floe_err_t e;
    int32_t last = 999;
    floe_ice_spec_t *sp = floe_ice_spec_parse(s, "region, hour(ts)", 0, &last, &e);
    floe_ice_props_t props = {0, NULL};
    floe_ice_props_set(&props, "owner", "floe");
    floe_ice_metadata_t *m = floe_ice_metadata_new_table(s, sp, NULL, "/tmp/t", &props, &e);
    CHECK(m != NULL);
    floe_ice_props_clear(&props);
    if (!m) {
        floe_ice_schema_free(s);
        floe_ice_spec_free(sp);
        return;
    }
    CHECK_EQ(m->last_column_id, 13);
    CHECK_EQ(m->last_partition_id, 1001);
    /* add a snapshot and set main */
    floe_ice_snapshot_t snap = {.snapshot_id = 42,
                                .parent_id = -1,
                                .sequence_number = 1,
                                .timestamp_ms = 1700000000000,
                                .manifest_list = "/tmp/t/metadata/snap-42.avro",
                                .operation = "append",
                                .schema_id = 0};
    floe_ice_props_set(&snap.summary, "added-data-files", "1");
    floe_ice_update_t u = {.kind = FLOE_ICE_UP_ADD_SNAPSHOT, .snapshot = &snap};
    CHECK(floe_ice_update_apply(m, &u, &e) == 0);
    floe_ice_update_t r = {.kind = FLOE_ICE_UP_SET_SNAPSHOT_REF,
                           .ref = {.name = "main",
                                   .snapshot_id = 42,
                                   .max_ref_age_ms = -1,
                                   .max_snapshot_age_ms = -1,
                                   .min_snapshots_to_keep = -1}};
    CHECK(floe_ice_update_apply(m, &r, &e) == 0);
    CHECK_EQ(m->current_snapshot_id, 42);
    CHECK_EQ(m->nsnapshot_log, 1);
    CHECK_EQ(m->last_sequence_number, 1);
    /* sequence number must grow */
    snap.snapshot_id = 43;
    CHECK(floe_ice_update_apply(m, &u, &e) == -1);
    floe_ice_props_clear(&snap.summary);
    /* evolve the schema and the spec */
    floe_ice_schema_t *s2 = floe_ice_schema_dup(s);
    int32_t lc = m->last_column_id;
    floe_ice_schema_add_column(s2, &lc, NULL, "added", floe_ice_type_prim(FLOE_ICE_DOUBLE), NULL,
                               &e);
    floe_ice_update_t as = {.kind = FLOE_ICE_UP_ADD_SCHEMA, .schema = s2};
    floe_ice_update_t cs = {.kind = FLOE_ICE_UP_SET_CURRENT_SCHEMA, .id = -1};
    CHECK(floe_ice_update_apply(m, &as, &e) == 0);
    CHECK(floe_ice_update_apply(m, &cs, &e) == 0);
    CHECK_EQ(m->current_schema_id, 1);
    CHECK_EQ(m->last_column_id, 14);
    /* adding an equal schema again reuses its id */
    CHECK(floe_ice_update_apply(m, &as, &e) == 0);
    CHECK_EQ(m->nschemas, 2);
    int32_t lp = m->last_partition_id;
    floe_ice_spec_t *sp2 = floe_ice_spec_parse(s2, "hour(ts), bucket(user_id, 8)", 0, &lp, &e);
    floe_ice_update_t asp = {.kind = FLOE_ICE_UP_ADD_SPEC, .spec = sp2};
    floe_ice_update_t ds = {.kind = FLOE_ICE_UP_SET_DEFAULT_SPEC, .id = -1};
    CHECK(floe_ice_update_apply(m, &asp, &e) == 0);
    CHECK(floe_ice_update_apply(m, &ds, &e) == 0);
    const floe_ice_spec_t *dsp = floe_ice_metadata_default_spec(m);
    CHECK(dsp && dsp->spec_id == 1 && dsp->nfields == 2);
    CHECK_EQ(dsp->fields[0].field_id, 1001); /* hour(ts) keeps its id */
    CHECK_EQ(dsp->fields[1].field_id, 1002);
    CHECK_EQ(m->last_partition_id, 1002);
    floe_ice_update_t sprops = {.kind = FLOE_ICE_UP_SET_PROPERTIES};
    floe_ice_props_set(&sprops.props, "k", "v");
    CHECK(floe_ice_update_apply(m, &sprops, &e) == 0);
    floe_ice_props_clear(&sprops.props);

    /* JSON round trip */
    char *js = floe_ice_metadata_to_json(m, &e);
    CHECK(js != NULL);
    floe_ice_metadata_t *m2 = floe_ice_metadata_from_json(js, strlen(js), &e);
    CHECK(m2 != NULL);
    if (m2) {
        char *js2 = floe_ice_metadata_to_json(m2, &e);
        CHECK_STR(js2, js);
        free(js2);
        CHECK_EQ(m2->current_snapshot_id, 42);
        CHECK(floe_ice_schema_same(m2->schemas[1], m->schemas[1]));
        CHECK_STR(floe_ice_props_get(&m2->properties, "owner"), "floe");
        CHECK_STR(floe_ice_props_get(&floe_ice_metadata_current_snapshot(m2)->summary,
                                     "added-data-files"),
                  "1");
        floe_ice_metadata_t *m3 = floe_ice_metadata_dup(m2);
        char *js3 = floe_ice_metadata_to_json(m3, &e);
        CHECK_STR(js3, js);
        free(js3);
        floe_ice_metadata_free(m3);
    }
    /* requirements */
    floe_ice_req_t rq = {.kind = FLOE_ICE_REQ_ASSERT_REF_SNAPSHOT_ID, .ref = "main", .value = 42};
    CHECK(floe_ice_req_check(&rq, m, &e) == 0);
    rq.value = 41;
    CHECK(floe_ice_req_check(&rq, m, &e) == -1);
    CHECK_EQ(e.code, FLOE_ECONFLICT);
    rq = (floe_ice_req_t){.kind = FLOE_ICE_REQ_ASSERT_CURRENT_SCHEMA_ID, .value = 1};
    CHECK(floe_ice_req_check(&rq, m, &e) == 0);
    rq.kind = FLOE_ICE_REQ_ASSERT_CREATE;
    CHECK(floe_ice_req_check(&rq, m, &e) == -1);
    CHECK(floe_ice_req_check(&rq, NULL, &e) == 0);
    rq.kind = FLOE_ICE_REQ_ASSERT_TABLE_UUID;
    memcpy(rq.uuid, m->table_uuid, 37);
    CHECK(floe_ice_req_check(&rq, m, &e) == 0);
    /* REST JSON of updates and requirements */
    floe_buf_t b = FLOE_BUF_INIT;
    CHECK(floe_ice_update_to_json(&asp, &b, &e) == 0);
    floe_ice_update_t back;
    CHECK(floe_ice_update_from_json((const char *)b.data, b.len, &back, &e) == 0);
    CHECK(back.kind == FLOE_ICE_UP_ADD_SPEC && back.spec && back.spec->nfields == 2);
    floe_ice_update_clear(&back);
    b.len = 0;
    CHECK(floe_ice_update_to_json(&r, &b, &e) == 0);
    CHECK(floe_ice_update_from_json((const char *)b.data, b.len, &back, &e) == 0);
    CHECK(back.kind == FLOE_ICE_UP_SET_SNAPSHOT_REF && back.ref.snapshot_id == 42 &&
          strcmp(back.ref.name, "main") == 0);
    floe_ice_update_clear(&back);
    b.len = 0;
    rq = (floe_ice_req_t){.kind = FLOE_ICE_REQ_ASSERT_REF_SNAPSHOT_ID, .ref = "main", .value = -1};
    CHECK(floe_ice_req_to_json(&rq, &b, &e) == 0);
    CHECK_STR(floe_buf_cstr(&b),
              "{\"type\":\"assert-ref-snapshot-id\",\"ref\":\"main\",\"snapshot-id\":null}");
    floe_ice_req_t rq2;
    CHECK(floe_ice_req_from_json((const char *)b.data, b.len, &rq2, &e) == 0);
    CHECK(rq2.kind == FLOE_ICE_REQ_ASSERT_REF_SNAPSHOT_ID && rq2.value == -1);
    floe_buf_free(&b);
    free(js);
    floe_ice_metadata_free(m2);
    floe_ice_metadata_free(m);
    floe_ice_schema_free(s);
    floe_ice_schema_free(s2);
    floe_ice_spec_free(sp);
    floe_ice_spec_free(sp2);
}

static void metadata_v1_and_bad_input(void)
{
    const char *v1 =
        "{\"format-version\":1,\"location\":\"/x\",\"last-updated-ms\":1,\"last-column-id\":2,"
        "\"schema\":{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"a\",\"required\":true,"
        "\"type\":\"int\"},"
        "{\"id\":2,\"name\":\"b\",\"required\":false,\"type\":\"decimal(10, 2)\"}]},"
        "\"partition-spec\":[{\"name\":\"a\",\"transform\":\"identity\",\"source-id\":1}],"
        "\"properties\":{},\"current-snapshot-id\":-1,\"snapshots\":[]}";
    floe_err_t e;
    floe_ice_metadata_t *m = floe_ice_metadata_from_json(v1, strlen(v1), &e);
    CHECK(m != NULL);
    if (m) {
        CHECK_EQ(m->format_version, 1);
        CHECK_EQ(m->nspecs, 1);
        CHECK_EQ(m->specs[0]->fields[0].field_id, 1000);
        CHECK_EQ(floe_ice_metadata_current_schema(m)->root->fields[1].type->precision, 10);
        floe_ice_metadata_free(m);
    }
    const char *bad[] = {
        "",
        "[]",
        "{\"format-version\":3}",
        "{\"format-version\":2,\"table-uuid\":\"x\"}",
        "{\"format-version\":1,\"location\":\"/x\",\"last-updated-ms\":1,\"last-column-id\":2,"
        "\"schema\":{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"a\",\"required\":true,"
        "\"type\":\"blob\"}]},"
        "\"partition-spec\":[]}",
        "{\"format-version\":1,\"location\":\"/x\",\"last-updated-ms\":1,\"last-column-id\":2,"
        "\"schema\":{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"a\",\"required\":true,"
        "\"type\":\"int\"},"
        "{\"id\":1,\"name\":\"b\",\"required\":true,\"type\":\"int\"}]},\"partition-spec\":[]}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        floe_err_clear(&e);
        CHECK(floe_ice_metadata_from_json(bad[i], strlen(bad[i]), &e) == NULL);
        CHECK(e.msg[0] != '\0');
    }
}

TEST_MAIN(RUN(bucket_hash_spec_vectors); RUN(single_value_serialization); RUN(transforms);
          RUN(spec_parse_and_paths); RUN(schema_evolution); RUN(metadata_roundtrip_and_updates);
          RUN(metadata_v1_and_bad_input))
