#!/usr/bin/env node
// js-bot: an example Durak bot for durak-ref, wire protocol v1 (node >= 18).
//
//   node bot.js                                               stdin/stdout
//   node bot.js --connect HOST[:PORT] --token TOKEN [--name NAME]    over TCP
//
// Frames: 4-byte big-endian length N, then N bytes holding one msgpack map
// (codec: @msgpack/msgpack). Frames over 1 MiB, truncated frames and
// malformed msgpack make the bot print a message on stderr and exit with
// status 1; so does a refusal (an error with code "auth", "busy", "limit" or
// "version"). "bye" or a clean end of stream (between frames) exits with 0.
// Every "ping" is answered with a "pong".
'use strict';

const net = require('net');
const { Decoder, Encoder } = require('@msgpack/msgpack');

const BOT_NAME = 'js-bot';
let NAME = BOT_NAME; // the name sent in the hello (--name)
let TOKEN = null; // the seat token (--token), TCP only
const DEFAULT_PORT = 7724;
const REFUSALS = ['auth', 'busy', 'limit', 'version'];
const MAX_FRAME = 1024 * 1024;
const RANKS = '23456789TJQKA';
const SUITS = 'CDHS';

const decoder = new Decoder({
  maxStrLength: MAX_FRAME,
  maxBinLength: MAX_FRAME,
  maxArrayLength: MAX_FRAME,
  maxMapLength: MAX_FRAME,
  maxExtLength: MAX_FRAME,
});
const encoder = new Encoder();

// ------------------------------------------------------------------ cards

/** Rank 0 ("2") .. 12 ("A"), or -1. Accepts "10" for T and lower case. */
function cardRank(card) {
  if (typeof card !== 'string') return -1;
  const c = card.toUpperCase();
  if (c.length === 3 && c.startsWith('10')) return RANKS.indexOf('T');
  if (c.length !== 2) return -1;
  return RANKS.indexOf(c[0]);
}

function suitLetter(ch) {
  if (typeof ch !== 'string' || ch.length !== 1) return null;
  const s = ch.toUpperCase();
  return SUITS.includes(s) ? s : null;
}

function cardSuit(card) {
  return typeof card === 'string' && card.length >= 2 ? suitLetter(card[card.length - 1]) : null;
}

// ------------------------------------------------------------------ strategy

/**
 * Heuristic, first match wins:
 *   exchange; attack with the lowest non-trump (else lowest trump);
 *   cover with the lowest non-trump, else transfer with the lowest non-trump,
 *   else show a trump; if only a trump would do and the talon holds more than
 *   10 cards, take; else cover (or transfer) with the lowest trump;
 *   throw in the lowest non-trump; pass; throw in the lowest trump; take;
 *   finally the first legal action.
 * Returns an index into `legal`.
 */
function choose(legal, trump, talon) {
  const kinds = ['attack', 'cover', 'throw_in', 'transfer', 'show_trump'];
  const plain = {};
  const trumps = {};
  const first = {};
  for (const k of kinds) {
    plain[k] = null;
    trumps[k] = null;
  }
  legal.forEach((action, i) => {
    if (action === null || typeof action !== 'object') return;
    const type = action.type;
    if (type === 'take' || type === 'pass' || type === 'exchange') {
      if (!(type in first)) first[type] = i;
      return;
    }
    if (!kinds.includes(type)) return; // unknown action: only via the fallback
    let rank = cardRank(action.card);
    if (rank < 0) rank = 50; // unparseable card: least preferred
    const bucket = trump !== null && cardSuit(action.card) === trump ? trumps : plain;
    if (bucket[type] === null || rank < bucket[type].rank) bucket[type] = { i, rank };
  });
  const idx = (b) => (b === null ? undefined : b.i);
  const order = [
    () => first.exchange,
    () => idx(plain.attack),
    () => idx(trumps.attack),
    () => idx(plain.cover),
    () => idx(plain.transfer),
    () => idx(plain.show_trump),
    () => idx(trumps.show_trump),
    () =>
      (trumps.cover !== null || trumps.transfer !== null) && talon > 10 ? first.take : undefined,
    () => idx(trumps.cover),
    () => idx(trumps.transfer),
    () => idx(plain.throw_in),
    () => first.pass,
    () => idx(trumps.throw_in),
    () => first.take,
  ];
  for (const rule of order) {
    const i = rule();
    if (i !== undefined) return i;
  }
  return 0;
}

