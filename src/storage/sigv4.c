/* AWS Signature Version 4: canonical request, string to sign, signing key. */
#include "storage/sigv4.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#define MAX_HEADERS 64

static void hex_of(const unsigned char *d, size_t n, char *out)
{
    static const char hx[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hx[d[i] >> 4];
        out[2 * i + 1] = hx[d[i] & 15];
    }
    out[2 * n] = 0;
}

void floe_sigv4_sha256_hex(const void *p, size_t n, char hex[65])
{
    unsigned char d[32];
    unsigned int dl = 0;
    EVP_Digest(p, n, d, &dl, EVP_sha256(), NULL);
    hex_of(d, 32, hex);
}

floe_sigv4_hash_t *floe_sigv4_hash_new(void)
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    if (c && !EVP_DigestInit_ex(c, EVP_sha256(), NULL)) {
        EVP_MD_CTX_free(c);
        c = NULL;
    }
    return (floe_sigv4_hash_t *)c;
}

void floe_sigv4_hash_update(floe_sigv4_hash_t *h, const void *p, size_t n)
{
    EVP_DigestUpdate((EVP_MD_CTX *)h, p, n);
}

void floe_sigv4_hash_final_hex(floe_sigv4_hash_t *h, char hex[65])
{
    unsigned char d[32];
    unsigned int dl = 0;
    EVP_DigestFinal_ex((EVP_MD_CTX *)h, d, &dl);
    EVP_DigestInit_ex((EVP_MD_CTX *)h, EVP_sha256(), NULL);
    hex_of(d, 32, hex);
}

void floe_sigv4_hash_free(floe_sigv4_hash_t *h)
{
    EVP_MD_CTX_free((EVP_MD_CTX *)h);
}

static void hmac(const void *key, size_t kl, const void *msg, size_t ml, unsigned char out[32])
{
    unsigned int ol = 32;
    HMAC(EVP_sha256(), key, (int)kl, msg, ml, out, &ol);
}

int floe_sigv4_uri_encode(const char *s, int keep_slash, floe_buf_t *out)
{
    static const char hx[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' ||
            (keep_slash && c == '/')) {
            if (floe_buf_append_u8(out, c) < 0) return -1;
        } else {
            char e[3] = {'%', hx[c >> 4], hx[c & 15]};
            if (floe_buf_append(out, e, 3) < 0) return -1;
        }
    }
    return 0;
}

typedef struct enc_kv {
    char *name, *value;
} enc_kv_t;

static int cmp_enc_kv(const void *a, const void *b)
{
    const enc_kv_t *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->value, y->value);
}

int floe_sigv4_query(const floe_sigv4_kv_t *params, size_t n, floe_buf_t *out, floe_err_t *err)
{
    if (!n) return 0;
    enc_kv_t *e = calloc(n, sizeof *e);
    if (!e) return floe_err_oom(err);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        floe_buf_t k = {0}, v = {0};
        if (floe_sigv4_uri_encode(params[i].name, 0, &k) < 0 ||
            floe_sigv4_uri_encode(params[i].value ? params[i].value : "", 0, &v) < 0 ||
            !(e[i].name = floe_buf_cstr(&k)) || !(e[i].value = floe_buf_cstr(&v))) {
            floe_buf_free(&k);
            floe_buf_free(&v);
            free(e[i].name);
            e[i].name = NULL;
            rc = -1;
        }
    }
    if (rc == 0) {
        qsort(e, n, sizeof *e, cmp_enc_kv);
        for (size_t i = 0; i < n && rc == 0; i++)
            rc = floe_buf_printf(out, "%s%s=%s", i ? "&" : "", e[i].name, e[i].value);
    }
    for (size_t i = 0; i < n; i++) {
        free(e[i].name);
        free(e[i].value);
    }
    free(e);
    return rc < 0 ? floe_err_oom(err) : 0;
}

typedef struct hdr {
    char name[128];
    const char *value; /* borrowed; trimmed when written */
} hdr_t;

static int cmp_hdr(const void *a, const void *b)
{
    return strcmp(((const hdr_t *)a)->name, ((const hdr_t *)b)->name);
}

/* The value with leading and trailing blanks removed and inner runs of
 * blanks as one space, appended to out. */
