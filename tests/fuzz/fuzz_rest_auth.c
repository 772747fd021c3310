/* libFuzzer target for src/http/rest_auth.c: arbitrary bytes as the
 * form-encoded body of a token request (the fields the endpoint reads),
 * and as the value of an "Authorization: Basic" header.  Never a crash,
 * leak or overread. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/rest_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const fields[] = {"grant_type", "client_id",     "client_secret",
                                         "scope",      "subject_token", "subject_token_type",
                                         "actor_token"};
    char out[64];
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        floe_rest_form_field(data, size, fields[i], out, sizeof out);
    char *h = malloc(size + 7);
    if (!h) return 0;
    memcpy(h, "Basic ", 6);
    memcpy(h + 6, data, size);
    h[size + 6] = '\0';
    char id[48], secret[48];
    floe_rest_basic_credentials(h, id, secret, sizeof id);
    free(h);
    return 0;
}