// ------------------------------------------------------------------ command line

function usage(message) {
  process.stderr.write(
    `${BOT_NAME}: ${message}\nusage: node bot.js [--connect HOST[:PORT] --token TOKEN [--name NAME]]\n`,
  );
  process.exit(2);
}

/** HOST:PORT, HOST, [IPV6]:PORT or [IPV6] -> { host, port }; the port defaults to 7724. */
function parseAddress(text) {
  let host = text;
  let port = null;
  const bracketed = /^\[([^\]]+)\](?::(.*))?$/.exec(text);
  if (bracketed) {
    host = bracketed[1];
    port = bracketed[2] ?? null;
  } else if (text.startsWith('[')) {
    usage(`--connect: expected [IPV6]:PORT, got '${text}'`);
  } else if (text.split(':').length === 2) {
    [host, port] = text.split(':');
  } else if (text.includes(':')) {
    usage(`--connect: write an IPv6 address in brackets, like [::1]:7724; got '${text}'`);
  }
  if (host === '') usage(`--connect: expected HOST:PORT, got '${text}'`);
  if (port === null) return { host, port: DEFAULT_PORT };
  if (!/^[0-9]{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    usage(`--connect: the port must be a number from 1 to 65535, got '${port}'`);
  }
  return { host, port: Number(port) };
}

/** --connect/--token/--name (also --flag=VALUE) -> { host, port } or null (stdin/stdout). */
function parseArgs(argv) {
  const values = {};
  for (let i = 0; i < argv.length; i++) {
    const eq = argv[i].indexOf('=');
    const flag = eq >= 0 ? argv[i].slice(0, eq) : argv[i];
    if (!['--connect', '--token', '--name'].includes(flag)) usage(`unexpected argument '${argv[i]}'`);
    if (eq >= 0) values[flag] = argv[i].slice(eq + 1);
    else if (i + 1 < argv.length) values[flag] = argv[++i];
    else usage(`${flag} needs a value`);
  }
  if (values['--connect'] === undefined) {
    if (values['--token'] !== undefined || values['--name'] !== undefined) {
      usage('--token and --name only make sense with --connect HOST:PORT');
    }
    return null;
  }
  // DURAK_TOKEN keeps the secret out of the process list (ps shows the arguments).
  TOKEN = values['--token'] ?? process.env.DURAK_TOKEN ?? null;
  if (TOKEN === null || TOKEN.length < 1 || TOKEN.length > 256) {
    usage('--connect needs --token TOKEN (1 to 256 characters)');
  }
  if (values['--name'] !== undefined) {
    NAME = values['--name'];
    if (NAME.length < 1 || NAME.length > 64) usage(`--name: expected 1 to 64 characters, got '${NAME}'`);
  }
  return parseAddress(values['--connect']);
}

// ------------------------------------------------------------------ I/O

const address = parseArgs(process.argv.slice(2));
// Where frames come from and go to: stdin/stdout, or one TCP socket for both.
const input = address === null ? process.stdin : net.connect({ host: address.host, port: address.port });
const output = address === null ? process.stdout : input;

let greeted = false;
let trumpSuit = null; // from game_start, fallback for requests
let finished = false;
let inputEnded = false;
let waitingDrain = false; // stdout is full: stop handling frames until 'drain'
let pending = Buffer.alloc(0); // bytes read but not yet handled

function finish(code, message) {
  if (finished) return;
  finished = true;
  if (message) process.stderr.write(`${NAME}: ${message}\n`);
  input.removeListener('data', onData);
  input.pause();
  process.exitCode = code;
  // Exit once everything written so far has been flushed.
  if (output.writable) output.write('', () => process.exit(code));
  else process.exit(code);
}

function send(msg) {
  const body = encoder.encode(msg);
  const frame = Buffer.alloc(4 + body.length);
  frame.writeUInt32BE(body.length, 0);
  frame.set(body, 4);
  if (!output.write(frame) && !waitingDrain) {
    // Backpressure: the referee is not reading our output. Stop reading and
    // handling input until the output has drained.
    waitingDrain = true;
    input.pause();
    output.once('drain', () => {
      waitingDrain = false;
      processPending();
      if (!finished && !waitingDrain) input.resume();
    });
  }
}