static int append_trimmed(floe_buf_t *out, const char *v)
{
    while (*v == ' ' || *v == '\t') v++;
    bool blank = false;
    for (; *v; v++) {
        if (*v == ' ' || *v == '\t') {
            blank = true;
            continue;
        }
        if (blank && floe_buf_append_u8(out, ' ') < 0) return -1;
        blank = false;
        if (floe_buf_append_u8(out, (uint8_t)*v) < 0) return -1;
    }
    return 0;
}

static bool valid_date(const char *d)
{
    if (!d || strlen(d) != 16 || d[8] != 'T' || d[15] != 'Z') return false;
    for (int i = 0; i < 15; i++)
        if (i != 8 && !isdigit((unsigned char)d[i])) return false;
    return true;
}

int floe_sigv4_sign(const floe_sigv4_req_t *r, floe_buf_t *out, floe_buf_t *canonical,
                    floe_err_t *err)
{
    if (!valid_date(r->amz_date))
        return floe_err_set(err, FLOE_EINVAL, "sigv4: bad x-amz-date '%s'",
                            r->amz_date ? r->amz_date : "");
    if (r->nheaders > MAX_HEADERS)
        return floe_err_set(err, FLOE_EINVAL, "sigv4: %zu headers (at most %d)", r->nheaders,
                            MAX_HEADERS);
    hdr_t h[MAX_HEADERS];
    for (size_t i = 0; i < r->nheaders; i++) {
        size_t l = strlen(r->headers[i].name);
        if (l >= sizeof h[i].name)
            return floe_err_set(err, FLOE_EINVAL, "sigv4: header name too long");
        for (size_t j = 0; j <= l; j++)
            h[i].name[j] = (char)tolower((unsigned char)r->headers[i].name[j]);
        h[i].value = r->headers[i].value;
    }
    qsort(h, r->nheaders, sizeof *h, cmp_hdr);

    floe_buf_t creq = {0}, signed_names = {0}, sts = {0};
    int rc = -1;
    for (size_t i = 0; i < r->nheaders; i++)
        if (floe_buf_printf(&signed_names, "%s%s", i ? ";" : "", h[i].name) < 0) goto oom;
    if (floe_buf_printf(&creq, "%s\n%s\n%s\n", r->method, r->path, r->query ? r->query : "") < 0)
        goto oom;
    for (size_t i = 0; i < r->nheaders; i++) {
        if (floe_buf_printf(&creq, "%s:", h[i].name) < 0 || append_trimmed(&creq, h[i].value) < 0 ||
            floe_buf_append_u8(&creq, '\n') < 0)
            goto oom;
    }
    if (floe_buf_printf(&creq, "\n%.*s\n%s", (int)signed_names.len, (const char *)signed_names.data,
                        r->payload_sha256) < 0)
        goto oom;

    char creq_hash[65];
    floe_sigv4_sha256_hex(creq.data, creq.len, creq_hash);
    char date[9];
    memcpy(date, r->amz_date, 8);
    date[8] = 0;
    if (floe_buf_printf(&sts, "AWS4-HMAC-SHA256\n%s\n%s/%s/%s/aws4_request\n%s", r->amz_date, date,
                        r->region, r->service, creq_hash) < 0)
        goto oom;

    /* signing key = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request") */
    floe_buf_t k0 = {0};
    if (floe_buf_printf(&k0, "AWS4%s", r->secret_access_key) < 0) goto oom;
    unsigned char k1[32], k2[32], k3[32], k4[32], sig[32];
    hmac(k0.data, k0.len, date, 8, k1);
    memset(k0.data, 0, k0.len);
    floe_buf_free(&k0);
    hmac(k1, 32, r->region, strlen(r->region), k2);
    hmac(k2, 32, r->service, strlen(r->service), k3);
    hmac(k3, 32, "aws4_request", 12, k4);
    hmac(k4, 32, sts.data, sts.len, sig);
    char sighex[65];
    hex_of(sig, 32, sighex);
    if (floe_buf_printf(out,
                        "AWS4-HMAC-SHA256 Credential=%s/%s/%s/%s/aws4_request,SignedHeaders=%.*s,"
                        "Signature=%s",
                        r->access_key_id, date, r->region, r->service, (int)signed_names.len,
                        (const char *)signed_names.data, sighex) < 0)
        goto oom;
    if (canonical && floe_buf_append(canonical, creq.data, creq.len) < 0) goto oom;
    rc = 0;
    goto done;
oom:
    floe_err_oom(err);
done:
    floe_buf_free(&creq);
    floe_buf_free(&signed_names);
    floe_buf_free(&sts);
    return rc;
}
