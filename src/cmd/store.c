/* The warehouse and s3.* config keys, and the FileIO they make (store.h). */
#include "cmd/store.h"

#include <stdio.h>
#include <stdlib.h>
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
            "checked against, for a store whose certificate a private CA signed; an "
            "`https://` `catalog.uri` (and its token endpoint) is checked against it too."},
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

static const floe_conf_enum_t catalog_types[] = {
    {"filesystem", FLOE_STORE_FS}, {"rest", FLOE_STORE_REST}, {NULL, 0}};

static const floe_conf_key_t CATALOG_KEYS[] = {
    {.name = "catalog.type",
     .type = FLOE_CONF_ENUM,
     .def = "filesystem",
     .values = catalog_types,
     F(catalog),
     .doc = "`filesystem`: tables in the warehouse's Hadoop layout, served by floe's own REST "
            "catalog under `/v1/`. `rest`: table topics are created in and committed to the "
            "external Iceberg REST catalog at `catalog.uri` (its files are written through the "
            "FileIO of `warehouse` and `s3.*`: set `warehouse = s3://...` when its tables live "
            "on S3); floe then serves no catalog of its own."},
    {.name = "catalog.uri",
     .type = FLOE_CONF_STRING,
     .def = "",
     .def_doc = "none",
     F(cat_uri),
     .check = check_endpoint,
     .doc = "The REST catalog's base URL (without `/v1`), e.g. `http://host:8181/`."},
    {.name = "catalog.warehouse",
     .type = FLOE_CONF_STRING,
     .def = "",
     .def_doc = "none",
     F(cat_warehouse),
     .doc = "The warehouse name sent to the REST catalog's `/v1/config`; the `prefix` of its "
            "answer goes into every request."},
    {.name = "catalog.credential",
     .type = FLOE_CONF_STRING,
     .def = "",
     .def_doc = "none",
     F(cat_credential),
     .doc = "OAuth2 client credentials `CLIENT_ID:SECRET` (or `SECRET`), exchanged at the "
            "token endpoint for a bearer token, which is fetched again before it expires and "
            "when the catalog answers 401."},
    {.name = "catalog.token",
     .type = FLOE_CONF_STRING,
     .def = "",
     .def_doc = "none",
     F(cat_token),
     .doc = "A bearer token sent to the REST catalog as it is (instead of a credential)."},
    {.name = "catalog.oauth2-server-uri",
     .type = FLOE_CONF_STRING,
     .def = "",
     .def_doc = "`catalog.uri` + `/v1/oauth/tokens`",
     F(cat_oauth_uri),
     .check = check_endpoint,
     .doc = "The OAuth2 token endpoint for `catalog.credential`."},
    {.name = "catalog.scope",
     .type = FLOE_CONF_STRING,
     .def = "catalog",
     F(cat_scope),
     .doc = "The OAuth2 scope asked for with `catalog.credential`."},
    {.name = "catalog.rest.sigv4-enabled",
     .type = FLOE_CONF_BOOL,
     .def = "false",
     F(cat_sigv4),
     .doc = "Sign every REST catalog request with AWS SigV4 (AWS Glue's and S3 Tables' Iceberg "
            "REST endpoints) using the `s3.*` credentials (or `AWS_*` variables), instead of a "
            "bearer token."},
    {.name = "catalog.rest.signing-region",
     .type = FLOE_CONF_STRING,
     .def = "",
     .def_doc = "`s3.region`, then `AWS_REGION`, then us-east-1",
     F(cat_signing_region),
     .doc = "The region SigV4-signed catalog requests are signed for."},
    {.name = "catalog.rest.signing-name",
     .type = FLOE_CONF_STRING,
     .def = "execute-api",
     F(cat_signing_name),
     .doc = "The service name SigV4-signed catalog requests are signed for (`glue` for AWS "
            "Glue, `s3tables` for S3 Tables)."},
};
#define NCATALOG_KEYS (sizeof CATALOG_KEYS / sizeof CATALOG_KEYS[0])

