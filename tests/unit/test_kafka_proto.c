/* Kafka codecs interpreted from messages.def: golden bytes both ways,
 * flexible versions and tagged fields, and hostile input. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka/proto.h"
#include "kafka/proto_gen.h"
#include "test.h"

static int bytes_eq(const floe_buf_t *b, const uint8_t *want, size_t n)
{
    return b->len == n && memcmp(b->data, want, n) == 0;
}

/* ApiVersions v3 as librdkafka sends it: header v2 with client id
 * "rdkafka", then compact strings for the software name and version. */
static void api_versions_v3_request_golden(void)
{
    static const uint8_t frame[] = {
        0x00, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x07,                 /* key 18 v3 corr 7 */
        0x00, 0x07, 'r',  'd',  'k',  'a',  'f',  'k',  'a', 0x00,      /* client id, no tags */
        0x0b, 'l',  'i',  'b',  'r',  'd',  'k',  'a',  'f', 'k',  'a', /* compact "librdkafka" */
        0x06, '2',  '.',  '0',  '.',  '2',  0x00};                      /* "2.0.2", no tags */
    floe_arena_t a;
    floe_arena_init(&a, 0, 1 << 20);
    floe_kreq_hdr_t h;
    const floe_kapi_t *api;
    void *body;
    floe_err_t err;
    CHECK_EQ(floe_kreq_decode(frame, sizeof frame, &a, &h, &api, &body, &err), 0);
    CHECK(api != NULL);
    CHECK_EQ(h.api_key, 18);
    CHECK_EQ(h.api_version, 3);
    CHECK_EQ(h.correlation_id, 7);
    CHECK_EQ(h.hdr_version, 2);
    CHECK_STR(h.client_id.ptr, "rdkafka");
    floe_k_api_versions_req_t *rq = body;
    CHECK_STR(rq->client_software_name.ptr, "librdkafka");
    CHECK_STR(rq->client_software_version.ptr, "2.0.2");
    /* and the header re-encodes byte for byte */
    floe_buf_t b = FLOE_BUF_INIT;
    CHECK_EQ(floe_kreq_hdr_encode(&h, &b), 0);
    CHECK(bytes_eq(&b, frame, 18));
    floe_buf_reset(&b);
    CHECK_EQ(floe_kproto_encode(api->req, 3, true, rq, &b, &err), 0);
    CHECK(bytes_eq(&b, frame + 18, sizeof frame - 18));
    floe_buf_free(&b);
    floe_arena_free(&a);
}

/* Metadata v1 (classic) and v9 (flexible) requests for topic "foo". */
static void metadata_request_classic_and_flexible(void)
{
    static const uint8_t v1[] = {0, 0, 0, 1, 0, 3, 'f', 'o', 'o'};
    static const uint8_t v9[] = {0x02, 0x04, 'f', 'o', 'o', 0x00, 0x01, 0x00, 0x00, 0x00};
    floe_arena_t a;
    floe_arena_init(&a, 0, 1 << 20);
    floe_err_t err;
    floe_k_metadata_req_t *rq = floe_k_metadata_req_new(&a);
    rq->topics.v = floe_k_metadata_req_metadata_request_topic_new_array(&a, 1);
    rq->topics.n = 1;
    rq->topics.v[0].name = floe_kstr("foo");
    floe_buf_t b = FLOE_BUF_INIT;
    CHECK_EQ(floe_kproto_encode(&floe_kd_metadata_req, 1, false, rq, &b, &err), 0);
    CHECK(bytes_eq(&b, v1, sizeof v1));
    floe_buf_reset(&b);
    CHECK(rq->allow_auto_topic_creation); /* declared default true */
    CHECK_EQ(floe_kproto_encode(&floe_kd_metadata_req, 9, true, rq, &b, &err), 0);
    CHECK(bytes_eq(&b, v9, sizeof v9));

    floe_k_metadata_req_t d;
    size_t used;
    CHECK_EQ(floe_kproto_decode(&floe_kd_metadata_req, 9, true, v9, sizeof v9, &used, &a, &d, &err),
             0);
    CHECK_EQ(used, sizeof v9);
    CHECK_EQ(d.topics.n, 1);
    CHECK_STR(d.topics.v[0].name.ptr, "foo");
    CHECK(d.allow_auto_topic_creation);
    CHECK(!d.include_topic_authorized_operations);
    /* v1 lacks AllowAutoTopicCreation: decoding gives the default */
    CHECK_EQ(
        floe_kproto_decode(&floe_kd_metadata_req, 1, false, v1, sizeof v1, &used, &a, &d, &err), 0);
    CHECK(d.allow_auto_topic_creation);
    /* null topics: v1 allows it (all topics); v0 does not, giving empty */
    static const uint8_t null_arr[] = {0xff, 0xff, 0xff, 0xff};
    CHECK_EQ(floe_kproto_decode(&floe_kd_metadata_req, 1, false, null_arr, 4, &used, &a, &d, &err),
             0);
    CHECK_EQ(d.topics.n, -1);
    CHECK_EQ(floe_kproto_decode(&floe_kd_metadata_req, 0, false, null_arr, 4, &used, &a, &d, &err),
             0);
    CHECK_EQ(d.topics.n, 0);
    floe_buf_free(&b);
    floe_arena_free(&a);
}

