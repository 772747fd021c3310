/* The S3 FileIO: Iceberg tables on S3 and S3-compatible stores (MinIO,
 * Ceph radosgw, R2, OSS's S3 API), behind storage/fileio.h.
 *
 * Paths are "s3://BUCKET/KEY" (s3a:// and s3n:// too).  Requests are signed
 * with SigV4 (storage/sigv4.h) and sent with libcurl; connections are kept
 * in a pool of handles and reused.  What each FileIO operation becomes:
 *   create+write+close  one PUT when the file is under the part size;
 *                       else a multipart upload streamed while written
 *                       (at most parts_in_flight parts of part_size bytes
 *                       uploading at once, so memory stays bounded), and a
 *                       failed or aborted write aborts the upload.  With
 *                       FLOE_IO_EXCL: one PUT with If-None-Match: * (412 is
 *                       FLOE_EEXIST), the file held whole in memory (these
 *                       are metadata files, small).
 *   read / read_range   GET, GET with Range.
 *   exists              HEAD; a path ending in '/': whether keys are under it.
 *   list/list_entries   ListObjectsV2 with delimiter "/" and continuation.
 *   remove / batch      DELETE / DeleteObjects (1,000 keys a request).
 *   rename              server-side copy, then delete (not atomic; the
 *                       catalog does not rename).
 * Retries: 500, 502, 503 (SlowDown), 504, 429, resets and timeouts are
 * retried with exponential backoff and full jitter, bounded in count and
 * time; other 4xx fail at once with the store's Code and Message.  A
 * write whose answer was lost (sent, then no answer) and that cannot be
 * settled by a retry is FLOE_EUNKNOWN, never "failed". */
#ifndef FLOE_STORAGE_S3_H
#define FLOE_STORAGE_S3_H

#include <stdbool.h>
#include <stddef.h>

#include "storage/fileio.h"

/* Whether request bodies are signed (their SHA-256 in the signature) or
 * sent as UNSIGNED-PAYLOAD.  AUTO: unsigned over https, where TLS keeps
 * the bytes intact, signed over http. */
typedef enum floe_s3_payload_signing {
    FLOE_S3_SIGN_AUTO = 0,
    FLOE_S3_SIGN_ALWAYS,
    FLOE_S3_SIGN_NEVER,
} floe_s3_payload_signing_t;

typedef struct floe_s3_config {
    const char *endpoint;      /* "http://127.0.0.1:7480"; NULL: https://s3.REGION.amazonaws.com */
    const char *region;        /* NULL: AWS_REGION, then us-east-1 */
    const char *access_key_id; /* NULL: AWS_ACCESS_KEY_ID, then ~/.aws/credentials */
    const char *secret_access_key; /* NULL: AWS_SECRET_ACCESS_KEY, then ~/.aws/credentials */
    const char *session_token;     /* NULL: AWS_SESSION_TOKEN (optional) */
    bool path_style;               /* endpoint/BUCKET/KEY instead of BUCKET.endpoint/KEY */
    const char *ca_file; /* PEM CA certificates for https; NULL: AWS_CA_BUNDLE, then the system's */
    floe_s3_payload_signing_t payload_signing;
    size_t part_size;        /* multipart part size; 0: 16 MiB */
    int parts_in_flight;     /* parts uploading at once per file; 0: 4 */
    int max_attempts;        /* tries per request, retries included; 0: 6 */
    long timeout_ms;         /* one request, transfer included; 0: 120000 */
    long connect_timeout_ms; /* 0: 5000 */
    int list_page;           /* keys per ListObjectsV2 page; 0: 1000 (tests use small pages) */
    int delete_page;         /* keys per DeleteObjects request; 0: 1000 */
} floe_s3_config_t;

/* An S3 FileIO (every string of c is copied).  Credentials missing from
 * c, the environment and ~/.aws/credentials are FLOE_EINVAL; nothing is
 * sent yet (a bad key shows at the first request, as FLOE_EIO with the
 * store's code, e.g. "InvalidAccessKeyId").  Caller frees with
 * floe_fileio_free. */
floe_fileio_t *floe_fileio_s3_new(const floe_s3_config_t *c, floe_err_t *err);

/* Whether path names an object store location ("s3://", "s3a://", "s3n://"). */
bool floe_fileio_is_s3(const char *path);

/* Counters of one S3 FileIO since it was made (for /metrics and tests). */
typedef struct floe_s3_stats {
    unsigned long long requests, retries, errors, bytes_up, bytes_down, lost_answers;
} floe_s3_stats_t;
void floe_fileio_s3_stats(floe_fileio_t *io, floe_s3_stats_t *out);

/* Prometheus text for /metrics, appended to out: floe_s3_requests_total
 * by operation (GetObject, PutObject, UploadPart, ...) and status,
 * floe_s3_retries_total, floe_s3_lost_answers_total, floe_s3_bytes_total
 * by direction, and the floe_s3_request_seconds histogram by operation.
 * io must be an S3 FileIO.  0, or -1 when out of memory. */
int floe_fileio_s3_metrics(floe_fileio_t *io, floe_buf_t *out);

#endif
