/* The S3 XML answers the S3 FileIO reads: listings (files, folders,
 * entities, continuation, a page that is not a listing), DeleteObjects
 * errors, error Code/Message, and the escaping of keys sent in XML. */
#include <string.h>

#include "storage/s3_xml.h"
#include "test.h"

static void listing(void)
{
    const char *page =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
        "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        "<Name>b</Name><Prefix>wh/ns/</Prefix><KeyCount>4</KeyCount>"
        "<IsTruncated>true</IsTruncated><NextContinuationToken>tok&amp;1=</NextContinuationToken>"
        "<Contents><Key>wh/ns/a&amp;b.txt</Key><LastModified>2026-12-03T17:30:01.250Z</"
        "LastModified>"
        "<ETag>&quot;x&quot;</ETag><Size>12</Size></Contents>"
        "<Contents><Key>wh/ns/</Key><Size>0</Size></Contents>"
        "<Contents><Key>wh/ns/caf&#233;</Key><Size>3</Size></Contents>"
        "<CommonPrefixes><Prefix>wh/ns/t1/</Prefix></CommonPrefixes>"
        "</ListBucketResult>";
    floe_fileio_entry_t *e = NULL;
    size_t n = 0, cap = 0;
    char *tok = NULL;
    floe_err_t err;
    CHECK(s3_xml_list(page, strlen(page), 6, &e, &n, &cap, &tok, &err) == 0);
    CHECK_EQ(n, 3); /* the folder marker "wh/ns/" is not an entry */
    if (n == 3) {
        CHECK_STR(e[0].name, "a&b.txt");
        CHECK_EQ(e[0].size, 12);
        CHECK_EQ(e[0].mtime_ms, 1796319001250LL);
        CHECK(!e[0].is_dir);
        CHECK_STR(e[1].name, "caf\xc3\xa9");
        CHECK_EQ(e[1].mtime_ms, -1);
        CHECK_STR(e[2].name, "t1");
        CHECK(e[2].is_dir);
        CHECK_EQ(e[2].size, -1);
    }
    CHECK_STR(tok, "tok&1=");
    free(tok);
    floe_fileio_entries_free(e, n);

    /* the last page: no token; an empty listing */
    const char *last = "<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>";
    e = NULL;
    n = cap = 0;
    CHECK(s3_xml_list(last, strlen(last), 0, &e, &n, &cap, &tok, &err) == 0);
    CHECK(n == 0 && tok == NULL);
    /* not a listing at all */
    const char *junk = "<Error><Code>AccessDenied</Code></Error>";
    CHECK(s3_xml_list(junk, strlen(junk), 0, &e, &n, &cap, &tok, &err) == -1);
    CHECK_EQ(err.code, FLOE_ECORRUPT);
    CHECK(s3_xml_list(NULL, 0, 0, &e, &n, &cap, &tok, &err) == -1);
}

static void errors_and_text(void)
{
    const char *ans =
        "<DeleteResult><Deleted><Key>a</Key></Deleted>"
        "<Error><Key>b</Key><Code>AccessDenied</Code><Message>no &lt;way&gt;</Message>"
        "</Error><Error><Key>c</Key><Code>NoSuchKey</Code></Error></DeleteResult>";
    const char *keys[] = {"a", "b", "c"};
    bool gone[3] = {true, true, true};
    floe_err_t err;
    CHECK(s3_xml_delete_errors(ans, strlen(ans), keys, 3, gone, &err) == -1);
    CHECK(gone[0] && !gone[1] && gone[2]); /* absent counts as gone */
    CHECK(strstr(err.msg, "b: AccessDenied: no <way>") != NULL);
    char t[16];
    CHECK(s3_xml_text(ans, strlen(ans), "Code", t, sizeof t));
    CHECK_STR(t, "AccessDenied");
    CHECK(!s3_xml_text(ans, strlen(ans), "UploadId", t, sizeof t));
    CHECK(s3_xml_text("<A>0123456789abcdefXYZ</A>", 26, "A", t, sizeof t)); /* cut to fit */
    CHECK_STR(t, "0123456789abcde");
    CHECK(!s3_xml_text("<A>unterminated", 15, "A", t, sizeof t));
    CHECK(!s3_xml_text("<AB>x</AB>", 10, "A", t, sizeof t)); /* a longer name is not A */
    floe_buf_t b = FLOE_BUF_INIT;
    CHECK(s3_xml_escape("a<b>&\"c'", &b) == 0);
    CHECK_STR(floe_buf_cstr(&b), "a&lt;b&gt;&amp;&quot;c&apos;");
    floe_buf_free(&b);
}

TEST_MAIN(RUN(listing); RUN(errors_and_text))
