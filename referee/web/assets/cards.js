/* durak-ref card kit: window.DurakCards draws cards as DOM elements with inline SVG.
   Cards are given in the log's text form: a rank (2-9 T J Q K A), then a suit (C D H S).
   Everything is built with createElement/textContent: no data ever becomes markup.
   Each card element carries data-card (its text form; backs: "back"), for tests. */
"use strict";
window.DurakCards = (function () {
  const SVG = "http://www.w3.org/2000/svg";
  const SUIT_NAMES = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
  const SUIT_SHAPES = {
    H: [["path", { d: "M50 90C22 66 4 50 4 30A23 23 0 0 1 50 18A23 23 0 0 1 96 30C96 50 78 66 50 90Z" }]],
    D: [["path", { d: "M50 4L86 50L50 96L14 50Z" }]],
    S: [["path", { d: "M50 4C36 28 6 42 6 64A21 21 0 0 0 44 74L37 96H63L56 74A21 21 0 0 0 94 64C94 42 64 28 50 4Z" }]],
    C: [["circle", { cx: 50, cy: 28, r: 19 }], ["circle", { cx: 27, cy: 60, r: 19 }],
        ["circle", { cx: 73, cy: 60, r: 19 }], ["path", { d: "M45 50L37 96H63L55 50Z" }]],
  };

  /** An <svg> of the suit mark (letter C D H S). */
  function suitSvg(suit, cls) {
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("viewBox", "0 0 100 100");
    svg.setAttribute("aria-hidden", "true");
    if (cls) svg.setAttribute("class", cls);
    for (const [tag, attrs] of SUIT_SHAPES[suit] || []) {
      const el = document.createElementNS(SVG, tag);
      for (const k in attrs) el.setAttribute(k, attrs[k]);
      svg.appendChild(el);
    }
    return svg;
  }

  /** "T" -> "10"; other ranks as they are. */
  function rankLabel(rank) { return rank === "T" ? "10" : rank; }

  /** Human text of a card: "10♥"-style names for titles and screen readers. */
  function cardName(text) { return rankLabel(text[0]) + " of " + (SUIT_NAMES[text[1]] || "?"); }

  /** A face-up card. opts.trump: the trump suit letter (its cards get a ring);
      opts.cls: extra class names. */
  function card(text, opts) {
    opts = opts || {};
    const el = document.createElement("span");
    const suit = text[1];
    el.className = "dk-card" + (suit === "H" || suit === "D" ? " dk-red" : "")
      + (opts.trump && suit === opts.trump ? " dk-trump" : "") + (opts.cls ? " " + opts.cls : "");
    el.dataset.card = text;
    el.title = cardName(text);
    el.setAttribute("role", "img");
    el.setAttribute("aria-label", cardName(text));
    const rank = document.createElement("span");
    rank.className = "dk-rank";
    rank.textContent = rankLabel(text[0]);
    el.appendChild(rank);
    el.appendChild(suitSvg(suit, "dk-corner"));
    el.appendChild(suitSvg(suit, "dk-pip"));
    return el;
  }

  /** A card face down. */
  function back(opts) {
    opts = opts || {};
    const el = document.createElement("span");
    el.className = "dk-card dk-back" + (opts.cls ? " " + opts.cls : "");
    el.dataset.card = "back";
    el.setAttribute("role", "img");
    el.setAttribute("aria-label", "a card face down");
    return el;
  }

  const RANK_ORDER = "23456789TJQKA";
  /** Cards sorted for a hand: non-trumps by suit then rank, trumps last. */
  function sortCards(cards, trump) {
    const key = (c) => (c[1] === trump ? 4 : "CDHS".indexOf(c[1])) * 13 + RANK_ORDER.indexOf(c[0]);
    return cards.slice().sort((a, b) => key(a) - key(b));
  }

  /** A hand of face-up cards (sorted, trumps last). opts.trump as for card();
      opts.fan: overlap the cards. */
  function hand(cards, opts) {
    opts = opts || {};
    const el = document.createElement("div");
    el.className = "dk-hand" + (opts.fan ? " dk-fan" : "");
    for (const c of sortCards(cards, opts.trump)) el.appendChild(card(c, opts));
    return el;
  }

  /** A hidden hand: `count` backs (at most opts.max drawn, then a count badge),
      with the cards publicly known to be in it (opts.known) face up first. */
  function hiddenHand(count, opts) {
    opts = opts || {};
    const known = opts.known || [];
    const el = document.createElement("div");
    el.className = "dk-hand dk-fan";
    for (const c of known) el.appendChild(card(c, { trump: opts.trump, cls: "dk-known" }));
    const backs = Math.max(0, count - known.length);
    const drawn = Math.min(backs, opts.max === undefined ? 8 : opts.max);
    for (let i = 0; i < drawn; i++) el.appendChild(back());
    const badge = document.createElement("span");
    badge.className = "dk-count";
    badge.textContent = count + (count === 1 ? " card" : " cards");
    el.appendChild(badge);
    return el;
  }

  /** The attack/cover pairs of the table: [[attack, cover or null], ...]. */
  function pairs(table, opts) {
    opts = opts || {};
    const el = document.createElement("div");
    el.className = "dk-pairs";
    table.forEach(([attack, cover], slot) => {
      const p = document.createElement("div");
      p.className = "dk-pair";
      p.dataset.slot = slot;
      p.appendChild(card(attack, { trump: opts.trump, cls: "dk-attack" }));
      if (cover) p.appendChild(card(cover, { trump: opts.trump, cls: "dk-cover" }));
      el.appendChild(p);
    });
    return el;
  }

  return { suitSvg, rankLabel, cardName, card, back, sortCards, hand, hiddenHand, pairs };
})();
