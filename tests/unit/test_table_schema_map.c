/* Shape <-> Iceberg schema: ids for new fields from last-column-id, seeded
 * buffers keep committed types and ids, long columns widen to new double
 * fields, incompatible kinds refused. */
#include <stdlib.h>

#include "iceberg/metadata.h"
#include "table/convert.h"
#include "table/schema_map.h"
#include "test.h"

static floe_conv_t *conv; /* when set, records go through it */

static int add(floe_rows_t *r, const char *json)
{
    floe_err_t e;
    if (conv) {
        static int64_t offset;
        floe_tmsg_t rec = {.kind = FLOE_TMSG_RECORD,
                           .offset = offset++,
                           .timestamp = 1,
                           .key_null = true,
                           .value = floe_slice_str(json)};
        floe_conv_stage_t st;
        return floe_conv_record(conv, 0, &rec, &st, &e);
    }
    floe_rows_begin(r);
    if (floe_rows_json(r, floe_rows_root(r), (const uint8_t *)json, strlen(json), &e) < 0 ||
        floe_rows_end(r, &e) < 0) {
        floe_rows_rollback(r);
        return -1;
    }
    return 0;
}

static floe_ice_schema_t *empty_schema(void)
{
    return floe_ice_schema_new(0, floe_ice_type_struct());
}

static void new_table_schema_from_shape(void)
{
    floe_rows_t *r = floe_rows_new(NULL);
    floe_err_t e;
    floe_conv_t *c = conv = floe_conv_new(r, FLOE_CONV_JSON, FLOE_CONV_STRING, &e);
    CHECK(c != NULL);
    CHECK_EQ(add(r, "{\"id\":1,\"u\":{\"name\":\"a\",\"tags\":[\"x\"]},\"amount\":2.5}"), 0);
    floe_ice_schema_t *s = empty_schema();
    int32_t last = 0;
    bool changed;
    CHECK_EQ(floe_tschema_merge(r, s, &last, false, &changed, &e), 0);
    CHECK(changed);
    CHECK_EQ(floe_ice_schema_validate(s, &e), 0);
    /* ids in shape order, each field before its subtree: _kafka 1,
     * partition..headers 2-6, headers key/value 7-8, id 9, u 10, name 11,
     * tags 12, element 13, amount 14 */
    CHECK_EQ(last, 14);
    CHECK_EQ(floe_ice_schema_find_name(s, "amount")->id, 14);
    CHECK_EQ(floe_ice_schema_find_name(s, "_kafka.headers.value")->id, 8);
    CHECK_EQ(floe_ice_schema_max_id(s), 14);
    const floe_ice_field_t *f = floe_ice_schema_find_name(s, "u.tags.element");
    CHECK(f && f->type->kind == FLOE_ICE_STRING && !f->required);
    f = floe_ice_schema_find_name(s, "_kafka.offset");
    CHECK(f && f->type->kind == FLOE_ICE_LONG && f->required);
    f = floe_ice_schema_find_name(s, "_kafka.headers");
    CHECK(f && f->type->kind == FLOE_ICE_MAP);
    f = floe_ice_schema_find_name(s, "_kafka.timestamp");
    CHECK(f && f->type->kind == FLOE_ICE_TIMESTAMPTZ);
    /* every shape node carries its id */
    floe_rnode_t *u = floe_rows_child(floe_rows_root(r), "u");
    CHECK_EQ(u->field_id, floe_ice_schema_find_name(s, "u")->id);
    CHECK_EQ(floe_rows_child(u, "tags")->kids[0]->field_id, 13);

    /* a later record adds a nested field: one new id, the rest unchanged */
    CHECK_EQ(add(r, "{\"u\":{\"city\":\"b\"}}"), 0);
    CHECK_EQ(floe_tschema_merge(r, s, &last, false, &changed, &e), 0);
    CHECK(changed);
    CHECK_EQ(last, 15);
    CHECK_EQ(floe_ice_schema_find_name(s, "u.city")->id, 15);
    CHECK_EQ(floe_tschema_merge(r, s, &last, false, &changed, &e), 0);
    CHECK(!changed);

    /* round trip through the schema JSON, then seed a new buffer from it */
    char *json = floe_ice_schema_to_json(s, &e);
    CHECK(json != NULL);
    floe_ice_schema_t *back = floe_ice_schema_from_json(json, strlen(json), &e);
    CHECK(back && floe_ice_schema_same(back, s));
    free(json);

    floe_rows_t *r2 = floe_rows_new(NULL);
    floe_conv_t *c2 = conv = floe_conv_new(r2, FLOE_CONV_JSON, FLOE_CONV_STRING, &e);
    CHECK_EQ(floe_tschema_seed(r2, back, &e), 0);
    /* amount is double in the table: an integer stays a double */
    CHECK_EQ(add(r2, "{\"amount\":3,\"id\":7}"), 0);
    floe_rnode_t *amount = floe_rows_child(floe_rows_root(r2), "amount");
    CHECK_EQ(amount->kind, FLOE_TK_DOUBLE);
    CHECK(floe_rcol_double(amount->col, 0) == 3.0);
    CHECK_EQ(floe_tschema_merge(r2, back, &last, false, &changed, &e), 0);
    CHECK(!changed);
    CHECK_EQ(amount->field_id, floe_ice_schema_find_name(s, "amount")->id);
    /* a string where the table has a long is a conflict at the row */
    CHECK_EQ(add(r2, "{\"id\":\"x\"}"), -1);
    floe_conv_free(c2);
    conv = NULL;
    floe_rows_free(r2);
    floe_ice_schema_free(back);
    floe_ice_schema_free(s);
    floe_conv_free(c);
    floe_rows_free(r);
}