/* Tagged fields: a known tag is decoded, an unknown one skipped; encoding
 * writes a tag only when it differs from its default. */
static void tagged_fields(void)
{
    floe_arena_t a;
    floe_arena_init(&a, 0, 1 << 20);
    floe_err_t err;
    /* Fetch v12 request, empty topics, with ClusterId (tag 0) = "c1" and an
     * unknown tag 7 carrying 3 bytes */
    static const uint8_t fetch[] = {0xff, 0xff, 0xff, 0xff, /* ReplicaId -1 */
                                    0x00, 0x00, 0x01, 0xf4, /* MaxWaitMs 500 */
                                    0x00, 0x00, 0x00, 0x01, /* MinBytes 1 */
                                    0x00, 0x10, 0x00, 0x00, /* MaxBytes */
                                    0x00,                   /* IsolationLevel */
                                    0x00, 0x00, 0x00, 0x00, /* SessionId */
                                    0xff, 0xff, 0xff, 0xff, /* SessionEpoch */
                                    0x01,                   /* Topics: empty compact array */
                                    0x01,                   /* ForgottenTopicsData: empty */
                                    0x01,                   /* RackId "" */
                                    0x02,                   /* two tagged fields */
                                    0x00, 0x03, 0x03, 'c',  '1', 0x07, 0x03, 0xaa, 0xbb, 0xcc};
    floe_k_fetch_req_t f;
    size_t used;
    CHECK_EQ(
        floe_kproto_decode(&floe_kd_fetch_req, 12, true, fetch, sizeof fetch, &used, &a, &f, &err),
        0);
    CHECK_EQ(used, sizeof fetch);
    CHECK_STR(f.cluster_id.ptr, "c1");
    CHECK_EQ(f.max_wait_ms, 500);
    CHECK_EQ(f.session_epoch, -1);
    CHECK_EQ(f.max_bytes, 0x100000);
    /* re-encoded: the unknown tag is gone, ClusterId kept */
    floe_buf_t b = FLOE_BUF_INIT;
    CHECK_EQ(floe_kproto_encode(&floe_kd_fetch_req, 12, true, &f, &b, &err), 0);
    CHECK_EQ(b.len, sizeof fetch - 5);
    CHECK(memcmp(b.data, fetch, sizeof fetch - 11) == 0);
    CHECK_EQ(b.data[sizeof fetch - 11], 1);
    /* Fetch v11 has no tags: MaxBytes present, ClusterId null by default */
    floe_buf_reset(&b);
    f.cluster_id = floe_kstr("x");
    CHECK_EQ(floe_kproto_encode(&floe_kd_fetch_req, 11, false, &f, &b, &err), 0);
    floe_k_fetch_req_t g;
    CHECK_EQ(floe_kproto_decode(&floe_kd_fetch_req, 11, false, b.data, b.len, &used, &a, &g, &err),
             0);
    CHECK_EQ(g.cluster_id.len, -1);
    CHECK_STR(g.rack_id.ptr, "");
    /* ApiVersions v3 response: FinalizedFeaturesEpoch (tag 1) only when set */
    floe_k_api_versions_resp_t *r = floe_k_api_versions_resp_new(&a);
    floe_buf_reset(&b);
    CHECK_EQ(floe_kproto_encode(&floe_kd_api_versions_resp, 3, true, r, &b, &err), 0);
    static const uint8_t plain[] = {0, 0, 0x01, 0, 0, 0, 0, 0x00};
    CHECK(bytes_eq(&b, plain, sizeof plain));
    r->finalized_features_epoch = 5;
    floe_buf_reset(&b);
    CHECK_EQ(floe_kproto_encode(&floe_kd_api_versions_resp, 3, true, r, &b, &err), 0);
    static const uint8_t tagged[] = {0,    0, 0x01, 0, 0, 0, 0, 0x01, 0x01,
                                     0x08, 0, 0,    0, 0, 0, 0, 0,    5};
    CHECK(bytes_eq(&b, tagged, sizeof tagged));
    floe_buf_free(&b);
    floe_arena_free(&a);
}

