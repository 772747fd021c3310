/* Shared by the .proto parts (proto.h): building the descriptor model. */
#ifndef FLOE_FORMAT_PROTO_INT_H
#define FLOE_FORMAT_PROTO_INT_H

#include "format/proto.h"

/* Caps on untrusted input. */
#define PROTO_MAX_DEPTH 64
#define PROTO_ARENA_CAP (64u << 20)

/* A new empty file (syntax 2, package ""), or NULL. */
floe_proto_file_t *proto_file_new(void);

/* Append one zeroed element of size elem to the array *arr of *n
 * elements (malloc'd; capacity implied by *n).  The new element, or NULL
 * when out of memory. */
void *proto_push(void **arr, size_t *n, size_t elem);

/* A copy of s[0..n) in f's arena, or NULL. */
const char *proto_strdup(floe_proto_file_t *f, const char *s, size_t n);

/* A new field with the defaults (oneof -1, packed -1), or NULL. */
floe_proto_field_t *proto_add_field(floe_proto_msg_t *m);

/* "name_of_field" -> "NameOfFieldEntry", the map entry message's name, in
 * f's arena; or NULL. */
const char *proto_map_entry_name(floe_proto_file_t *f, const char *field);

#endif
