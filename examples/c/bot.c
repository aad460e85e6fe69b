/*
 * c-bot: an example Durak bot for durak-ref, wire protocol v1.
 *
 *     bot                                          stdin/stdout (started by the referee)
 *     bot --connect HOST[:PORT] --token TOKEN [--name NAME]    over TCP
 *
 * Frames: 4-byte big-endian length N, then N bytes holding one msgpack map.
 * Frames over 1 MiB, truncated frames and malformed msgpack make the bot print
 * a message on stderr and exit with status 1; so does a refusal (an error with
 * code "auth", "busy", "limit" or "version"). "bye" or a clean end of stream
 * (between frames) exits with status 0. Every "ping" is answered with a "pong".
 *
 * Strategy: a simple heuristic over the "legal" list of each request (see
 * choose() below). The chosen legal map is re-encoded and sent back.
 */
#define _POSIX_C_SOURCE 200112L

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netdb.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "msgpack.h"

#define MAX_FRAME 1048576u
#define BOT_NAME "c-bot"
#define DEFAULT_PORT "7724"
#define MAX_NAME 64
#define MAX_TOKEN 256

static const char *g_name = BOT_NAME; /* the name sent in the hello (--name) */
static const char *g_token = NULL;    /* the seat token (--token), TCP only */
static FILE *g_in;                    /* stdin, or the TCP connection */
static FILE *g_out;                   /* stdout, or the TCP connection */

static void die(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", g_name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void warn(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", g_name);
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
    size_t got = fread(hdr, 1, sizeof hdr, g_in);
    unsigned long n;
    uint8_t *body;

    if (got == 0 && feof(g_in))
        return 0;
    if (ferror(g_in))
        die("read error: %s", strerror(errno));
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
    got = fread(body, 1, n, g_in);
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
    if (fwrite(hdr, 1, 4, g_out) != 4 || fwrite(b->data, 1, b->len, g_out) != b->len ||
        fflush(g_out) != 0)
        die("write error: %s", strerror(errno));
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
    mp_w_map(&b, g_token != NULL ? 6 : 5);
    mp_w_cstr(&b, "type");
    mp_w_cstr(&b, "hello");
    mp_w_cstr(&b, "protocol");
    mp_w_uint(&b, 1);
    mp_w_cstr(&b, "name");
    mp_w_cstr(&b, g_name);
    mp_w_cstr(&b, "version");
    mp_w_cstr(&b, "1.0");
    mp_w_cstr(&b, "author");
    mp_w_cstr(&b, "durak-ref examples");
    if (g_token != NULL) {
        mp_w_cstr(&b, "token");
        mp_w_cstr(&b, g_token);
    }
    write_frame(&b);
    mp_buf_free(&b);
}