/* A fraction in an optional long: the table field becomes a new double
 * field (fresh id, same place), reported by floe_tschema_widened; a buffer
 * still holding longs under a double field widens too; a required long
 * is refused. */
static void long_widens_to_new_double_field(void)
{
    floe_rows_t *r = floe_rows_new(NULL); /* widens in the buffer */
    floe_err_t e;
    floe_ice_schema_t *s = empty_schema();
    floe_ice_type_t *st = floe_ice_type_struct();
    floe_ice_struct_add(st, 4, "v", false, floe_ice_type_prim(FLOE_ICE_LONG), NULL);
    floe_ice_struct_add(s->root, 1, "n", false, floe_ice_type_prim(FLOE_ICE_LONG), NULL);
    floe_ice_struct_add(s->root, 2, "m", false, st, NULL);
    floe_ice_struct_add(s->root, 3, "l", false,
                        floe_ice_type_list(5, false, floe_ice_type_prim(FLOE_ICE_LONG)), NULL);
    CHECK_EQ(floe_tschema_seed(r, s, &e), 0);
    CHECK_EQ(add(r, "{\"n\":1,\"m\":{\"v\":2},\"l\":[3]}"), 0);
    CHECK_EQ(add(r, "{\"n\":1.5,\"m\":{\"v\":2.5},\"l\":[0.5]}"), 0);
    int32_t last = 5;
    bool changed;
    floe_ice_schema_t *w = floe_ice_schema_dup(s);
    CHECK_EQ(floe_tschema_merge(r, w, &last, false, &changed, &e), 0);
    CHECK(changed);
    CHECK_EQ(last, 8);
    const floe_ice_field_t *n = floe_ice_schema_find_name(w, "n");
    CHECK(n && n->type->kind == FLOE_ICE_DOUBLE && n->id > 5 && !n->required);
    CHECK(w->root->fields[0].id == n->id); /* same place */
    CHECK(floe_ice_schema_find_name(w, "m.v")->type->kind == FLOE_ICE_DOUBLE);
    CHECK(floe_ice_schema_find_name(w, "l.element")->type->kind == FLOE_ICE_DOUBLE);
    CHECK(floe_ice_schema_find(w, 1) == NULL && floe_ice_schema_find(w, 4) == NULL);
    CHECK_EQ(floe_rows_child(floe_rows_root(r), "n")->field_id, n->id);
    floe_twiden_t *wd = NULL;
    size_t nwd = 0;
    CHECK_EQ(floe_tschema_widened(s, w, &wd, &nwd), 0);
    CHECK_EQ(nwd, 3);
    bool saw[3] = {false, false, false};
    for (size_t i = 0; i < nwd; i++) {
        if (wd[i].from == 1) saw[0] = wd[i].to == n->id;
        if (wd[i].from == 4) saw[1] = wd[i].to == floe_ice_schema_find_name(w, "m.v")->id;
        if (wd[i].from == 5) saw[2] = wd[i].to == floe_ice_schema_find_name(w, "l.element")->id;
    }
    CHECK(saw[0] && saw[1] && saw[2]);
    free(wd);
    /* synced again: nothing new */
    CHECK_EQ(floe_tschema_merge(r, w, &last, false, &changed, &e), 0);
    CHECK(!changed);

    /* another buffer still holds longs: it widens to the table's doubles */
    floe_rows_opts_t o = {.widen_long_to_double = false};
    floe_rows_t *r2 = floe_rows_new(&o);
    CHECK_EQ(floe_tschema_seed(r2, s, &e), 0); /* seeded before the widening */
    CHECK_EQ(add(r2, "{\"n\":7,\"m\":{\"v\":8},\"l\":[9]}"), 0);
    CHECK_EQ(floe_tschema_merge(r2, w, &last, false, &changed, &e), 0);
    CHECK(!changed);
    floe_rnode_t *n2 = floe_rows_child(floe_rows_root(r2), "n");
    CHECK_EQ(n2->kind, FLOE_TK_DOUBLE);
    CHECK_EQ(n2->field_id, n->id);
    CHECK(floe_rcol_double(n2->col, 0) == 7.0);
    CHECK(floe_rcol_double(floe_rows_child(floe_rows_root(r2), "l")->kids[0]->col, 0) == 9.0);
    /* seeding widens as well */
    floe_rows_t *r3 = floe_rows_new(&o);
    CHECK_EQ(add(r3, "{\"n\":7}"), 0);
    CHECK_EQ(floe_tschema_seed(r3, w, &e), 0);
    CHECK_EQ(floe_rows_child(floe_rows_root(r3), "n")->kind, FLOE_TK_DOUBLE);
    floe_rows_free(r3);
    floe_rows_free(r2);
    floe_ice_schema_free(w);
    floe_ice_schema_free(s);
    floe_rows_free(r);

    /* a required long keeps its type */
    r = floe_rows_new(NULL);
    CHECK_EQ(add(r, "{\"n\":1.5}"), 0);
    s = empty_schema();
    floe_ice_struct_add(s->root, 1, "n", true, floe_ice_type_prim(FLOE_ICE_LONG), NULL);
    last = 1;
    CHECK_EQ(floe_tschema_merge(r, s, &last, false, &changed, &e), -1);
    CHECK(strstr(e.msg, "'n' is a required long") != NULL);
    floe_ice_schema_free(s);
    floe_rows_free(r);
}

