/* durak-ref replay viewer. Draws the states in #replay-data, which durak-ref computed by
   re-simulating the log with its rules engine; this script decides nothing about the game.
   Every text from the log (names, reasons, evidence) goes in with textContent.
   Test hooks: [data-seat] seat boxes, [data-card] cards, #table-pairs, #talon-count,
   #discard-count, #step-info; window.durakReplay.goto(game, step) and .where(). */
"use strict";
(function () {
  const C = window.DurakCards;
  const data = JSON.parse(document.getElementById("replay-data").textContent);
  const app = document.getElementById("app");
  const seatView = data.view; // null: omniscient; else the seat whose view this is
  let current = 0; // index into data.replays
  let step = 0; // index into that replay's frames
  let timer = null;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function fmtMs(ms) {
    if (ms === null || ms === undefined) return null;
    return ms >= 1000 ? (ms / 1000).toFixed(2) + " s" : ms.toFixed(ms < 10 ? 2 : 1) + " ms";
  }
  function fmtCount(n, one, many) { return n + " " + (n === 1 ? one : many); }

  /* ---------------------------------------------------------------- page skeleton */
  app.textContent = "";
  const header = el("header", "rp-header");
  const h1 = el("h1", null, "durak-ref replay");
  header.appendChild(h1);
  if (data.source) header.appendChild(el("div", "rp-source", data.source));
  const viewLabel = el("div", "rp-view", seatView === null
    ? "Omniscient view: every hand face up"
    : "Seat " + seatView + "'s view: only what that seat saw");
  viewLabel.id = "view-label";
  header.appendChild(viewLabel);
  app.appendChild(header);

  app.appendChild(summarySection(data.match));

  const layout = el("div", "rp-layout");
  const side = el("nav", "rp-games");
  side.setAttribute("aria-label", "games of this log");
  const main = el("main", "rp-main");
  layout.appendChild(main);
  layout.appendChild(side);
  app.appendChild(layout);

  const gameTitle = el("h2", "rp-game-title");
  gameTitle.id = "game-title";
  main.appendChild(gameTitle);
  const table = el("div", "rp-table dk-felt");
  table.id = "table";
  main.appendChild(table);

  const controls = el("div", "rp-controls");
  /* Icons as SVG paths (24x24): no icon font, no glyph a system may lack. */
  const ICONS = {
    first: "M4 4h3v16H4zM15 4v16L7 12zM23 4v16l-8-8z",
    prev: "M6 4h3v16H6zM19 4v16L10 12z",
    play: "M7 4v16l13-8z",
    pause: "M6 4h4v16H6zM14 4h4v16h-4z",
    next: "M5 4v16l9-8zM15 4h3v16h-3z",
    last: "M1 4v16l8-8zM9 4v16l8-8zM17 4h3v16h-3z",
  };
  function icon(name) {
    const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("viewBox", "0 0 24 24");
    svg.setAttribute("aria-hidden", "true");
    const p = document.createElementNS("http://www.w3.org/2000/svg", "path");
    p.setAttribute("d", ICONS[name]);
    svg.appendChild(p);
    return svg;
  }
  function setIcon(b, name) { b.textContent = ""; b.appendChild(icon(name)); }
  const btn = (id, title) => {
    const b = el("button", "rp-btn");
    b.id = id; b.type = "button"; b.title = title; b.setAttribute("aria-label", title);
    setIcon(b, id);
    controls.appendChild(b);
    return b;
  };
  const bFirst = btn("first", "first step (Home)");
  const bPrev = btn("prev", "step back (Left arrow)");
  const bPlay = btn("play", "play / pause (Space)");
  const bNext = btn("next", "step forward (Right arrow)");
  const bLast = btn("last", "last step (End)");
  const scrub = el("input", "rp-scrub");
  scrub.type = "range"; scrub.id = "scrub"; scrub.min = "0"; scrub.step = "1";
  scrub.setAttribute("aria-label", "step");
  controls.appendChild(scrub);
  const speed = el("select", "rp-speed");
  speed.id = "speed"; speed.title = "playback speed"; speed.setAttribute("aria-label", "playback speed");
  for (const [ms, label] of [[1500, "slow"], [700, "normal"], [250, "fast"], [60, "very fast"]]) {
    const o = el("option", null, label); o.value = String(ms); speed.appendChild(o);
  }
  speed.value = "700";
  controls.appendChild(speed);
  const position = el("span", "rp-position");
  position.id = "position";
  controls.appendChild(position);
  main.appendChild(controls);
  main.appendChild(el("p", "rp-keys",
    "Keys: \u2190 \u2192 step, Space play/pause, Home/End first/last, PgUp/PgDn previous/next game."));

  const stepInfo = el("section", "rp-step");
  stepInfo.id = "step-info";
  stepInfo.setAttribute("aria-live", "polite");
  main.appendChild(stepInfo);
  const resultBox = el("section", "rp-result");
  resultBox.id = "result";
  main.appendChild(resultBox);

  side.appendChild(el("h2", null, "Games"));
  const list = el("ol", "rp-game-list");
  list.id = "games";
  side.appendChild(list);
  const shownIndex = new Map(data.replays.map((r, i) => [r.game, i]));
  for (const g of data.games) {
    const li = el("li");
    const b = el("button", "rp-game");
    b.type = "button";
    b.dataset.game = g.game;
    const who = g.durak === null ? "draw" : "durak " + g.players[g.durak];
    b.appendChild(el("span", "rp-game-no", "Game " + g.game));
    b.appendChild(el("span", "rp-game-res", g.termination + ", " + who));
    if (g.decisions !== null) b.appendChild(el("span", "rp-game-n", fmtCount(g.decisions, "decision", "decisions")));
    if (shownIndex.has(g.game)) {
      b.addEventListener("click", () => { pause(); show(shownIndex.get(g.game), 0); });
    } else {
      b.disabled = true;
      b.title = "not in this page: durak-ref replay LOG --html OUT.html --game " + g.game;
    }
    li.appendChild(b);
    list.appendChild(li);
  }
  if (data.more) {
    side.appendChild(el("p", "rp-note", data.more + " more game(s) are listed without their steps: "
      + "render one with --game N."));
  }

  /* ---------------------------------------------------------------- match summary */
  function summarySection(m) {
    const s = el("section", "rp-summary");
    s.id = "summary";
    const facts = el("p", "rp-facts");
    const parts = ["rules " + (m.preset || "?")];
    const tc = m.time_control || {};
    if (tc.base_s !== null && tc.base_s !== undefined) parts.push("clock " + tc.base_s + "+" + (tc.increment_s || 0) + " s");
    else if (tc.move_s) parts.push(tc.move_s + " s per move");
    if (tc.clock === "cpu") parts.push("cpu clock (times are CPU time)");
    if (m.started) parts.push("started " + m.started);
    if (m.ended) parts.push("ended " + m.ended);
    if (m.interrupted === null) parts.push("no footer: the match did not finish");
    else if (m.interrupted) parts.push("interrupted");
    if (m.seed !== undefined && m.seed !== null) parts.push("seed " + m.seed);
    facts.textContent = parts.join(" \u00B7 ");
    s.appendChild(facts);
    const t = el("table", "rp-bots");
    const head = el("tr");
    for (const h of ["bot", "games", "durak", "draws", "forfeits"]) head.appendChild(el("th", null, h));
    t.appendChild(head);
    const results = new Map((m.results || []).map((r) => [r.name, r]));
    for (const b of m.bots) {
      const r = results.get(b.name);
      const tr = el("tr");
      const name = el("td");
      name.appendChild(el("span", "rp-botname", b.name));
      if (b.spec && b.spec !== b.name) name.appendChild(el("span", "rp-spec", " " + b.spec));
      tr.appendChild(name);
      if (r) {
        const num = (v) => (v === null || v === undefined ? "\u2013" : v);
        const pct = r.games && r.durak !== null ? " (" + Math.round((100 * r.durak) / r.games) + "%)" : "";
        tr.appendChild(el("td", null, num(r.games)));
        tr.appendChild(el("td", null, num(r.durak) + pct));
        tr.appendChild(el("td", null, num(r.draws)));
        const f = r.forfeits || {};
        const kinds = Object.keys(f).map((k) => k + " " + f[k]);
        tr.appendChild(el("td", null, kinds.length ? kinds.join(", ") : "none"));
        if (r.forfeited_all) tr.classList.add("rp-warn");
      } else {
        for (let i = 0; i < 4; i++) tr.appendChild(el("td", null, "\u2013"));
      }
      t.appendChild(tr);
    }
    s.appendChild(t);
    for (const w of m.warnings || []) s.appendChild(el("p", "rp-warning", "WARNING: " + w));
    return s;
  }

  /* ---------------------------------------------------------------- the table */
  /* Seats go clockwise from the bottom (the viewing seat), over the left, the top and
     the right: regions of a 3x3 grid; a phone stacks the regions. */
  const REGIONS = {
    2: ["bottom", "top"],
    3: ["bottom", "top", "top"],
    4: ["bottom", "left", "top", "right"],
    5: ["bottom", "left", "top", "top", "right"],
    6: ["bottom", "left", "top", "top", "top", "right"],
  };

  function drawTable(replay, f, last) {
    table.textContent = "";
    const n = replay.players.length;
    const regions = {};
    for (const r of ["top", "left", "center", "right", "bottom"]) {
      regions[r] = el("div", "rp-region rp-" + r);
      table.appendChild(regions[r]);
    }
    const base = seatView === null ? 0 : seatView;
    const slots = REGIONS[n] || REGIONS[6];
    for (let k = 0; k < n; k++) {
      const s = (base + k) % n;
      regions[slots[k] || "top"].appendChild(seatBox(replay, f, s, last));
    }
    regions.center.appendChild(centerBox(replay, f));
  }

  function seatBox(replay, f, s, last) {
    const box = el("div", "rp-seat");
    box.dataset.seat = s;
    const trump = f.trump[1];
    const head = el("div", "rp-seat-head");
    head.appendChild(el("span", "rp-name", replay.players[s]));
    head.appendChild(el("span", "rp-seatno", "seat " + s));
    const badge = (cls, text) => head.appendChild(el("span", "rp-badge " + cls, text));
    if (f.out[s]) badge("rp-out", "out");
    else {
      if (s === f.attacker) badge("rp-attacker", "attacks");
      if (s === f.defender) badge("rp-defender", f.taking ? "takes" : "defends");
    }
    if (s === f.turn) { badge("rp-turn", "to move"); box.classList.add("rp-active"); }
    if (last && replay.result.durak === s) { badge("rp-durak", "durak"); box.classList.add("rp-is-durak"); }
    if (f.step && f.step.seat === s) box.classList.add("rp-acted");
    box.appendChild(head);
    const cards = f.hands[s];
    let hand;
    if (cards) {
      hand = C.hand(cards, { trump: trump, fan: cards.length > 6 });
      if (f.known[s].length) {
        for (const c of hand.querySelectorAll("[data-card]")) {
          if (f.known[s].includes(c.dataset.card)) c.classList.add("dk-known");
        }
      }
    } else {
      hand = C.hiddenHand(f.sizes[s], { known: f.known[s], trump: trump });
    }
    hand.classList.add("rp-hand");
    box.appendChild(hand);
    return box;
  }

  // A face-down pile: its top card's back (null: none shown) and "LABEL N", N in a <b>
  // with the given id (what the page's tests read).
  function pile(back, label, count, id) {
    const box = el("div", "rp-pile");
    if (back) box.appendChild(back);
    const text = el("span", "rp-label");
    text.appendChild(document.createTextNode(label + " "));
    const n = el("b", null, count); n.id = id;
    text.appendChild(n);
    box.appendChild(text);
    return box;
  }

  function centerBox(replay, f) {
    const c = el("div", "rp-center");
    const deck = el("div", "rp-deck");
    const trumpWrap = el("div", "rp-trump");
    trumpWrap.id = "trump";
    const tc = C.card(f.trump, { trump: f.trump[1] });
    if (f.talon === 0) trumpWrap.classList.add("rp-gone");
    trumpWrap.appendChild(tc);
    const tl = f.talon === 0 && f.trump_holder !== null
      ? "trump (drawn by " + replay.players[f.trump_holder] + ")" : "trump";
    trumpWrap.appendChild(el("span", "rp-label", tl));
    deck.appendChild(trumpWrap);
    deck.appendChild(pile(f.talon > 1 ? C.back() : null, "talon", f.talon, "talon-count"));
    deck.appendChild(pile(f.discard > 0 ? C.back({ cls: "rp-discarded" }) : null, "discard",
      f.discard, "discard-count"));
    c.appendChild(deck);
    const pairs = C.pairs(f.table, { trump: f.trump[1] });
    pairs.id = "table-pairs";
    const bout = el("div", "rp-bout");
    bout.appendChild(el("div", "rp-label", "bout " + f.bout + ": " + replay.players[f.attacker]
      + " attacks " + replay.players[f.defender] + (f.taking ? " (taking)" : "")));
    bout.appendChild(pairs);
    c.appendChild(bout);
    return c;
  }

  /* ---------------------------------------------------------------- step and result */
  function drawStep(replay, f, i) {
    stepInfo.textContent = "";
    // How many of the log's decisions this state follows (0: the deal), for tests and links.
    stepInfo.dataset.decisions = f.step ? String(f.step.n + 1) : "0";
    const line = el("p", "rp-step-line");
    if (!f.step) {
      line.textContent = "The deal. Dealer " + replay.players[replay.dealer] + "; trump " + replay.trump + ".";
    } else {
      const s = f.step;
      line.appendChild(el("span", "rp-step-n", "Decision " + s.n + ": "));
      line.appendChild(el("span", "rp-name", replay.players[s.seat]));
      line.appendChild(document.createTextNode(" (seat " + s.seat + ") "));
      const act = el("code", "rp-action", s.action);
      act.id = "action";
      line.appendChild(act);
      const ms = fmtMs(s.ms);
      if (ms) line.appendChild(el("span", "rp-time", ms));
      if (s.forced) line.appendChild(el("span", "rp-badge rp-forced", "forced"));
    }
    stepInfo.appendChild(line);
    if (f.events.length) {
      const ul = el("ul", "rp-events");
      for (const e of f.events) ul.appendChild(el("li", null, e));
      stepInfo.appendChild(ul);
    }
    const turn = f.turn === null || f.turn === undefined ? null : replay.players[f.turn];
    if (turn !== null && i < replay.frames.length - 1) {
      stepInfo.appendChild(el("p", "rp-next", "Next to move: " + turn));
    }
  }

  function drawResult(replay, last) {
    resultBox.textContent = "";
    const r = replay.result;
    resultBox.classList.toggle("rp-final", last);
    const who = r.durak === null ? "a draw" : "durak: " + replay.players[r.durak] + " (seat " + r.durak + ")";
    resultBox.appendChild(el("h3", null, (last ? "Result: " : "This game ends: ") + r.termination + ", " + who));
    if (r.reason) resultBox.appendChild(el("p", "rp-reason", r.reason));
    if (r.last_out && r.last_out.length) {
      resultBox.appendChild(el("p", null, "Last out: " + r.last_out.map((s) => replay.players[s]).join(", ")));
    }
    if (r.forfeit) {
      const fbox = el("div", "rp-forfeit");
      fbox.appendChild(el("p", null, "Forfeit by " + replay.players[r.forfeit.seat] + " (" + r.forfeit.kind + ")"));
      if (r.forfeit.evidence) {
        fbox.appendChild(el("p", "rp-evidence-label", "Evidence:"));
        const pre = el("pre", "rp-evidence", JSON.stringify(r.forfeit.evidence, null, 2));
        pre.id = "evidence";
        fbox.appendChild(pre);
      } else {
        fbox.appendChild(el("p", "rp-note", "The evidence is shown only in the omniscient view and the forfeiting seat's."));
      }
      resultBox.appendChild(fbox);
    }
  }

  /* ---------------------------------------------------------------- navigation */
  function show(gameIndex, stepIndex) {
    if (!data.replays.length) return;
    current = Math.max(0, Math.min(gameIndex, data.replays.length - 1));
    const replay = data.replays[current];
    step = Math.max(0, Math.min(stepIndex, replay.frames.length - 1));
    const f = replay.frames[step];
    const last = step === replay.frames.length - 1;
    gameTitle.textContent = "Game " + replay.game + ": " + replay.players.join(", ");
    drawTable(replay, f, last);
    drawStep(replay, f, step);
    drawResult(replay, last);
    scrub.max = String(replay.frames.length - 1);
    scrub.value = String(step);
    position.textContent = "step " + step + " / " + (replay.frames.length - 1);
    bPrev.disabled = bFirst.disabled = step === 0;
    bNext.disabled = bLast.disabled = last;
    for (const b of list.querySelectorAll("button.rp-game")) {
      b.classList.toggle("rp-current", Number(b.dataset.game) === replay.game);
      if (Number(b.dataset.game) === replay.game) b.setAttribute("aria-current", "true");
      else b.removeAttribute("aria-current");
    }
    try { history.replaceState(null, "", "#game=" + replay.game + "&step=" + step); } catch (e) { /* file: URLs may refuse */ }
  }
  function frames() { return data.replays[current].frames.length; }
  function pause() {
    if (timer !== null) { clearInterval(timer); timer = null; }
    setIcon(bPlay, "play");
    bPlay.classList.remove("rp-playing");
  }
  function play() {
    if (step >= frames() - 1) show(current, 0);
    setIcon(bPlay, "pause");
    bPlay.classList.add("rp-playing");
    timer = setInterval(() => {
      if (step >= frames() - 1) { pause(); return; }
      show(current, step + 1);
    }, Number(speed.value));
  }
  function toggle() { if (timer === null) play(); else pause(); }

  bFirst.addEventListener("click", () => { pause(); show(current, 0); });
  bPrev.addEventListener("click", () => { pause(); show(current, step - 1); });
  bNext.addEventListener("click", () => { pause(); show(current, step + 1); });
  bLast.addEventListener("click", () => { pause(); show(current, frames() - 1); });
  bPlay.addEventListener("click", toggle);
  scrub.addEventListener("input", () => { pause(); show(current, Number(scrub.value)); });
  speed.addEventListener("change", () => { if (timer !== null) { pause(); play(); } });
  document.addEventListener("keydown", (ev) => {
    if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
    if (ev.target instanceof HTMLSelectElement) return;
    const k = ev.key;
    const act = {
      ArrowRight: () => { pause(); show(current, step + 1); },
      ArrowLeft: () => { pause(); show(current, step - 1); },
      " ": toggle,
      Home: () => { pause(); show(current, 0); },
      End: () => { pause(); show(current, frames() - 1); },
      PageDown: () => { pause(); show(current + 1, 0); },
      PageUp: () => { pause(); show(current - 1, 0); },
    }[k];
    if (!act) return;
    // Ours, not the focused control's: a focused scrub bar or button would step or
    // click a second time.
    ev.preventDefault();
    act();
  });

  window.durakReplay = {
    /** Show game `game` (its number in the log) at step `stepIndex` (0: the deal). */
    goto(game, stepIndex) { pause(); if (shownIndex.has(game)) show(shownIndex.get(game), stepIndex); },
    /** {game, step, steps, playing} of what is shown. */
    where() {
      return { game: data.replays.length ? data.replays[current].game : null, step: step,
               steps: data.replays.length ? frames() : 0, playing: timer !== null };
    },
  };

  /** The game and step a link names (#game=N&step=S), or null. */
  function linked() {
    const m = /game=(-?\d+)(?:&step=(\d+))?/.exec(location.hash);
    return m && shownIndex.has(Number(m[1])) ? [shownIndex.get(Number(m[1])), Number(m[2] || 0)] : null;
  }
  if (!data.replays.length) {
    table.appendChild(el("p", "rp-note", "This log has no complete game."));
    for (const b of controls.querySelectorAll("button, input, select")) b.disabled = true;
  } else {
    const at = linked();
    show(...(at || [0, 0]));
    // A link followed on the open page, an edited address and Back/Forward change the
    // hash without loading the page again: show what the address now names.
    const follow = () => { const to = linked(); if (to) { pause(); show(...to); } };
    window.addEventListener("hashchange", follow);
    window.addEventListener("popstate", follow);
  }
})();
