/* SigV4 signing against the example requests AWS publishes for S3
 * (examplebucket, 24 May 2013, the documentation's example keys): a GET
 * of an object with a Range, a PUT with a payload, and a bucket listing
 * with a query, so the canonical request, string to sign, signing key
 * and query canonicalization are each proven by AWS's own signatures. */
#include <string.h>

#include "test.h"
#include "storage/sigv4.h"

#define AKID "AKIAIOSFODNN7EXAMPLE"
#define SECRET "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define EMPTY_SHA "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

static void sign_check(const char *method, const char *path, const char *query,
                       const floe_sigv4_kv_t *h, size_t nh, const char *payload, const char *want)
{
    floe_sigv4_req_t r = {.method = method,
                          .path = path,
                          .query = query,
                          .headers = h,
                          .nheaders = nh,
                          .payload_sha256 = payload,
                          .amz_date = "20130524T000000Z",
                          .region = "us-east-1",
                          .service = "s3",
                          .access_key_id = AKID,
                          .secret_access_key = SECRET};
    floe_buf_t out = FLOE_BUF_INIT, canon = FLOE_BUF_INIT;
    floe_err_t e;
    CHECK(floe_sigv4_sign(&r, &out, &canon, &e) == 0);
    CHECK_STR(floe_buf_cstr(&out), want);
    floe_buf_free(&out);
    floe_buf_free(&canon);
}

static void get_object_example(void)
{
    /* header names in mixed case and a padded value: both canonicalized */
    floe_sigv4_kv_t h[] = {{"Host", "examplebucket.s3.amazonaws.com"},
                           {"Range", "  bytes=0-9 "},
                           {"x-amz-content-sha256", EMPTY_SHA},
                           {"X-Amz-Date", "20130524T000000Z"}};
    sign_check("GET", "/test.txt", "", h, 4, EMPTY_SHA,
               "AWS4-HMAC-SHA256 Credential=" AKID "/20130524/us-east-1/s3/aws4_request,"
               "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
               "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

static void put_object_example(void)
{
    const char *body = "Welcome to Amazon S3.";
    char sha[65];
    floe_sigv4_sha256_hex(body, strlen(body), sha);
    CHECK_STR(sha, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
    /* the same fed in pieces (a part as written); final starts the next hash */
    floe_sigv4_hash_t *hh = floe_sigv4_hash_new();
    CHECK(hh != NULL);
    char piece[65];
    for (int round = 0; hh && round < 2; round++) {
        floe_sigv4_hash_update(hh, body, 7);
        floe_sigv4_hash_update(hh, body + 7, 0);
        floe_sigv4_hash_update(hh, body + 7, strlen(body) - 7);
        floe_sigv4_hash_final_hex(hh, piece);
        CHECK_STR(piece, sha);
    }
    floe_sigv4_hash_free(hh);
    floe_buf_t path = FLOE_BUF_INIT;
    CHECK(floe_sigv4_uri_encode("/test$file.text", 1, &path) == 0);
    floe_sigv4_kv_t h[] = {{"x-amz-storage-class", "REDUCED_REDUNDANCY"},
                           {"Host", "examplebucket.s3.amazonaws.com"},
                           {"Date", "Fri, 24 May 2013 00:00:00 GMT"},
                           {"x-amz-date", "20130524T000000Z"},
                           {"x-amz-content-sha256", sha}};
    sign_check("PUT", floe_buf_cstr(&path), "", h, 5, sha,
               "AWS4-HMAC-SHA256 Credential=" AKID "/20130524/us-east-1/s3/aws4_request,"
               "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,"
               "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
    floe_buf_free(&path);
}

static void list_objects_example(void)
{
    /* the parameters out of order: the canonical query sorts them */
    floe_sigv4_kv_t q[] = {{"prefix", "J"}, {"max-keys", "2"}};
    floe_buf_t query = FLOE_BUF_INIT;
    floe_err_t e;
    CHECK(floe_sigv4_query(q, 2, &query, &e) == 0);
    CHECK_STR(floe_buf_cstr(&query), "max-keys=2&prefix=J");
    floe_sigv4_kv_t h[] = {{"host", "examplebucket.s3.amazonaws.com"},
                           {"x-amz-date", "20130524T000000Z"},
                           {"x-amz-content-sha256", EMPTY_SHA}};
    sign_check("GET", "/", floe_buf_cstr(&query), h, 3, EMPTY_SHA,
               "AWS4-HMAC-SHA256 Credential=" AKID "/20130524/us-east-1/s3/aws4_request,"
               "SignedHeaders=host;x-amz-content-sha256;x-amz-date,"
               "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
    floe_buf_free(&query);
}

static void encoding(void)
{
    floe_buf_t b = FLOE_BUF_INIT;
    CHECK(floe_sigv4_uri_encode("a b/c~d=e+f%", 1, &b) == 0);
    CHECK_STR(floe_buf_cstr(&b), "a%20b/c~d%3De%2Bf%25");
    b.len = 0;
    CHECK(floe_sigv4_uri_encode("x/y", 0, &b) == 0);
    CHECK_STR(floe_buf_cstr(&b), "x%2Fy");
    b.len = 0;
    /* a valueless parameter signs as "name=" and sorts by encoded name */
    floe_sigv4_kv_t q[] = {{"uploads", ""}, {"list-type", "2"}, {"continuation-token", "a/b="}};
    floe_err_t e;
    CHECK(floe_sigv4_query(q, 3, &b, &e) == 0);
    CHECK_STR(floe_buf_cstr(&b), "continuation-token=a%2Fb%3D&list-type=2&uploads=");
    floe_buf_free(&b);
    floe_sigv4_req_t r = {.method = "GET", .path = "/", .amz_date = "2013-05-24"};
    CHECK(floe_sigv4_sign(&r, &b, NULL, &e) == -1 && e.code == FLOE_EINVAL);
}

TEST_MAIN(RUN(get_object_example); RUN(put_object_example); RUN(list_objects_example);
          RUN(encoding))
