/* mini msgpack reader/writer: see msgpack.h. */
#include "msgpack.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ reader */

static int fail(mp_doc *d, const char *fmt, ...)
{
    va_list ap;
    if (d->err[0] == '\0') {
        va_start(ap, fmt);
        vsnprintf(d->err, sizeof d->err, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Take n bytes from the input, or fail without moving. */
static int take(mp_doc *d, size_t n, const uint8_t **p)
{
    if (n > d->size - d->pos)
        return fail(d, "truncated msgpack: need %lu byte(s) at offset %lu, %lu left",
                    (unsigned long)n, (unsigned long)d->pos,
                    (unsigned long)(d->size - d->pos));
    *p = d->buf + d->pos;
    d->pos += n;
    return 0;
}

static uint64_t be(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    size_t i;
    for (i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

static int read_be(mp_doc *d, size_t n, uint64_t *out)
{
    const uint8_t *p = NULL;
    if (take(d, n, &p) != 0)
        return -1;
    *out = be(p, n);
    return 0;
}

static int new_node(mp_doc *d, size_t *idx)
{
    if (d->n_nodes == d->cap_nodes) {
        size_t cap = d->cap_nodes ? d->cap_nodes * 2 : 64;
        mp_node *nn;
        if (cap > (size_t)-1 / sizeof *nn)
            return fail(d, "out of memory");
        nn = realloc(d->nodes, cap * sizeof *nn);
        if (nn == NULL)
            return fail(d, "out of memory");
        d->nodes = nn;
        d->cap_nodes = cap;
    }
    *idx = d->n_nodes++;
    memset(&d->nodes[*idx], 0, sizeof d->nodes[*idx]);
    return 0;
}

/* Skip n payload bytes of a value we keep raw (float/bin/ext). */
static int raw(mp_doc *d, size_t idx, size_t start, uint64_t n)
{
    const uint8_t *p = NULL;
    if (n > d->size - d->pos)
        return fail(d, "truncated msgpack: value of %lu byte(s) at offset %lu",
                    (unsigned long)n, (unsigned long)start);
    if (take(d, (size_t)n, &p) != 0)
        return -1;
    d->nodes[idx].kind = MP_RAW;
    d->nodes[idx].off = (uint32_t)start;
    d->nodes[idx].len = (uint32_t)(d->pos - start);
    return 0;
}

static int parse_value(mp_doc *d, int depth);

static int parse_children(mp_doc *d, size_t idx, mp_kind kind, uint64_t count, int depth)
{
    uint64_t items = kind == MP_MAP ? count * 2 : count;
    uint64_t i;
    /* every element takes at least one byte: reject absurd counts up front */
    if (items > d->size - d->pos)
        return fail(d, "%s of %lu element(s) at offset %lu does not fit in the %lu byte(s) left",
                    kind == MP_MAP ? "map" : "array", (unsigned long)count,
                    (unsigned long)d->pos, (unsigned long)(d->size - d->pos));
    d->nodes[idx].kind = kind;
    d->nodes[idx].len = (uint32_t)count;
    for (i = 0; i < items; i++)
        if (parse_value(d, depth + 1) != 0)
            return -1;
    return 0;
}

static int parse_value(mp_doc *d, int depth)
{
    size_t idx = 0, start = d->pos;
    const uint8_t *p = NULL;
    uint64_t v;
    uint8_t c;
    int rc = 0;

    if (depth > MP_MAX_DEPTH)
        return fail(d, "msgpack nested deeper than %d levels", MP_MAX_DEPTH);
    if (new_node(d, &idx) != 0 || take(d, 1, &p) != 0)
        return -1;
    c = *p;

    if (c <= 0x7f) {
        d->nodes[idx].kind = MP_UINT;
        d->nodes[idx].v.u = c;
    } else if (c >= 0xe0) {
        d->nodes[idx].kind = MP_INT;
        d->nodes[idx].v.i = (int64_t)c - 256;
    } else if (c <= 0x8f) {
        rc = parse_children(d, idx, MP_MAP, c & 0x0fu, depth);
    } else if (c <= 0x9f) {
        rc = parse_children(d, idx, MP_ARRAY, c & 0x0fu, depth);
    } else if (c <= 0xbf) {
        v = c & 0x1fu;
        goto str;
    } else {
        switch (c) {
        case 0xc0:
            d->nodes[idx].kind = MP_NIL;
            break;
        case 0xc2:
        case 0xc3:
            d->nodes[idx].kind = MP_BOOL;
            d->nodes[idx].v.b = c == 0xc3;
            break;
        case 0xc4: case 0xc5: case 0xc6: /* bin 8/16/32 */
            if (read_be(d, (size_t)1 << (c - 0xc4), &v) != 0)
                return -1;
            rc = raw(d, idx, start, v);
            break;
        case 0xc7: case 0xc8: case 0xc9: /* ext 8/16/32: len, type, data */
            if (read_be(d, (size_t)1 << (c - 0xc7), &v) != 0)
                return -1;
            rc = raw(d, idx, start, v + 1);
            break;
        case 0xca: /* float32 */
            rc = raw(d, idx, start, 4);
            break;
        case 0xcb: /* float64 */
            rc = raw(d, idx, start, 8);
            break;
        case 0xcc: case 0xcd: case 0xce: case 0xcf: /* uint 8..64 */
            if (read_be(d, (size_t)1 << (c - 0xcc), &v) != 0)
                return -1;
            d->nodes[idx].kind = MP_UINT;
            d->nodes[idx].v.u = v;
            break;
        case 0xd0: case 0xd1: case 0xd2: case 0xd3: { /* int 8..64 */
            size_t n = (size_t)1 << (c - 0xd0);
            int64_t s;
            if (read_be(d, n, &v) != 0)
                return -1;
            if (n < 8 && (v >> (n * 8 - 1)) != 0)
                s = (int64_t)v - ((int64_t)1 << (n * 8 - 1)) - ((int64_t)1 << (n * 8 - 1));
            else if (n == 8 && v > (uint64_t)INT64_MAX)
                s = -(int64_t)(~v) - 1; /* two's complement without overflow */
            else
                s = (int64_t)v;
            if (s >= 0) {
                d->nodes[idx].kind = MP_UINT;
                d->nodes[idx].v.u = (uint64_t)s;
            } else {
                d->nodes[idx].kind = MP_INT;
                d->nodes[idx].v.i = s;
            }
            break;
        }
        case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8: /* fixext */
            rc = raw(d, idx, start, 1 + ((uint64_t)1 << (c - 0xd4)));
            break;
        case 0xd9: case 0xda: case 0xdb: /* str 8/16/32 */
            if (read_be(d, (size_t)1 << (c - 0xd9), &v) != 0)
                return -1;
            goto str;
        case 0xdc: case 0xdd: /* array 16/32 */
            if (read_be(d, c == 0xdc ? 2 : 4, &v) != 0)
                return -1;
            rc = parse_children(d, idx, MP_ARRAY, v, depth);
            break;
        case 0xde: case 0xdf: /* map 16/32 */
            if (read_be(d, c == 0xde ? 2 : 4, &v) != 0)
                return -1;
            rc = parse_children(d, idx, MP_MAP, v, depth);
            break;
        default: /* 0xc1 is never used */
            return fail(d, "invalid msgpack type byte 0x%02x at offset %lu", (unsigned)c,
                        (unsigned long)start);
        }
    }
    if (rc == 0)
        d->nodes[idx].end = (uint32_t)d->n_nodes;
    return rc;

str:
    if (v > d->size - d->pos)
        return fail(d, "truncated msgpack: str of %lu byte(s) at offset %lu", (unsigned long)v,
                    (unsigned long)start);
    d->nodes[idx].kind = MP_STR;
    d->nodes[idx].off = (uint32_t)d->pos;
    d->nodes[idx].len = (uint32_t)v;
    d->pos += (size_t)v;
    d->nodes[idx].end = (uint32_t)d->n_nodes;
    return 0;
}

int mp_parse(mp_doc *d, const uint8_t *buf, size_t size)
{
    memset(d, 0, sizeof *d);
    d->buf = buf;
    d->size = size;
    if (size > 0xffffffffu)
        return fail(d, "buffer too large");
    if (parse_value(d, 0) != 0)
        return -1;
    if (d->pos != d->size)
        return fail(d, "%lu trailing byte(s) after the msgpack value",
                    (unsigned long)(d->size - d->pos));
    return 0;
}

void mp_doc_free(mp_doc *d)
{
    free(d->nodes);
    d->nodes = NULL;
    d->n_nodes = d->cap_nodes = 0;
}

const mp_node *mp_root(const mp_doc *d)
{
    return d->n_nodes > 0 ? &d->nodes[0] : NULL;
}

const mp_node *mp_array_at(const mp_doc *d, const mp_node *arr, size_t i)
{
    size_t k;
    if (arr == NULL || arr->kind != MP_ARRAY || i >= arr->len)
        return NULL;
    k = (size_t)(arr - d->nodes) + 1;
    while (i-- > 0)
        k = d->nodes[k].end;
    return &d->nodes[k];
}

const mp_node *mp_map_get(const mp_doc *d, const mp_node *map, const char *key)
{
    size_t k, i;
    if (map == NULL || map->kind != MP_MAP)
        return NULL;
    k = (size_t)(map - d->nodes) + 1;
    for (i = 0; i < map->len; i++) {
        size_t val = d->nodes[k].end;
        if (mp_str_eq(d, &d->nodes[k], key))
            return &d->nodes[val];
        k = d->nodes[val].end;
    }
    return NULL;
}

int mp_str_eq(const mp_doc *d, const mp_node *n, const char *s)
{
    size_t len = strlen(s);
    return n != NULL && n->kind == MP_STR && n->len == len && memcmp(d->buf + n->off, s, len) == 0;
}

const char *mp_str_ptr(const mp_doc *d, const mp_node *n)
{
    return n != NULL && n->kind == MP_STR ? (const char *)(d->buf + n->off) : NULL;
}

int mp_get_int(const mp_node *n, int64_t *out)
{
    if (n == NULL)
        return 0;
    if (n->kind == MP_INT) {
        *out = n->v.i;
        return 1;
    }
    if (n->kind == MP_UINT && n->v.u <= (uint64_t)INT64_MAX) {
        *out = (int64_t)n->v.u;
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------ writer */

void mp_buf_init(mp_buf *b)
{
    memset(b, 0, sizeof *b);
}

void mp_buf_free(mp_buf *b)
{
    free(b->data);
    mp_buf_init(b);
}

static void put(mp_buf *b, const void *src, size_t n)
{
    if (b->oom)
        return;
    if (n > b->cap - b->len) {
        size_t cap = b->cap ? b->cap : 256;
        uint8_t *nd;
        while (n > cap - b->len) {
            if (cap > ((size_t)-1) / 2) {
                b->oom = 1;
                return;
            }
            cap *= 2;
        }
        nd = realloc(b->data, cap);
        if (nd == NULL) {
            b->oom = 1;
            return;
        }
        b->data = nd;
        b->cap = cap;
    }
    memcpy(b->data + b->len, src, n);
    b->len += n;
}

/* One type byte followed by v as an n-byte big-endian number (n may be 0). */
static void put_hdr(mp_buf *b, uint8_t type, uint64_t v, size_t n)
{
    uint8_t tmp[9];
    size_t i;
    tmp[0] = type;
    for (i = 0; i < n; i++)
        tmp[1 + i] = (uint8_t)(v >> (8 * (n - 1 - i)));
    put(b, tmp, 1 + n);
}

void mp_w_nil(mp_buf *b)
{
    put_hdr(b, 0xc0, 0, 0);
}

void mp_w_bool(mp_buf *b, int v)
{
    put_hdr(b, v ? 0xc3 : 0xc2, 0, 0);
}

void mp_w_uint(mp_buf *b, uint64_t v)
{
    if (v <= 0x7f)
        put_hdr(b, (uint8_t)v, 0, 0);
    else if (v <= 0xff)
        put_hdr(b, 0xcc, v, 1);
    else if (v <= 0xffff)
        put_hdr(b, 0xcd, v, 2);
    else if (v <= 0xffffffffu)
        put_hdr(b, 0xce, v, 4);
    else
        put_hdr(b, 0xcf, v, 8);
}

void mp_w_int(mp_buf *b, int64_t v)
{
    if (v >= 0)
        mp_w_uint(b, (uint64_t)v);
    else if (v >= -32)
        put_hdr(b, (uint8_t)(0xe0 | (uint8_t)(v + 32)), 0, 0);
    else if (v >= INT8_MIN)
        put_hdr(b, 0xd0, (uint64_t)v, 1);
    else if (v >= INT16_MIN)
        put_hdr(b, 0xd1, (uint64_t)v, 2);
    else if (v >= INT32_MIN)
        put_hdr(b, 0xd2, (uint64_t)v, 4);
    else
        put_hdr(b, 0xd3, (uint64_t)v, 8);
}

void mp_w_str(mp_buf *b, const char *s, size_t len)
{
    if (len <= 31)
        put_hdr(b, (uint8_t)(0xa0 | len), 0, 0);
    else if (len <= 0xff)
        put_hdr(b, 0xd9, len, 1);
    else if (len <= 0xffff)
        put_hdr(b, 0xda, len, 2);
    else if ((uint64_t)len <= 0xffffffffu)
        put_hdr(b, 0xdb, len, 4);
    else {
        b->oom = 1;
        return;
    }
    put(b, s, len);
}

void mp_w_cstr(mp_buf *b, const char *s)
{
    mp_w_str(b, s, strlen(s));
}

void mp_w_array(mp_buf *b, uint32_t n)
{
    if (n <= 15)
        put_hdr(b, (uint8_t)(0x90 | n), 0, 0);
    else if (n <= 0xffff)
        put_hdr(b, 0xdc, n, 2);
    else
        put_hdr(b, 0xdd, n, 4);
}

void mp_w_map(mp_buf *b, uint32_t n)
{
    if (n <= 15)
        put_hdr(b, (uint8_t)(0x80 | n), 0, 0);
    else if (n <= 0xffff)
        put_hdr(b, 0xde, n, 2);
    else
        put_hdr(b, 0xdf, n, 4);
}

void mp_w_node(mp_buf *b, const mp_doc *d, const mp_node *n)
{
    size_t k, i, items;
    switch (n->kind) {
    case MP_NIL:
        mp_w_nil(b);
        break;
    case MP_BOOL:
        mp_w_bool(b, n->v.b);
        break;
    case MP_UINT:
        mp_w_uint(b, n->v.u);
        break;
    case MP_INT:
        mp_w_int(b, n->v.i);
        break;
    case MP_STR:
        mp_w_str(b, (const char *)(d->buf + n->off), n->len);
        break;
    case MP_RAW:
        put(b, d->buf + n->off, n->len);
        break;
    case MP_ARRAY:
    case MP_MAP:
        if (n->kind == MP_ARRAY)
            mp_w_array(b, n->len);
        else
            mp_w_map(b, n->len);
        items = n->kind == MP_MAP ? (size_t)n->len * 2 : n->len;
        k = (size_t)(n - d->nodes) + 1;
        for (i = 0; i < items; i++) {
            mp_w_node(b, d, &d->nodes[k]);
            k = d->nodes[k].end;
        }
        break;
    }
}