#undef F

const floe_conf_key_t *floe_store_config_keys(size_t *n)
{
    *n = NKEYS;
    return KEYS;
}

const floe_conf_key_t *floe_store_catalog_keys(size_t *n)
{
    *n = NCATALOG_KEYS;
    return CATALOG_KEYS;
}

int floe_store_config_set(floe_store_cfg_t *c, const char *k, const char *v, floe_err_t *err)
{
    const floe_conf_key_t *key = floe_conf_find(KEYS, NKEYS, k);
    if (!key) key = floe_conf_find(CATALOG_KEYS, NCATALOG_KEYS, k);
    return key ? floe_conf_set(key, c, v, err) : 1;
}

int floe_store_config_defaults(floe_store_cfg_t *c, floe_err_t *err)
{
    return floe_conf_defaults(KEYS, NKEYS, c, err) ||
                   floe_conf_defaults(CATALOG_KEYS, NCATALOG_KEYS, c, err)
               ? -1
               : 0;
}

int floe_store_open(const floe_store_cfg_t *c, const char *data_dir, floe_fileio_t **io, char *wh,
                    size_t whn, floe_err_t *err)
{
    *io = NULL;
    if (!floe_fileio_is_s3(c->warehouse)) {
        if (c->warehouse[0]) {
            if ((size_t)snprintf(wh, whn, "%s", floe_fileio_local_path(c->warehouse)) >= whn)
                return floe_err_set(err, FLOE_EINVAL, "warehouse path too long");
        } else if (!data_dir) {
            wh[0] = 0; /* none: `floe sink` with a REST catalog */
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

/* The first of a, then the environment variable env, that is set. */
static const char *first_of(const char *a, const char *env)
{
    if (a && *a) return a;
    const char *e = env ? getenv(env) : NULL;
    return e && *e ? e : NULL;
}

int floe_store_open_catalog(const floe_store_cfg_t *c, const char *data_dir, unsigned need,
                            floe_fileio_t **io, floe_ice_catalog_t **cat, char *where, size_t wn,
                            floe_err_t *err)
{
    *cat = NULL;
    if (c->catalog == FLOE_STORE_REST && !c->cat_uri[0])
        return floe_err_set(err, FLOE_EINVAL, "catalog.uri is required with catalog.type = rest");
    if (c->catalog != FLOE_STORE_REST && c->cat_uri[0])
        return floe_err_set(err, FLOE_EINVAL, "catalog.uri needs catalog.type = rest");
    if (floe_store_open(c, data_dir, io, where, wn, err) < 0) return -1;
    if (c->catalog == FLOE_STORE_REST) {
        floe_ice_rest_config_t rc = {
            .uri = c->cat_uri,
            .warehouse = c->cat_warehouse,
            .token = c->cat_token,
            .credential = c->cat_credential,
            .oauth2_uri = c->cat_oauth_uri,
            .scope = c->cat_scope,
            .sigv4 = c->cat_sigv4,
            .region = first_of(c->cat_signing_region, NULL) ? c->cat_signing_region
                                                            : first_of(c->region, "AWS_REGION"),
            .signing_name = c->cat_signing_name,
            .access_key_id = first_of(c->akid, "AWS_ACCESS_KEY_ID"),
            .secret_access_key = first_of(c->secret, "AWS_SECRET_ACCESS_KEY"),
            .session_token = first_of(c->token, "AWS_SESSION_TOKEN"),
            .ca_file = first_of(c->ca_file, "AWS_CA_BUNDLE"),
            .need = need,
        };
        *cat = floe_ice_catalog_rest_open(*io, &rc, err);
        if ((size_t)snprintf(where, wn, "%s", c->cat_uri) >= wn) where[0] = 0;
    } else {
        *cat = floe_ice_catalog_fs_new(*io, where, err);
    }
    if (!*cat) {
        floe_fileio_free(*io);
        *io = NULL;
        return -1;
    }
    return 0;
}
