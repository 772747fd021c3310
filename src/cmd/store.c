/* The warehouse and s3.* config keys, and the FileIO they make (store.h). */
#include "cmd/store.h"

#include <stdio.h>
#include <string.h>

#include "iceberg/catalog.h"
#include "storage/s3.h"
#include "util/diag.h"

static int check_warehouse(const char *v, floe_err_t *err)
{
    if (floe_fileio_is_s3(v)) {
        const char *b = strstr(v, "://") + 3;
        if (!*b || *b == '/')
            return floe_err_set(err, FLOE_EINVAL, "'%s' names no bucket (s3://BUCKET/PREFIX)", v);
        return 0;
    }
    if (strstr(v, "://") && strncmp(v, "file://", 7))
        return floe_err_set(err, FLOE_EINVAL,
                            "'%s': only s3:// (and S3-compatible stores) or a local path", v);
    return 0;
}

static int check_endpoint(const char *v, floe_err_t *err)
{
    if (*v && strncmp(v, "http://", 7) && strncmp(v, "https://", 8))
        return floe_err_set(err, FLOE_EINVAL, "'%s' is not an http:// or https:// URL", v);
    return 0;
}

#define F(f) FLOE_CONF_FIELD(floe_store_cfg_t, f)

static const floe_conf_enum_t SIGNING[] = {{"auto", FLOE_S3_SIGN_AUTO},
                                           {"true", FLOE_S3_SIGN_ALWAYS},
                                           {"false", FLOE_S3_SIGN_NEVER},
                                           {NULL, 0}};

static const floe_conf_key_t KEYS[] = {
    {.name = "warehouse",
     .type = FLOE_CONF_STRING,
     .def_doc = "DATA/warehouse (local)",
     F(warehouse),
     .check = check_warehouse,
     .doc = "Where tables live: a local folder, or `s3://BUCKET/PREFIX` on S3 or an "
            "S3-compatible store (MinIO, Ceph, R2, OSS). The Kafka log stays on local disk."},
    {.name = "s3.endpoint",
     .type = FLOE_CONF_STRING,
     .def_doc = "AWS, `https://s3.REGION.amazonaws.com`",
     F(endpoint),
     .check = check_endpoint,
     .doc = "The S3 API's URL, `http[s]://HOST[:PORT]`, for a store other than AWS."},
    {.name = "s3.region",
     .type = FLOE_CONF_STRING,
     .def_doc = "`AWS_REGION`, then us-east-1",
     F(region),
     .doc = "The region requests are signed for (SigV4)."},
    {.name = "s3.access-key-id",
     .type = FLOE_CONF_STRING,
     .def_doc = "`AWS_ACCESS_KEY_ID`, then ~/.aws/credentials",
     F(akid),
     .doc = "Access key id."},
    {.name = "s3.secret-access-key",
     .type = FLOE_CONF_STRING,
     .def_doc = "`AWS_SECRET_ACCESS_KEY`, then ~/.aws/credentials",
     F(secret),
     .doc = "Secret access key."},
    {.name = "s3.session-token",
     .type = FLOE_CONF_STRING,
     .def_doc = "`AWS_SESSION_TOKEN`, else none",
     F(token),
     .doc = "Session token of temporary credentials."},
    {.name = "s3.path-style-access",
     .type = FLOE_CONF_BOOL,
     .def = "false",
     F(path_style),
     .doc = "Address buckets as `ENDPOINT/BUCKET/KEY` instead of `BUCKET.ENDPOINT/KEY` "
            "(most self-hosted stores want true)."},
    {.name = "s3.ca-file",
     .type = FLOE_CONF_STRING,
     .def_doc = "`AWS_CA_BUNDLE`, else the system's CAs",
     F(ca_file),
     .doc = "PEM file of the CA certificates that an `https://` endpoint's certificate is "
            "checked against, for a store whose certificate a private CA signed."},
    {.name = "s3.payload-signing",
     .type = FLOE_CONF_ENUM,
     .def = "auto",
     .values = SIGNING,
     F(payload_signing),
     .doc = "Whether data uploads carry their SHA-256 in the signature (`true`) or are sent "
            "as `UNSIGNED-PAYLOAD` (`false`); `auto`: unsigned over https, where TLS guards "
            "the bytes, signed over http."},
    {.name = "s3.multipart.size",
     .type = FLOE_CONF_SIZE,
     .min = (int64_t)5 << 20,
     .max = (int64_t)5 << 30,
     .def = "16MiB",
     F(part_size),
     .doc = "Part size of the multipart uploads that data files stream as; a smaller file is "
            "one PUT."},
    {.name = "s3.multipart.parts-in-flight",
     .type = FLOE_CONF_INT,
     .min = 1,
     .max = 64,
     .def = "4",
     F(in_flight),
     .doc = "Parts of one file uploading at once: memory per file being written is about this "
            "times the part size."},
};
#define NKEYS (sizeof KEYS / sizeof KEYS[0])

#undef F

const floe_conf_key_t *floe_store_config_keys(size_t *n)
{
    *n = NKEYS;
    return KEYS;
}

int floe_store_open(const floe_store_cfg_t *c, const char *data_dir, floe_fileio_t **io, char *wh,
                    size_t whn, floe_err_t *err)
{
    *io = NULL;
    if (!floe_fileio_is_s3(c->warehouse)) {
        if (c->warehouse[0]) {
            if ((size_t)snprintf(wh, whn, "%s", floe_fileio_local_path(c->warehouse)) >= whn)
                return floe_err_set(err, FLOE_EINVAL, "warehouse path too long");
        } else if (floe_ice_warehouse_of(data_dir, wh, whn, err) < 0) {
            return -1;
        }
        *io = floe_fileio_local_new(err);
        return *io ? 0 : -1;
    }
    size_t l = strlen(c->warehouse);
    while (l > 5 && c->warehouse[l - 1] == '/') l--;
    if (l >= whn) return floe_err_set(err, FLOE_EINVAL, "warehouse path too long");
    memcpy(wh, c->warehouse, l);
    wh[l] = 0;
    floe_s3_config_t sc = {
        .endpoint = c->endpoint[0] ? c->endpoint : NULL,
        .region = c->region[0] ? c->region : NULL,
        .access_key_id = c->akid[0] ? c->akid : NULL,
        .secret_access_key = c->secret[0] ? c->secret : NULL,
        .session_token = c->token[0] ? c->token : NULL,
        .path_style = c->path_style,
        .ca_file = c->ca_file[0] ? c->ca_file : NULL,
        .payload_signing = (floe_s3_payload_signing_t)c->payload_signing,
        .part_size = (size_t)c->part_size,
        .parts_in_flight = (int)c->in_flight,
    };
    if (!(*io = floe_fileio_s3_new(&sc, err))) return -1;
    char **names;
    size_t n;
    floe_err_t e;
    if (floe_fileio_list(*io, wh, &names, &n, &e) < 0) FLOE_ERROR("warehouse %s: %s", wh, e.msg);
    else
        floe_fileio_names_free(names, n);
    return 0;
}
