/* The few S3 XML answers the S3 FileIO reads (ListObjectsV2, DeleteObjects,
 * CreateMultipartUpload, errors) and the escaping of the XML it sends.
 * A scanner for S3's flat, well-known answers, not a general XML parser:
 * elements are found by name; text is entity-decoded. */
#ifndef FLOE_STORAGE_S3_XML_H
#define FLOE_STORAGE_S3_XML_H

#include <stdbool.h>
#include <stddef.h>

#include "storage/fileio.h"
#include "util/buf.h"
#include "util/err.h"

/* The decoded text of the first <tag>...</tag> in p[0..n) into out (cap
 * bytes with the NUL; longer text is cut).  false when there is none. */
bool s3_xml_text(const void *p, size_t n, const char *tag, char *out, size_t cap);

/* Append the entries of one ListObjectsV2 page to *out (*n used, *cap
 * allocated; floe_grow): <Contents> as files named by Key without its
 * first plen bytes (with Size and LastModified), <CommonPrefixes> as
 * folders (the trailing '/' dropped); an empty name (a folder marker) is
 * skipped.  *token receives NextContinuationToken (malloc'd) when the
 * page says IsTruncated, else NULL.  FLOE_ECORRUPT on a page that is not
 * a listing, FLOE_ENOMEM. */
int s3_xml_list(const void *p, size_t n, size_t plen, floe_fileio_entry_t **out, size_t *nout,
                size_t *cap, char **token, floe_err_t *err);

/* Mark gone[i] false for each keys[i] (borrowed, cnt of them) that a
 * DeleteObjects answer lists under <Error>; *err tells the first such
 * (Key, Code and Message).  -1 when one failed, else 0. */
int s3_xml_delete_errors(const void *p, size_t n, const char *const *keys, size_t cnt, bool *gone,
                         floe_err_t *err);

/* Append s with &, <, >, " and ' escaped.  -1 only when out of memory. */
int s3_xml_escape(const char *s, floe_buf_t *out);

#endif
