/*
 * mini msgpack: a small, self-contained, bounds-checked msgpack reader and
 * writer covering what the durak-ref wire protocol uses.
 *
 * Reader: parses one complete buffer into a flat array of nodes (pre-order).
 *   - maps, arrays, str (fixstr/str8/16/32), ints of every width, nil, bool;
 *   - float32/64, bin and ext are accepted but not interpreted (MP_RAW: the
 *     node keeps its raw encoding so it can be copied back out unchanged);
 *   - every length is checked against the bytes left before it is used,
 *     nesting is limited to MP_MAX_DEPTH, the byte 0xc1 is rejected.
 * Writer: a growable byte buffer with the smallest encoding for each value.
 */
#ifndef DURAK_MINI_MSGPACK_H
#define DURAK_MINI_MSGPACK_H

#include <stddef.h>
#include <stdint.h>

#define MP_MAX_DEPTH 64

typedef enum {
    MP_NIL,
    MP_BOOL,
    MP_UINT,  /* non-negative integer, value in v.u */
    MP_INT,   /* negative integer, value in v.i */
    MP_STR,   /* bytes at buf[off .. off+len) (not NUL-terminated) */
    MP_ARRAY, /* len elements: first child is the next node */
    MP_MAP,   /* len pairs: key, value, key, value, ... */
    MP_RAW    /* float / bin / ext: raw encoding at buf[off .. off+len) */
} mp_kind;

typedef struct {
    mp_kind kind;
    uint32_t off;
    uint32_t len;
    uint32_t end; /* index one past the last node of this subtree */
    union {
        uint64_t u;
        int64_t i;
        int b;
    } v;
} mp_node;

typedef struct {
    const uint8_t *buf;
    size_t size;
    size_t pos;
    mp_node *nodes;
    size_t n_nodes;
    size_t cap_nodes;
    char err[160];
} mp_doc;

/* Parse exactly one value filling the whole buffer (trailing bytes are an
 * error). Returns 0 on success, -1 on error with a message in d->err.
 * The buffer must outlive the doc. Call mp_doc_free in both cases. */
int mp_parse(mp_doc *d, const uint8_t *buf, size_t size);
void mp_doc_free(mp_doc *d);

const mp_node *mp_root(const mp_doc *d);
/* Value for a str key in a map, or NULL (also NULL if n is not a map). */
const mp_node *mp_map_get(const mp_doc *d, const mp_node *map, const char *key);
/* Element i of an array, or NULL. */
const mp_node *mp_array_at(const mp_doc *d, const mp_node *arr, size_t i);
/* 1 if n is a str equal to the C string s. */
int mp_str_eq(const mp_doc *d, const mp_node *n, const char *s);
/* Pointer to the bytes of a str node (len in n->len), or NULL. */
const char *mp_str_ptr(const mp_doc *d, const mp_node *n);
/* 1 and *out set if n is an integer that fits in int64. */
int mp_get_int(const mp_node *n, int64_t *out);

typedef struct {
    uint8_t *data;
    size_t len;
    size_t cap;
    int oom; /* set if an allocation failed; the buffer is then unusable */
} mp_buf;

void mp_buf_init(mp_buf *b);
void mp_buf_free(mp_buf *b);
void mp_w_nil(mp_buf *b);
void mp_w_bool(mp_buf *b, int v);
void mp_w_uint(mp_buf *b, uint64_t v);
void mp_w_int(mp_buf *b, int64_t v);
void mp_w_str(mp_buf *b, const char *s, size_t len);
void mp_w_cstr(mp_buf *b, const char *s);
void mp_w_array(mp_buf *b, uint32_t n);
void mp_w_map(mp_buf *b, uint32_t n);
/* Re-encode a parsed node (and its subtree) from a doc. */
void mp_w_node(mp_buf *b, const mp_doc *d, const mp_node *n);

#endif
