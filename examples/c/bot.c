/*
 * c-bot: an example Durak bot for durak-ref, wire protocol v1.
 *
 * Frames on stdin/stdout: 4-byte big-endian length N, then N bytes holding
 * one msgpack map. Frames over 1 MiB, truncated frames and malformed
 * msgpack make the bot print a message on stderr and exit with status 1.
 * "bye" or a clean EOF (between frames) exits with status 0.
 *
 * Strategy: a simple heuristic over the "legal" list of each request (see
 * choose() below). The chosen legal map is re-encoded and sent back.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msgpack.h"

#define MAX_FRAME 1048576u
#define BOT_NAME "c-bot"

static void die(const char *fmt, ...)
{
    va_list ap;
    fputs(BOT_NAME ": ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void warn(const char *fmt, ...)
{
    va_list ap;
    fputs(BOT_NAME ": ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* ---------------------------------------------------------------- framing */

/* Read one frame body into *out (malloc'ed). Returns 0 at a clean EOF. */
static int read_frame(uint8_t **out, size_t *len)
{
    uint8_t hdr[4];
    size_t got = fread(hdr, 1, sizeof hdr, stdin);
    unsigned long n;
    uint8_t *body;

    if (got == 0 && feof(stdin))
        return 0;
    if (ferror(stdin))
        die("read error on stdin");
    if (got < sizeof hdr)
        die("truncated frame header (EOF after %lu byte(s))", (unsigned long)got);
    n = ((unsigned long)hdr[0] << 24) | ((unsigned long)hdr[1] << 16) |
        ((unsigned long)hdr[2] << 8) | (unsigned long)hdr[3];
    if (n == 0)
        die("empty frame (length 0)");
    if (n > MAX_FRAME)
        die("frame of %lu bytes exceeds the %lu byte limit", n, (unsigned long)MAX_FRAME);
    body = malloc(n);
    if (body == NULL)
        die("out of memory");
    got = fread(body, 1, n, stdin);
    if (got < n)
        die("truncated frame: got %lu of %lu byte(s)", (unsigned long)got, n);
    *out = body;
    *len = n;
    return 1;
}

static void write_frame(const mp_buf *b)
{
    uint8_t hdr[4];
    if (b->oom)
        die("out of memory while encoding");
    if (b->len == 0 || b->len > MAX_FRAME)
        die("refusing to send a frame of %lu bytes", (unsigned long)b->len);
    hdr[0] = (uint8_t)(b->len >> 24);
    hdr[1] = (uint8_t)(b->len >> 16);
    hdr[2] = (uint8_t)(b->len >> 8);
    hdr[3] = (uint8_t)b->len;
    if (fwrite(hdr, 1, 4, stdout) != 4 || fwrite(b->data, 1, b->len, stdout) != b->len ||
        fflush(stdout) != 0)
        die("write error on stdout");
}

/* ------------------------------------------------------------------ cards */

/* Rank 0 ("2") .. 12 ("A"), or -1. Accepts "10" for T and lower case. */
static int card_rank(const char *s, size_t len)
{
    static const char ranks[] = "23456789TJQKA";
    const char *r;
    if (s == NULL)
        return -1;
    if (len == 3 && s[0] == '1' && s[1] == '0')
        return 8;
    if (len != 2)
        return -1;
    r = strchr(ranks, s[0] >= 'a' && s[0] <= 'z' ? s[0] - 'a' + 'A' : s[0]);
    return r != NULL && *r != '\0' ? (int)(r - ranks) : -1;
}

/* 'C', 'D', 'H' or 'S' for a suit letter (either case), else '\0'. */
static char suit_letter(char c)
{
    if (c >= 'a' && c <= 'z')
        c = (char)(c - 'a' + 'A');
    return c != '\0' && strchr("CDHS", c) != NULL ? c : '\0';
}

/* Suit of a card ("6S", "10h"), or '\0'. */
static char card_suit(const char *s, size_t len)
{
    return s != NULL && len >= 2 ? suit_letter(s[len - 1]) : '\0';
}

/* ------------------------------------------------------------------ state */

static char g_trump_suit = '\0'; /* from game_start, fallback for requests */

enum { K_ATTACK, K_COVER, K_THROW_IN, K_TRANSFER, K_SHOW_TRUMP, K_N };

typedef struct {
    int idx;  /* index into legal, -1 if none */
    int rank;
} best_t;

static void consider(best_t *b, int idx, int rank)
{
    if (b->idx < 0 || rank < b->rank) {
        b->idx = idx;
        b->rank = rank;
    }
}