function handleRequest(msg) {
  const { id, legal } = msg;
  if (!Number.isInteger(id) && typeof id !== 'bigint') throw new Error('request without an integer id');
  if (!Array.isArray(legal) || legal.length === 0) throw new Error('request without a non-empty legal array');
  const obs = msg.observation !== null && typeof msg.observation === 'object' ? msg.observation : {};
  const trump = suitLetter(obs.trump_suit) ?? cardSuit(obs.trump) ?? trumpSuit;
  const talon = Number.isInteger(obs.talon) ? obs.talon : 0;
  const pick = choose(legal, trump, talon);
  send({ type: 'action', id, action: legal[pick] });
}

function handle(msg) {
  if (msg === null || typeof msg !== 'object' || Array.isArray(msg) || msg instanceof Uint8Array) {
    throw new Error('the message is not a map');
  }
  const type = msg.type;
  if (typeof type !== 'string') throw new Error('message without a string "type"');
  if (type === 'error') {
    const text = `referee error (${msg.fatal === true ? 'fatal' : 'non-fatal'}) ${msg.code}: ${msg.message}`;
    // A refusal (bad token, seat taken, too many connections, version): the
    // referee closes the connection next.
    if (!greeted || REFUSALS.includes(msg.code)) throw new Error(text);
    process.stderr.write(`${NAME}: ${text}\n`);
    return;
  }
  if (!greeted) {
    if (type !== 'hello') throw new Error(`expected the referee's hello first, got "${type}"`);
    if (Array.isArray(msg.versions) && !msg.versions.includes(1)) {
      process.stderr.write(`${NAME}: referee does not list protocol 1; answering hello anyway\n`);
    }
    const hello = { type: 'hello', protocol: 1, name: NAME, version: '1.0', author: 'durak-ref examples' };
    if (TOKEN !== null) hello.token = TOKEN;
    send(hello);
    greeted = true;
    return;
  }
  switch (type) {
    case 'request':
      handleRequest(msg);
      break;
    case 'game_start':
      trumpSuit = suitLetter(msg.trump_suit);
      break;
    case 'ping':
      if (!Number.isInteger(msg.id) && typeof msg.id !== 'bigint') throw new Error('ping without an integer id');
      send({ type: 'pong', id: msg.id });
      break;
    case 'bye':
      finish(0);
      break;
    case 'event':
    case 'game_end':
      break;
    default:
      process.stderr.write(`${NAME}: ignoring message of unknown type "${type}"\n`);
  }
}

function processPending() {
  let off = 0;
  try {
    while (!finished && !waitingDrain && pending.length - off >= 4) {
      const n = pending.readUInt32BE(off);
      if (n === 0) throw new Error('empty frame (length 0)');
      if (n > MAX_FRAME) throw new Error(`frame of ${n} bytes exceeds the ${MAX_FRAME} byte limit`);
      if (pending.length - off - 4 < n) break; // wait for the rest of the body
      const body = pending.subarray(off + 4, off + 4 + n);
      off += 4 + n;
      let msg;
      try {
        msg = decoder.decode(body);
      } catch (err) {
        throw new Error(`malformed frame: ${err.message}`);
      }
      handle(msg);
    }
  } catch (err) {
    finish(1, err.message);
    return;
  }
  pending = pending.subarray(off);
  if (inputEnded && !waitingDrain && !finished) {
    if (pending.length > 0) finish(1, `truncated frame at EOF (${pending.length} byte(s) pending)`);
    else finish(0);
  }
}

function onData(chunk) {
  pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
  processPending();
}

input.on('data', onData);
input.on('end', () => {
  inputEnded = true;
  processPending();
});
if (address === null) {
  process.stdin.on('error', (err) => finish(1, `read error on stdin: ${err.message}`));
  process.stdout.on('error', (err) => {
    // The referee is gone (EPIPE or similar): nothing more can be flushed.
    process.stderr.write(`${NAME}: write error on stdout: ${err.message}\n`);
    process.exit(1);
  });
} else {
  input.setNoDelay(true); // frames are small and the referee is waiting for each one
  input.on('error', (err) => {
    // Refused, reset, unreachable...: nothing more can be read or flushed.
    const where = `${address.host}:${address.port}`;
    process.stderr.write(`${NAME}: connection to ${where} failed: ${err.message}\n`);
    process.exit(1);
  });
}