static void incompatible_kinds_refused(void)
{
    floe_rows_t *r = floe_rows_new(NULL);
    floe_err_t e;
    CHECK_EQ(add(r, "{\"n\":1}"), 0);
    floe_ice_schema_t *s = empty_schema();
    floe_ice_struct_add(s->root, 1, "n", false, floe_ice_type_prim(FLOE_ICE_STRING), NULL);
    int32_t last = 1;
    bool changed;
    CHECK_EQ(floe_tschema_merge(r, s, &last, false, &changed, &e), -1);
    CHECK_EQ(e.code, FLOE_EINVAL);
    CHECK(strstr(e.msg, "'n' is string in the table but long in the records") != NULL);
    floe_ice_schema_free(s);

    /* a decimal column seeds a decimal node; a wider precision of the
     * records promotes the field in place (same id), another scale is
     * refused */
    s = empty_schema();
    floe_ice_struct_add(s->root, 1, "price", false, floe_ice_type_decimal(9, 2), NULL);
    floe_ice_struct_add(s->root, 2, "qty", false, floe_ice_type_prim(FLOE_ICE_INT), NULL);
    floe_rows_t *r2 = floe_rows_new(NULL);
    CHECK_EQ(floe_tschema_seed(r2, s, &e), 0);
    floe_rnode_t *price = floe_rows_child(floe_rows_root(r2), "price");
    floe_rnode_t *qty = floe_rows_child(floe_rows_root(r2), "qty");
    CHECK(price && price->kind == FLOE_TK_DECIMAL && price->precision == 9 && price->scale == 2);
    CHECK(qty && qty->kind == FLOE_TK_INT);
    CHECK_EQ(floe_rows_promote(r2, price, FLOE_TK_DECIMAL, 12, &e), 0);
    CHECK_EQ(floe_rows_promote(r2, qty, FLOE_TK_LONG, 0, &e), 0);
    last = 2;
    CHECK_EQ(floe_tschema_merge(r2, s, &last, false, &changed, &e), 0);
    CHECK(changed && last == 2);
    const floe_ice_field_t *f = floe_ice_schema_find(s, 1);
    CHECK(f && f->type->kind == FLOE_ICE_DECIMAL && f->type->precision == 12 &&
          f->type->scale == 2);
    CHECK((f = floe_ice_schema_find(s, 2)) && f->type->kind == FLOE_ICE_LONG);
    CHECK_EQ(floe_rows_promote(r2, qty, FLOE_TK_INT, 0, &e), -1); /* no narrowing */
    price->scale = 3;
    CHECK_EQ(floe_tschema_merge(r2, s, &last, false, &changed, &e), -1);
    CHECK(strstr(e.msg, "'price' is decimal(12, 2) in the table but decimal in the records") !=
          NULL);
    floe_rows_free(r2);
    floe_ice_schema_free(s);
    floe_rows_free(r);
}

TEST_MAIN(RUN(new_table_schema_from_shape); RUN(long_widens_to_new_double_field);
          RUN(incompatible_kinds_refused))
