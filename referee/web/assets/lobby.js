// The lobby: follows /lobby/events and posts a new table. Every string from the server
// (names, reasons) is set with textContent, never as HTML.
"use strict";

let lobby = { tables: [], bots: [], presets: [], hint_bots: [] };

function el(tag, text, attrs) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  for (const k in attrs || {}) node.setAttribute(k, attrs[k]);
  return node;
}

function fillSelect(select, values, keep) {
  const old = select.value;
  select.replaceChildren(...(keep || []).map((o) => o.cloneNode(true)), ...values.map((v) => el("option", v, { value: v })));
  if ([...select.options].some((o) => o.value === old)) select.value = old;
}

function renderSeats() {
  const root = document.getElementById("seats");
  const n = Number(document.querySelector("[name=players]").value);
  const old = [...root.querySelectorAll("select")].map((s) => s.value);
  root.replaceChildren();
  for (let i = 0; i < n; i++) {
    const choice = el("select", null, { "data-testid": "seat-" + i, name: "seat" + i });
    for (const v of ["you", "open", ...lobby.bots]) choice.append(el("option", v === "open" ? "open to a person" : v, { value: v }));
    choice.value = old[i] || (i === 0 ? "you" : lobby.bots.includes("builtin:greedy") ? "builtin:greedy" : "open");
    const label = el("label", "seat " + i + " ");
    label.append(choice);
    root.append(label);
  }
}

function renderTables() {
  const root = document.getElementById("tables");
  root.replaceChildren();
  if (!lobby.tables.length) root.append(el("li", "no table yet: create one"));
  for (const t of lobby.tables) {
    const li = el("li", null, { "data-testid": "table-" + t.table, "data-state": t.state });
    const seats = t.seats.map((s) => s.kind === "open" ? "(open)" : s.name).join(", ");
    li.append(el("b", "table " + t.table), document.createTextNode(" · " + t.state + " · " + t.preset +
      (t.options.length ? " " + t.options.join(" ") : "") + " · " + t.clock + " · " + seats + " "));
    const link = el("a", t.state === "open" ? "join" : "open", { href: "/table/" + t.table, "data-action": "open-table" });
    li.append(link);
    if (t.result && t.result.replay) li.append(document.createTextNode(" "), el("a", "replay", { href: t.result.replay }));
    root.append(li);
  }
}

function render() {
  fillSelect(document.querySelector("[name=preset]"), lobby.presets);
  fillSelect(document.querySelector("[name=hints]"), lobby.hint_bots, [el("option", "none", { value: "" })]);
  renderSeats();
  renderTables();
}

document.querySelector("[name=players]").addEventListener("change", renderSeats);
document.getElementById("create").addEventListener("submit", async (e) => {
  e.preventDefault();
  const f = e.target;
  const body = {
    name: f.name.value, preset: f.preset.value, clock: f.clock.value.trim(),
    move_time: Number(f.move_time.value), hints: f.hints.value || null,
    options: f.options.value.split(/\s+/).filter(Boolean),
    seats: [...document.querySelectorAll("#seats select")].map((s) => s.value),
  };
  const answer = await fetch("/api/tables", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const data = await answer.json();
  if (!answer.ok) { document.getElementById("create-error").textContent = data.error; return; }
  localStorage.setItem("durak-seat-" + data.table, data.token);
  location.href = "/table/" + data.table;
});

const source = new EventSource("/lobby/events");
source.addEventListener("open", () => { document.getElementById("status").textContent = "live"; });
source.addEventListener("error", () => { document.getElementById("status").textContent = "reconnecting…"; });
source.addEventListener("lobby", (e) => { lobby = JSON.parse(e.data); render(); });
