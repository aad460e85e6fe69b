// A person's seat: follows /seat/events (this seat's view only) and posts moves to
// /api/act. Only legal moves are clickable. Strings from the server are text, never HTML.
"use strict";

const Cards = window.DurakCards;
const number = Number(location.pathname.split("/").pop());
const storeKey = "durak-seat-" + number;
let token = localStorage.getItem(storeKey);
let view = null;
let selected = null;   // a card of the hand chosen for a cover with several targets
let shownAt = 0;       // when the open request's view arrived (for the clock)

function el(tag, text, attrs) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  for (const k in attrs || {}) node.setAttribute(k, attrs[k]);
  return node;
}

async function post(url, body) {
  const answer = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return [answer.ok, await answer.json()];
}

async function act(index) {
  const request = view.table.request;
  const [ok, data] = await post("/api/act", { token, request: request.id, choice: index });
  if (!ok) document.getElementById("notice").textContent = data.error;
}

function fmt(ms) {
  if (ms === null || ms === undefined) return null;
  const s = Math.max(0, ms / 1000);
  return s >= 60 ? Math.floor(s / 60) + ":" + String(Math.floor(s % 60)).padStart(2, "0") : s.toFixed(1) + " s";
}

function tick() {
  const r = view && view.table && view.table.request;
  const node = document.getElementById("clock");
  if (!r) { node.textContent = ""; return; }
  const used = r.used_ms + (Date.now() - shownAt);
  const parts = [];
  if (r.clock && r.clock.move_ms !== null) parts.push("this move: " + fmt(r.clock.move_ms - used));
  if (r.clock && r.clock.remaining_ms !== null) parts.push("your clock: " + fmt(r.clock.remaining_ms - used));
  node.textContent = parts.join(" · ");
}

function render() {
  const t = view.table;
  document.getElementById("title").textContent = "table " + number + " · " + view.name;
  if (!t) {
    document.getElementById("turn").textContent = view.notice ? "" : "waiting for the other seats…";
    document.getElementById("notice").textContent = view.notice || "";
    return;
  }
  const trumpSuit = t.trump.slice(-1);
  const others = document.getElementById("others");
  others.replaceChildren();
  t.names.forEach((name, seat) => {
    if (seat === t.seat) return;
    const row = el("div", null, { class: "other", "data-testid": "seat-" + seat });
    row.append(el("span", name, { class: "name" }));
    if (!t.out[seat] && !t.end) {
      if (seat === t.attacker) row.append(el("span", "attacks", { class: "role" }));
      if (seat === t.defender) row.append(el("span", t.taking ? "takes" : "defends", { class: "role" }));
    }
    if (t.out[seat]) row.append(el("span", "out", { class: "role" }));
    row.append(Cards.hiddenHand(t.hand_sizes[seat], { known: t.known[seat] || [], trump: trumpSuit, max: 6 }));
    others.append(row);
  });
  const trump = document.getElementById("trump");
  trump.replaceChildren(document.createTextNode("trump "), Cards.card(t.trump, { trump: trumpSuit }));
  document.getElementById("talon").textContent = "talon " + t.talon;
  document.getElementById("discard").textContent = "discard " + t.discard;
  const r = t.request;
  const legal = r ? r.legal : [];
  const pairs = Cards.pairs(t.table, { trump: trumpSuit });
  document.getElementById("pairs").replaceChildren(pairs);
  const hand = Cards.hand(t.hand, { trump: trumpSuit });
  document.getElementById("hand").replaceChildren(hand);
  const byCard = {};
  legal.forEach((a, i) => { if (a.card && a.type !== "show_trump") (byCard[a.card] = byCard[a.card] || []).push(i); });
  hand.querySelectorAll("[data-card]").forEach((c) => {
    const moves = byCard[c.dataset.card];
    if (!moves) return;
    c.classList.add("playable");
    c.setAttribute("role", "button");
    c.dataset.action = legal[moves[0]].type;
    c.dataset.testid = "card-" + c.dataset.card;
    if (selected === c.dataset.card) c.classList.add("selected");
    c.addEventListener("click", () => {
      if (moves.length === 1) { selected = null; act(moves[0]); return; }
      selected = c.dataset.card;
      render();
    });
  });
  if (selected && byCard[selected]) {
    byCard[selected].forEach((i) => {
      const pair = pairs.querySelector('[data-slot="' + legal[i].slot + '"]');
      if (!pair) return;
      pair.classList.add("target");
      pair.dataset.action = "cover";
      pair.dataset.testid = "target-" + legal[i].slot;
      pair.addEventListener("click", () => { selected = null; act(i); });
    });
  }
  const actions = document.getElementById("actions");
  actions.replaceChildren();
  for (const kind of ["take", "pass", "exchange", "show_trump"]) {
    const i = legal.findIndex((a) => a.type === kind);
    const label = kind === "show_trump" && i >= 0 ? "show " + legal[i].card : kind.replace("_", " ");
    const button = el("button", label, { "data-action": kind, "data-testid": "action-" + kind, type: "button" });
    button.disabled = i < 0;
    if (i >= 0) button.addEventListener("click", () => act(i));
    actions.append(button);
  }
  document.getElementById("turn").textContent = t.end ? "" : r ? "your move" : "waiting for the others";
  document.getElementById("turn").dataset.yourMove = r ? "yes" : "no";
  document.getElementById("hint").textContent = r && r.hint ? "hint (" + r.hint.bot + "): " + r.hint.text + " — " + r.hint.why : "";
  document.getElementById("notice").textContent = view.notice || t.notice || "";
  const events = document.getElementById("events");
  events.replaceChildren(...t.last.map((line) => el("li", line)));
  const result = document.getElementById("result");
  result.replaceChildren();
  if (t.end) {
    const who = t.end.durak === null ? "a draw" : t.end.durak === t.seat ? "you are the durak" : "durak: " + t.names[t.end.durak];
    result.append(document.createTextNode("game over: " + who + " (" + t.end.termination + ") "));
    if (view.replay) result.append(el("a", "replay", { href: view.replay, "data-testid": "replay" }));
  }
  tick();
}

function follow() {
  const status = document.getElementById("status");
  const source = new EventSource("/seat/events?token=" + encodeURIComponent(token));
  source.addEventListener("open", () => { status.textContent = "live"; });
  source.addEventListener("error", () => { status.textContent = "reconnecting…"; });
  source.addEventListener("seat", (e) => {
    view = JSON.parse(e.data);
    shownAt = Date.now();
    if (!(view.table && view.table.request)) selected = null;
    render();
  });
}

if (token) {
  follow();
} else {
  const form = document.getElementById("join");
  form.hidden = false;
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const [ok, data] = await post("/api/tables/" + number + "/join", { name: form.name.value });
    if (!ok) { document.getElementById("join-error").textContent = data.error; return; }
    token = data.token;
    localStorage.setItem(storeKey, token);
    form.hidden = true;
    follow();
  });
}
setInterval(tick, 250);
