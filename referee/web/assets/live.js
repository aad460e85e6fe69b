// The live page: follows /events (Server-Sent Events) and draws the state.
// Every string from the server (bot names, reasons) is set with textContent, never as HTML.
"use strict";

const state = { title: "", tables: new Map(), recent: [], standings: [], standingsError: null };
const MAX_RECENT = 100;

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

// Cards are drawn by the shared card kit (cards.js: window.DurakCards), as in the replays.
const Cards = window.DurakCards;

function drawTable(t) {
  const trumpSuit = t.trump.slice(-1);
  const box = el("div", "game dk-felt");
  box.dataset.game = t.game;
  box.append(el("h3", null, "game " + t.game + " \u00b7 bout " + t.bout));
  t.names.forEach((name, seat) => {
    const row = el("div", "seat" + (t.out[seat] ? " out" : ""));
    row.dataset.seat = seat;
    row.append(el("span", "name", name));
    if (!t.out[seat] && !t.end) {
      if (seat === t.attacker) row.append(el("span", "role", "attacks"));
      if (seat === t.defender) row.append(el("span", "role", t.taking ? "takes" : "defends"));
    }
    row.append(Cards.hiddenHand(t.hand_sizes[seat], { known: t.known[seat] || [], trump: trumpSuit }));
    box.append(row);
  });
  const middle = el("div", "middle");
  const trump = el("span", "trump", "trump ");
  trump.append(Cards.card(t.trump, { trump: trumpSuit }));
  middle.append(trump, el("span", null, "talon " + t.talon), el("span", null, "discard " + t.discard));
  box.append(middle);
  box.append(Cards.pairs(t.table, { trump: trumpSuit }));
  if (t.end) {
    const who = t.end.durak === null ? "a draw" : "durak: " + t.names[t.end.durak];
    box.append(el("p", "result", who + " (" + t.end.termination + ")"));
  }
  const last = el("ol", "last");
  t.last.slice(-4).forEach((line) => last.append(el("li", null, line)));
  box.append(last);
  return box;
}

function renderTables() {
  const root = document.getElementById("tables");
  root.replaceChildren();
  if (state.tables.size === 0) root.append(el("p", "empty", "no game in play"));
  [...state.tables.values()].sort((a, b) => a.game - b.game).forEach((t) => root.append(drawTable(t)));
}

function fmt(x, digits) {
  return x === null || x === undefined ? "–" : Number(x).toFixed(digits);
}

function renderStandings() {
  const body = document.querySelector("#standings tbody");
  body.replaceChildren();
  state.standings.forEach((b) => {
    const tr = el("tr");
    const rating = b.rating === null ? "–" : fmt(b.rating, 1) + " ± " + fmt(b.error95, 1);
    [b.rank, b.bot, b.games, b.durak, b.durak_rate === null ? "–" : fmt(100 * b.durak_rate, 1), rating]
      .forEach((v) => tr.append(el("td", null, v)));
    body.append(tr);
  });
  document.getElementById("standings-error").textContent = state.standingsError || "";
}

function renderRecent() {
  const root = document.getElementById("recent");
  root.replaceChildren();
  state.recent.forEach((g) => {
    const li = el("li");
    const link = el("a", null, "game " + g.game);
    link.href = "/game/" + encodeURIComponent(g.game);
    li.append(link, document.createTextNode(": " + g.names.join(", ") + " — " +
      (g.durak === null ? "draw" : "durak " + g.durak) + " (" + g.termination + ")"));
    root.append(li);
  });
}

function renderAll() {
  document.getElementById("title").textContent = state.title || "durak-ref live";
  renderTables();
  renderStandings();
  renderRecent();
}

function connect() {
  const status = document.getElementById("status");
  const source = new EventSource("/events");
  source.addEventListener("open", () => { status.textContent = "live"; });
  source.addEventListener("error", () => { status.textContent = "reconnecting…"; });
  source.addEventListener("snapshot", (e) => {
    const s = JSON.parse(e.data);
    state.title = s.title;
    state.tables = new Map(s.tables.map((t) => [t.game, t]));
    state.recent = s.recent;
    state.standings = s.standings;
    state.standingsError = s.standings_error;
    renderAll();
  });
  source.addEventListener("table", (e) => {
    const t = JSON.parse(e.data);
    state.tables.set(t.game, t);
    renderTables();
  });
  source.addEventListener("finished", (e) => {
    const g = JSON.parse(e.data);
    state.tables.delete(g.game);
    state.recent = [g, ...state.recent].slice(0, MAX_RECENT);
    renderTables();
    renderRecent();
  });
  source.addEventListener("over", (e) => {
    // The run is over and its server about to go: the final standings, and no reconnecting.
    const s = JSON.parse(e.data);
    state.standings = s.standings;
    state.standingsError = s.error;
    state.tables.clear();
    source.close();
    status.textContent = "run over: final standings (replays are in the run's log)";
    renderAll();
  });
  source.addEventListener("standings", (e) => {
    const s = JSON.parse(e.data);
    state.standings = s.standings;
    state.standingsError = s.error;
    renderStandings();
  });
}

connect();