/*
 * Heuristic, first match wins:
 *   exchange; attack with the lowest non-trump (else lowest trump);
 *   cover with the lowest non-trump, else transfer with the lowest non-trump,
 *   else show a trump; if only a trump would do and the talon holds more than
 *   10 cards, take; else cover (or transfer) with the lowest trump;
 *   throw in the lowest non-trump; pass; throw in the lowest trump; take;
 *   finally the first legal action.
 */
static int choose(const mp_doc *d, const mp_node *legal, char trump, int64_t talon)
{
    best_t plain[K_N], trumps[K_N];
    int take = -1, pass = -1, exchange = -1;
    size_t i;
    int k;

    for (k = 0; k < K_N; k++) {
        plain[k].idx = trumps[k].idx = -1;
        plain[k].rank = trumps[k].rank = 99;
    }
    for (i = 0; i < legal->len; i++) {
        const mp_node *a = mp_array_at(d, legal, i);
        const mp_node *type = mp_map_get(d, a, "type");
        const mp_node *card = mp_map_get(d, a, "card");
        const char *cs = mp_str_ptr(d, card);
        size_t clen = cs != NULL ? card->len : 0;
        int rank = card_rank(cs, clen);

        if (type == NULL || type->kind != MP_STR)
            continue;
        if (mp_str_eq(d, type, "take")) {
            if (take < 0)
                take = (int)i;
            continue;
        }
        if (mp_str_eq(d, type, "pass")) {
            if (pass < 0)
                pass = (int)i;
            continue;
        }
        if (mp_str_eq(d, type, "exchange")) {
            if (exchange < 0)
                exchange = (int)i;
            continue;
        }
        if (mp_str_eq(d, type, "attack"))
            k = K_ATTACK;
        else if (mp_str_eq(d, type, "cover"))
            k = K_COVER;
        else if (mp_str_eq(d, type, "throw_in"))
            k = K_THROW_IN;
        else if (mp_str_eq(d, type, "transfer"))
            k = K_TRANSFER;
        else if (mp_str_eq(d, type, "show_trump"))
            k = K_SHOW_TRUMP;
        else
            continue; /* unknown action type: only reachable via the fallback */
        if (rank < 0)
            rank = 50; /* unparseable card: least preferred */
        if (trump != '\0' && card_suit(cs, clen) == trump)
            consider(&trumps[k], (int)i, rank);
        else
            consider(&plain[k], (int)i, rank);
    }

    if (exchange >= 0)
        return exchange;
    if (plain[K_ATTACK].idx >= 0)
        return plain[K_ATTACK].idx;
    if (trumps[K_ATTACK].idx >= 0)
        return trumps[K_ATTACK].idx;
    if (plain[K_COVER].idx >= 0)
        return plain[K_COVER].idx;
    if (plain[K_TRANSFER].idx >= 0)
        return plain[K_TRANSFER].idx;
    if (plain[K_SHOW_TRUMP].idx >= 0)
        return plain[K_SHOW_TRUMP].idx;
    if (trumps[K_SHOW_TRUMP].idx >= 0)
        return trumps[K_SHOW_TRUMP].idx;
    if ((trumps[K_COVER].idx >= 0 || trumps[K_TRANSFER].idx >= 0) && take >= 0 && talon > 10)
        return take;
    if (trumps[K_COVER].idx >= 0)
        return trumps[K_COVER].idx;
    if (trumps[K_TRANSFER].idx >= 0)
        return trumps[K_TRANSFER].idx;
    if (plain[K_THROW_IN].idx >= 0)
        return plain[K_THROW_IN].idx;
    if (pass >= 0)
        return pass;
    if (trumps[K_THROW_IN].idx >= 0)
        return trumps[K_THROW_IN].idx;
    if (take >= 0)
        return take;
    return 0;
}

/* ------------------------------------------------------------------ messages */

static void send_hello(void)
{
    mp_buf b;
    mp_buf_init(&b);
    mp_w_map(&b, 5);
    mp_w_cstr(&b, "type");
    mp_w_cstr(&b, "hello");
    mp_w_cstr(&b, "protocol");
    mp_w_uint(&b, 1);
    mp_w_cstr(&b, "name");
    mp_w_cstr(&b, BOT_NAME);
    mp_w_cstr(&b, "version");
    mp_w_cstr(&b, "1.0");
    mp_w_cstr(&b, "author");
    mp_w_cstr(&b, "durak-ref examples");
    write_frame(&b);
    mp_buf_free(&b);
}