/* A Produce response at every version encodes and decodes to the same
 * values for the fields that version has. */
static void produce_response_round_trip(void)
{
    floe_arena_t a;
    floe_arena_init(&a, 0, 1 << 20);
    floe_err_t err;
    floe_k_produce_resp_t *r = floe_k_produce_resp_new(&a);
    r->responses.v = floe_k_produce_resp_topic_produce_response_new_array(&a, 1);
    r->responses.n = 1;
    r->responses.v[0].name = floe_kstr("t");
    floe_k_produce_resp_partition_produce_response_t *p =
        floe_k_produce_resp_partition_produce_response_new_array(&a, 2);
    r->responses.v[0].partition_responses.v = p;
    r->responses.v[0].partition_responses.n = 2;
    p[0].index = 0;
    p[0].base_offset = 1234567890123LL;
    p[0].log_start_offset = 5;
    p[1].index = 1;
    p[1].error_code = 3;
    p[1].error_message = floe_kstr("no such partition");
    r->throttle_time_ms = 9;
    for (int16_t v = 0; v <= 9; v++) {
        floe_buf_t b = FLOE_BUF_INIT;
        bool flex = v >= 9;
        CHECK_EQ(floe_kproto_encode(&floe_kd_produce_resp, v, flex, r, &b, &err), 0);
        floe_k_produce_resp_t d;
        size_t used;
        CHECK_EQ(
            floe_kproto_decode(&floe_kd_produce_resp, v, flex, b.data, b.len, &used, &a, &d, &err),
            0);
        CHECK_EQ(used, b.len);
        CHECK_EQ(d.responses.n, 1);
        CHECK_EQ(d.responses.v[0].partition_responses.n, 2);
        const floe_k_produce_resp_partition_produce_response_t *q =
            d.responses.v[0].partition_responses.v;
        CHECK_EQ(q[0].base_offset, 1234567890123LL);
        CHECK_EQ(q[1].error_code, 3);
        CHECK_EQ(q[0].log_start_offset, v >= 5 ? 5 : -1);
        CHECK_EQ(d.throttle_time_ms, v >= 1 ? 9 : 0);
        if (v >= 8) CHECK_STR(q[1].error_message.ptr, "no such partition");
        else
            CHECK_EQ(q[1].error_message.len, -1);
        CHECK_EQ(q[0].error_message.len, -1);
        floe_buf_free(&b);
    }
    floe_arena_free(&a);
}

/* Every strict prefix of a valid body fails with a clear error; lying
 * counts and lengths are refused before anything is allocated. */
