#!/usr/bin/env node
// js-bot: an example Durak bot for durak-ref, wire protocol v1 (node >= 18).
//
// Frames on stdin/stdout: 4-byte big-endian length N, then N bytes holding
// one msgpack map (codec: @msgpack/msgpack). Frames over 1 MiB, truncated
// frames and malformed msgpack make the bot print a message on stderr and
// exit with status 1. "bye" or a clean EOF (between frames) exits with 0.
'use strict';

const { Decoder, Encoder } = require('@msgpack/msgpack');

const NAME = 'js-bot';
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

// ------------------------------------------------------------------ I/O

let greeted = false;
let trumpSuit = null; // from game_start, fallback for requests
let finished = false;
let stdinEnded = false;
let waitingDrain = false; // stdout is full: stop handling frames until 'drain'
let pending = Buffer.alloc(0); // bytes read but not yet handled

function finish(code, message) {
  if (finished) return;
  finished = true;
  if (message) process.stderr.write(`${NAME}: ${message}\n`);
  process.stdin.removeListener('data', onData);
  process.stdin.pause();
  process.exitCode = code;
  // Exit once everything written so far has been flushed to stdout.
  process.stdout.write('', () => process.exit(code));
}

function send(msg) {
  const body = encoder.encode(msg);
  const frame = Buffer.alloc(4 + body.length);
  frame.writeUInt32BE(body.length, 0);
  frame.set(body, 4);
  if (!process.stdout.write(frame) && !waitingDrain) {
    // Backpressure: the referee is not reading our output. Stop reading and
    // handling input until stdout has drained.
    waitingDrain = true;
    process.stdin.pause();
    process.stdout.once('drain', () => {
      waitingDrain = false;
      processPending();
      if (!finished && !waitingDrain) process.stdin.resume();
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
  if (!greeted) {
    if (type !== 'hello') throw new Error(`expected the referee's hello first, got "${type}"`);
    if (Array.isArray(msg.versions) && !msg.versions.includes(1)) {
      process.stderr.write(`${NAME}: referee does not list protocol 1; answering hello anyway\n`);
    }
    send({ type: 'hello', protocol: 1, name: NAME, version: '1.0', author: 'durak-ref examples' });
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
    case 'error':
      process.stderr.write(
        `${NAME}: referee error (${msg.fatal === true ? 'fatal' : 'non-fatal'}) ${msg.code}: ${msg.message}\n`,
      );
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
  if (stdinEnded && !waitingDrain && !finished) {
    if (pending.length > 0) finish(1, `truncated frame at EOF (${pending.length} byte(s) pending)`);
    else finish(0);
  }
}

function onData(chunk) {
  pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
  processPending();
}

process.stdin.on('data', onData);
process.stdin.on('end', () => {
  stdinEnded = true;
  processPending();
});
process.stdin.on('error', (err) => finish(1, `read error on stdin: ${err.message}`));
process.stdout.on('error', (err) => {
  // The referee is gone (EPIPE or similar): nothing more can be flushed.
  process.stderr.write(`${NAME}: write error on stdout: ${err.message}\n`);
  process.exit(1);
});