static void check_versions(const mp_doc *d, const mp_node *msg)
{
    const mp_node *versions = mp_map_get(d, msg, "versions");
    size_t i;
    int64_t v;
    if (versions == NULL || versions->kind != MP_ARRAY)
        return;
    for (i = 0; i < versions->len; i++)
        if (mp_get_int(mp_array_at(d, versions, i), &v) && v == 1)
            return;
    warn("referee does not list protocol 1 in its versions; answering hello anyway");
}

static void handle_request(const mp_doc *d, const mp_node *msg)
{
    const mp_node *id = mp_map_get(d, msg, "id");
    const mp_node *legal = mp_map_get(d, msg, "legal");
    const mp_node *obs = mp_map_get(d, msg, "observation");
    const mp_node *n;
    char trump = g_trump_suit;
    int64_t talon = 0;
    int pick;
    mp_buf b;

    if (id == NULL || (id->kind != MP_UINT && id->kind != MP_INT))
        die("request without an integer id");
    if (legal == NULL || legal->kind != MP_ARRAY || legal->len == 0)
        die("request without a non-empty legal array");
    if ((n = mp_map_get(d, obs, "trump_suit")) != NULL && n->kind == MP_STR && n->len == 1)
        trump = suit_letter(mp_str_ptr(d, n)[0]);
    else if ((n = mp_map_get(d, obs, "trump")) != NULL && n->kind == MP_STR)
        trump = card_suit(mp_str_ptr(d, n), n->len);
    if (!mp_get_int(mp_map_get(d, obs, "talon"), &talon))
        talon = 0;

    pick = choose(d, legal, trump, talon);

    mp_buf_init(&b);
    mp_w_map(&b, 3);
    mp_w_cstr(&b, "type");
    mp_w_cstr(&b, "action");
    mp_w_cstr(&b, "id");
    mp_w_node(&b, d, id);
    mp_w_cstr(&b, "action");
    mp_w_node(&b, d, mp_array_at(d, legal, (size_t)pick));
    write_frame(&b);
    mp_buf_free(&b);
}

static void print_error(const mp_doc *d, const mp_node *msg)
{
    const mp_node *code = mp_map_get(d, msg, "code");
    const mp_node *text = mp_map_get(d, msg, "message");
    const mp_node *fatal = mp_map_get(d, msg, "fatal");
    int c_len = code != NULL && code->kind == MP_STR ? (int)code->len : 0;
    int t_len = text != NULL && text->kind == MP_STR ? (int)text->len : 0;
    warn("referee error (%s) %.*s: %.*s",
         fatal != NULL && fatal->kind == MP_BOOL && fatal->v.b ? "fatal" : "non-fatal", c_len,
         c_len ? mp_str_ptr(d, code) : "", t_len, t_len ? mp_str_ptr(d, text) : "");
}

int main(void)
{
    int greeted = 0;

    for (;;) {
        uint8_t *body = NULL;
        size_t len = 0;
        mp_doc d;
        const mp_node *msg, *type;
        int stop = 0;

        if (!read_frame(&body, &len))
            return 0; /* EOF between frames: the referee is gone */
        if (mp_parse(&d, body, len) != 0)
            die("malformed frame: %s", d.err);
        msg = mp_root(&d);
        if (msg->kind != MP_MAP)
            die("malformed frame: the message is not a map");
        type = mp_map_get(&d, msg, "type");
        if (type == NULL || type->kind != MP_STR)
            die("malformed message: no string \"type\"");

        if (!greeted) {
            if (!mp_str_eq(&d, type, "hello"))
                die("expected the referee's hello first, got \"%.*s\"", (int)type->len,
                    mp_str_ptr(&d, type));
            check_versions(&d, msg);
            send_hello();
            greeted = 1;
        } else if (mp_str_eq(&d, type, "request")) {
            handle_request(&d, msg);
        } else if (mp_str_eq(&d, type, "game_start")) {
            const mp_node *ts = mp_map_get(&d, msg, "trump_suit");
            g_trump_suit = ts != NULL && ts->kind == MP_STR && ts->len == 1
                               ? suit_letter(mp_str_ptr(&d, ts)[0])
                               : '\0';
        } else if (mp_str_eq(&d, type, "error")) {
            print_error(&d, msg);
        } else if (mp_str_eq(&d, type, "bye")) {
            stop = 1;
        } else if (!mp_str_eq(&d, type, "event") && !mp_str_eq(&d, type, "game_end")) {
            warn("ignoring message of unknown type \"%.*s\"", (int)type->len,
                 mp_str_ptr(&d, type));
        }
        mp_doc_free(&d);
        free(body);
        if (stop)
            return 0;
    }
}