static void hostile_input(void)
{
    floe_arena_t a;
    floe_arena_init(&a, 0, 1 << 20);
    floe_err_t err;
    floe_k_produce_req_t *rq = floe_k_produce_req_new(&a);
    rq->acks = -1;
    rq->timeout_ms = 1000;
    rq->topic_data.v = floe_k_produce_req_topic_produce_data_new_array(&a, 1);
    rq->topic_data.n = 1;
    rq->topic_data.v[0].name = floe_kstr("topic");
    rq->topic_data.v[0].partition_data.v =
        floe_k_produce_req_partition_produce_data_new_array(&a, 1);
    rq->topic_data.v[0].partition_data.n = 1;
    static const uint8_t rec[] = {1, 2, 3, 4, 5};
    rq->topic_data.v[0].partition_data.v[0].records = (floe_kbytes_t){rec, 5};
    for (int flex = 0; flex <= 1; flex++) {
        int16_t v = flex ? 9 : 7;
        floe_buf_t b = FLOE_BUF_INIT;
        CHECK_EQ(floe_kproto_encode(&floe_kd_produce_req, v, flex, rq, &b, &err), 0);
        for (size_t n = 0; n < b.len; n++) {
            floe_k_produce_req_t d;
            size_t used;
            int rc =
                floe_kproto_decode(&floe_kd_produce_req, v, flex, b.data, n, &used, &a, &d, &err);
            CHECK_EQ(rc, -1);
            CHECK(err.code == FLOE_ETRUNC || err.code == FLOE_ECORRUPT);
        }
        floe_k_produce_req_t d;
        size_t used;
        CHECK_EQ(
            floe_kproto_decode(&floe_kd_produce_req, v, flex, b.data, b.len, &used, &a, &d, &err),
            0);
        CHECK(d.topic_data.v[0].partition_data.v[0].records.ptr ==
              b.data + b.len - (flex ? 8 : 5)); /* borrowed; flexible adds 3 tag bytes */
        floe_buf_free(&b);
    }
    /* Metadata v1 claiming 2^31-1 topics in 8 bytes */
    static const uint8_t many[] = {0x7f, 0xff, 0xff, 0xff, 0, 1, 'x', 0};
    floe_k_metadata_req_t m;
    size_t used;
    CHECK_EQ(
        floe_kproto_decode(&floe_kd_metadata_req, 1, false, many, sizeof many, &used, &a, &m, &err),
        -1);
    CHECK_EQ(err.code, FLOE_ECORRUPT);
    /* a string longer than the input */
    static const uint8_t longstr[] = {0, 0, 0, 1, 0x7f, 0xff, 'x'};
    CHECK_EQ(floe_kproto_decode(&floe_kd_metadata_req, 1, false, longstr, sizeof longstr, &used, &a,
                                &m, &err),
             -1);
    CHECK_EQ(err.code, FLOE_ETRUNC);
    /* negative lengths other than -1 */
    static const uint8_t neg[] = {0, 0, 0, 1, 0xff, 0xfe};
    CHECK_EQ(
        floe_kproto_decode(&floe_kd_metadata_req, 1, false, neg, sizeof neg, &used, &a, &m, &err),
        -1);
    /* flexible: a varint that never ends, and a huge compact length */
    static const uint8_t badvar[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    CHECK_EQ(floe_kproto_decode(&floe_kd_metadata_req, 9, true, badvar, sizeof badvar, &used, &a,
                                &m, &err),
             -1);
    CHECK_EQ(err.code, FLOE_ECORRUPT);
    static const uint8_t hugecompact[] = {0x02, 0xff, 0xff, 0xff, 0xff, 0x07};
    CHECK_EQ(floe_kproto_decode(&floe_kd_metadata_req, 9, true, hugecompact, sizeof hugecompact,
                                &used, &a, &m, &err),
             -1);
    /* the arena cap bounds what a request can make us allocate */
    floe_arena_t small;
    floe_arena_init(&small, 256, 512);
    uint8_t big[4 + 3000];
    memset(big, 0, sizeof big);
    big[0] = 0;
    big[1] = 0;
    big[2] = 0x0b;
    big[3] = 0xb8; /* 3000 topics, each "" */
    for (int i = 0; i < 1500; i++) {
        big[4 + 2 * i] = 0;
        big[5 + 2 * i] = 0;
    }
    CHECK_EQ(floe_kproto_decode(&floe_kd_metadata_req, 1, false, big, sizeof big, &used, &small, &m,
                                &err),
             -1);
    CHECK_EQ(err.code, FLOE_ENOMEM);
    floe_arena_free(&small);
    floe_arena_free(&a);
}

/* Unknown API keys and versions are reported, not decoded. */
static void unknown_api(void)
{
    floe_arena_t a;
    floe_arena_init(&a, 0, 1 << 20);
    floe_kreq_hdr_t h;
    const floe_kapi_t *api;
    void *body;
    floe_err_t err;
    static const uint8_t unk[] = {0x03, 0xe7, 0, 0, 0, 0, 0, 5, 0, 0};
    CHECK_EQ(floe_kreq_decode(unk, sizeof unk, &a, &h, &api, &body, &err), 0);
    CHECK(api == NULL);
    CHECK_EQ(h.api_key, 999);
    CHECK_EQ(h.correlation_id, 5);
    static const uint8_t badver[] = {0, 18, 0, 99, 0, 0, 0, 6};
    CHECK_EQ(floe_kreq_decode(badver, sizeof badver, &a, &h, &api, &body, &err), 0);
    CHECK(api == NULL);
    CHECK_EQ(floe_kreq_decode(badver, 5, &a, &h, &api, &body, &err), -1);
    CHECK(floe_kapi_find(FLOE_KAPI_FETCH) != NULL);
    size_t n;
    floe_kapi_all(&n);
    CHECK_EQ(n, FLOE_KAPI_COUNT);
    floe_arena_free(&a);
}

/* Requests captured from real clients (kcat/librdkafka 2.0.2, kafka-python
 * 2.0.2, kafkajs 2.2.4, librdkafka 2.15.1 in @confluentinc/kafka-javascript:
 * flexible Produce v9, Fetch v12, Metadata v12) through a recording proxy:
 * each decodes and its
 * header and body re-encode byte for byte. */
static void captured_client_frames(void)
{
    const char *dir = "tests/unit/data/kafka_frames";
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    if (!d) return;
    struct dirent *de;
    int n = 0;
    while ((de = readdir(d))) {
        if (!strstr(de->d_name, ".bin")) continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        FILE *f = fopen(path, "rb");
        CHECK(f != NULL);
        if (!f) continue;
        static uint8_t buf[65536];
        size_t len = fread(buf, 1, sizeof buf, f);
        fclose(f);
        floe_arena_t a;
        floe_arena_init(&a, 0, 1 << 22);
        floe_kreq_hdr_t h;
        const floe_kapi_t *api;
        void *body;
        floe_err_t err;
        int rc = floe_kreq_decode(buf, len, &a, &h, &api, &body, &err);
        if (rc || !api) {
            char m[400];
            snprintf(m, sizeof m, "%.100s: %.200s", de->d_name,
                     rc ? err.msg : "undeclared api/version");
            t_fail(__FILE__, __LINE__, m);
            floe_arena_free(&a);
            continue;
        }
        floe_buf_t out = FLOE_BUF_INIT;
        CHECK_EQ(floe_kreq_hdr_encode(&h, &out), 0);
        CHECK_EQ(floe_kproto_encode(api->req, h.api_version, floe_kapi_flexible(api, h.api_version),
                                    body, &out, &err),
                 0);
        if (out.len != len || memcmp(out.data, buf, len)) {
            char m[400];
            snprintf(m, sizeof m, "%.100s: re-encoded %zu bytes differ from the %zu captured",
                     de->d_name, out.len, len);
            t_fail(__FILE__, __LINE__, m);
        }
        floe_buf_free(&out);
        floe_arena_free(&a);
        n++;
    }
    closedir(d);
    CHECK(n >= 20);
}

TEST_MAIN(RUN(captured_client_frames); RUN(api_versions_v3_request_golden);
          RUN(metadata_request_classic_and_flexible); RUN(tagged_fields);
          RUN(produce_response_round_trip); RUN(hostile_input); RUN(unknown_api);)