/* {"type": "pong", "id": <the ping's id>} */
static void handle_ping(const mp_doc *d, const mp_node *msg)
{
    const mp_node *id = mp_map_get(d, msg, "id");
    mp_buf b;

    if (id == NULL || (id->kind != MP_UINT && id->kind != MP_INT))
        die("ping without an integer id");
    mp_buf_init(&b);
    mp_w_map(&b, 2);
    mp_w_cstr(&b, "type");
    mp_w_cstr(&b, "pong");
    mp_w_cstr(&b, "id");
    mp_w_node(&b, d, id);
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

/* Print the error on stderr. Returns 1 if it refuses the connection (the
 * referee closes it next): code auth, busy, limit or version. */
static int print_error(const mp_doc *d, const mp_node *msg)
{
    const mp_node *code = mp_map_get(d, msg, "code");
    const mp_node *text = mp_map_get(d, msg, "message");
    const mp_node *fatal = mp_map_get(d, msg, "fatal");
    int c_len = code != NULL && code->kind == MP_STR ? (int)code->len : 0;
    int t_len = text != NULL && text->kind == MP_STR ? (int)text->len : 0;
    warn("referee error (%s) %.*s: %.*s",
         fatal != NULL && fatal->kind == MP_BOOL && fatal->v.b ? "fatal" : "non-fatal", c_len,
         c_len ? mp_str_ptr(d, code) : "", t_len, t_len ? mp_str_ptr(d, text) : "");
    return mp_str_eq(d, code, "auth") || mp_str_eq(d, code, "busy") ||
           mp_str_eq(d, code, "limit") || mp_str_eq(d, code, "version");
}

/* ------------------------------------------------------------------ TCP */

/* A bad command line: say why, show the usage, exit with status 2. */
static void usage(const char *fmt, ...)
{
    va_list ap;
    fputs(BOT_NAME ": ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nusage: bot [--connect HOST[:PORT] --token TOKEN [--name NAME]]\n", stderr);
    exit(2);
}

/* Split HOST:PORT, HOST, [IPV6]:PORT or [IPV6] in place; the port defaults to 7724. */
static void split_address(char *text, char **host, const char **port)
{
    char *colon;
    *port = DEFAULT_PORT;
    if (text[0] == '[') {
        char *close = strchr(text, ']');
        if (close == NULL || close == text + 1 || (close[1] != '\0' && close[1] != ':'))
            usage("--connect: expected [IPV6]:PORT, got '%s'", text);
        *host = text + 1;
        *close = '\0';
        if (close[1] == ':')
            *port = close + 2;
    } else {
        colon = strchr(text, ':');
        if (colon != NULL && strchr(colon + 1, ':') != NULL)
            usage("--connect: write an IPv6 address in brackets, like [::1]:7724; got '%s'", text);
        *host = text;
        if (colon != NULL) {
            *colon = '\0';
            *port = colon + 1;
        }
    }
    if (**host == '\0')
        usage("--connect: expected HOST:PORT, got an empty host");
    if (**port == '\0' || strspn(*port, "0123456789") != strlen(*port) || strlen(*port) > 5 ||
        atol(*port) < 1 || atol(*port) > 65535)
        usage("--connect: the port must be a number from 1 to 65535, got '%s'", *port);
}

/* Connect to host:port (every address getaddrinfo gives, in turn); point g_in
 * and g_out at the connection. */
static void connect_tcp(const char *host, const char *port)
{
    struct addrinfo hints, *list, *ai;
    int fd = -1, err, saved = 0, out_fd;

    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    err = getaddrinfo(host, port, &hints, &list);
    if (err != 0)
        die("cannot resolve %s: %s", host, gai_strerror(err));
    for (ai = list; ai != NULL; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (fd < 0) {
            saved = errno;
            continue;
        }
        while ((err = connect(fd, ai->ai_addr, ai->ai_addrlen)) != 0 && errno == EINTR)
            ;
        if (err == 0)
            break;
        saved = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(list);
    if (fd < 0)
        die("cannot connect to %s port %s: %s", host, port, strerror(saved));
    /* A write to a connection the referee has closed must fail with EPIPE (and
     * be reported), not kill the bot with SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
    /* One FILE per direction: a stdio stream must not mix reads and writes. */
    out_fd = dup(fd);
    if (out_fd < 0 || (g_in = fdopen(fd, "rb")) == NULL || (g_out = fdopen(out_fd, "wb")) == NULL)
        die("cannot set up the connection: %s", strerror(errno));
}

/* Parse --connect/--token/--name (also --flag=VALUE); connect if asked to. */
static void parse_args(int argc, char **argv)
{
    char *address = NULL, *host;
    const char *port;
    int i, named = 0;

    for (i = 1; i < argc; i++) {
        static const char *const flags[] = {"--connect", "--token", "--name"};
        char *value = NULL, *eq = strchr(argv[i], '=');
        size_t len = eq != NULL ? (size_t)(eq - argv[i]) : strlen(argv[i]);
        int f;

        for (f = 0; f < 3; f++)
            if (strlen(flags[f]) == len && strncmp(argv[i], flags[f], len) == 0)
                break;
        if (f == 3)
            usage("unexpected argument '%s'", argv[i]);
        if (eq != NULL)
            value = eq + 1;
        else if (i + 1 < argc)
            value = argv[++i];
        else
            usage("%s needs a value", flags[f]);
        if (f == 0)
            address = value;
        else if (f == 1)
            g_token = value;
        else {
            g_name = value;
            named = 1;
        }
    }
    if (address == NULL) {
        if (g_token != NULL || named)
            usage("--token and --name only make sense with --connect HOST:PORT");
        return;
    }
    if (g_token == NULL)
        g_token = getenv("DURAK_TOKEN"); /* keeps the secret out of the process list */
    if (g_token == NULL || g_token[0] == '\0' || strlen(g_token) > MAX_TOKEN)
        usage("--connect needs --token TOKEN (1 to %d characters)", MAX_TOKEN);
    if (g_name[0] == '\0' || strlen(g_name) > MAX_NAME)
        usage("--name: expected 1 to %d characters, got '%s'", MAX_NAME, g_name);
    split_address(address, &host, &port);
    connect_tcp(host, port);
}

int main(int argc, char **argv)
{
    int greeted = 0;

    g_in = stdin;
    g_out = stdout;
    parse_args(argc, argv);

    for (;;) {
        uint8_t *body = NULL;
        size_t len = 0;
        mp_doc d;
        const mp_node *msg, *type;
        int stop = 0;

        if (!read_frame(&body, &len))
            return 0; /* end of stream between frames: the referee is gone */
        if (mp_parse(&d, body, len) != 0)
            die("malformed frame: %s", d.err);
        msg = mp_root(&d);
        if (msg->kind != MP_MAP)
            die("malformed frame: the message is not a map");
        type = mp_map_get(&d, msg, "type");
        if (type == NULL || type->kind != MP_STR)
            die("malformed message: no string \"type\"");

        if (mp_str_eq(&d, type, "error")) {
            if (print_error(&d, msg) || !greeted)
                exit(1); /* refused: the referee closes the connection */
        } else if (!greeted) {
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
        } else if (mp_str_eq(&d, type, "ping")) {
            handle_ping(&d, msg);
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
