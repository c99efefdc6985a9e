// The seat map without a mouse and without sight (DESIGN.md, "The page"):
// every seat named for screen readers, one seat of the map in the tab
// order at a time (a roving tabindex: arrow keys move it through a row and
// between rows, Home and End to a row's ends, Enter or Space claims), a
// "Go to seat" box that focuses a seat by its id, and one polite live
// region for what changes on its own (an offer arriving, a hold running
// out), so countdowns are not read out every second. Loads before app.js
// and uses its state when called.
"use strict";

const STATUS_WORDS = { A: "available", H: "held", S: "sold" };
const ACCESS_WORDS = { W: "wheelchair space", C: "companion seat" };

// A seat's status and access in words: ["available", "wheelchair space"].
function seatWords(status, mine, access) {
  const words = [mine ? "held by you" : STATUS_WORDS[status] || "available"];
  if (access) words.push(ACCESS_WORDS[access]);
  return words;
}

// What a screen reader says of a seat: "Section A, row 3, seat 12,
// available, wheelchair space".
function seatName(seat, status, mine) {
  const where = [`Section ${seat.dataset.section}`, `row ${seat.dataset.row}`, `seat ${seat.dataset.number}`];
  return [...where, ...seatWords(status, mine, seat.dataset.access)].join(", ");
}

// Per seat number of a row (from 1), "W", "C" or "", from get-event's row.
function rowAccess(row) {
  const access = new Array(row.count + 1).fill("");
  for (const n of row.wheelchair || []) access[n] = "W";
  for (const n of row.companion || []) access[n] = "C";
  return access;
}

// Text written only when it changed: a live region re-reads every write.
function setText(element, text) {
  if (element.textContent !== text) element.textContent = text;
}

// Said once, politely, by the page's one announcer.
function announce(text) {
  const region = document.getElementById("announcer");
  region.textContent = "";
  // A fresh node after a clear, so the same words twice are read twice.
  requestAnimationFrame(() => { region.textContent = text; });
}

// ----- The roving tabindex, over the drawn seats and the list's -------------------

const MAP_SEATS = "#map .seat[data-seat]";
const LIST_SEATS = "#list-seats .list-seat";

function seatsOfMap() { return [...document.querySelectorAll(MAP_SEATS)]; }

// After drawing: the map's first seat is the one Tab reaches.
function startRoving() {
  const seats = seatsOfMap();
  seats.forEach((s, i) => { s.tabIndex = i === 0 ? 0 : -1; });
}

// `seat` becomes the one of `seats` (a selector, not a list of them: the
// tabindex test applies to its last part) that Tab reaches, and takes
// the focus.
function roveTo(seats, seat) {
  if (!seat) return;
  for (const s of document.querySelectorAll(`${seats}[tabindex="0"]`)) if (s !== seat) s.tabIndex = -1;
  seat.tabIndex = 0;
  seat.focus();
}

// A click or a focus by any means makes that seat of `container` the one
// Tab returns to.
function keepRoving(container, seats) {
  container.addEventListener("focusin", (e) => {
    const seat = e.target.closest && e.target.closest(seats);
    if (seat && seat.tabIndex !== 0) roveTo(seats, seat);
  });
}

// The seat of `line` (a row's element) nearest seat number `number`.
function nearestIn(line, number) {
  let best = null;
  for (const s of line.querySelectorAll(".seat")) {
    if (!best || Math.abs(Number(s.dataset.number) - number) < Math.abs(Number(best.dataset.number) - number)) best = s;
  }
  return best;
}

// The seat an arrow key, Home or End leads to from `seat`; null for any
// other key or past the map's edge.
function seatAfterKey(seat, key) {
  const line = seat.closest(".row-line");
  const inRow = [...line.querySelectorAll(".seat")];
  const at = inRow.indexOf(seat);
  const lines = [...document.querySelectorAll("#map .row-line")];
  const row = lines.indexOf(line);
  switch (key) {
    case "ArrowLeft": return inRow[at - 1] || null;
    case "ArrowRight": return inRow[at + 1] || null;
    case "Home": return inRow[0];
    case "End": return inRow[inRow.length - 1];
    case "ArrowUp": return row > 0 ? nearestIn(lines[row - 1], Number(seat.dataset.number)) : null;
    case "ArrowDown": return row + 1 < lines.length ? nearestIn(lines[row + 1], Number(seat.dataset.number)) : null;
    default: return null;
  }
}

// "Go to seat": focuses the seat named on the drawn map, or in the list
// (a canvas's seats are only there), or says there is none.
function goToSeat(text) {
  const id = text.trim().toUpperCase();
  const seat = state.list.on ? null : seatsOfMap().find((s) => s.dataset.seat.toUpperCase() === id);
  if (seat) { roveTo(MAP_SEATS, seat); return; }
  if (!goToListSeat(text)) say(`There is no seat ${text.trim()} in this event.`, true);
}

function wireAccess() {
  const map = document.getElementById("map");
  map.addEventListener("keydown", (e) => {
    const seat = e.target.closest && e.target.closest(MAP_SEATS);
    if (!seat) return;
    const next = seatAfterKey(seat, e.key);
    if (next) { e.preventDefault(); roveTo(MAP_SEATS, next); }
  });
  keepRoving(map, MAP_SEATS);
  document.getElementById("goto-form").addEventListener("submit", (e) => {
    e.preventDefault();
    goToSeat(document.getElementById("goto-seat").value);
  });
}
