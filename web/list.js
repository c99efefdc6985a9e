// The seats as a list, by section and row (DESIGN.md, "The page"): the
// keyboard's and the screen reader's way through any event, and the only
// one through a map drawn on the canvas. One row is in the page at a time,
// so a stadium's 100,000 seats never become 100,000 buttons: each seat of
// the row a button that says its number, status and access in words.
// Up and Down move through the row and on into the next or previous row,
// Page Up and Page Down a row at a time, Home and End to a row's ends;
// Enter or Space holds or drops the seat, as a click on the map does.
// Loads before app.js and uses its state when called.
"use strict";

const LIST_KEYS_KEPT = 2000;

function seatedSections() {
  return ((state.event && state.event.sections) || []).filter((s) => s.kind !== "ga");
}
function sectionOf(sectionId) { return seatedSections().find((s) => s.sectionId === sectionId) || null; }

// The list shown or the map shown; the list opens at the zoomed section, if any.
function showList(on) {
  state.list.on = on;
  // The label says what a press does (no aria-pressed: "Seats as a map,
  // pressed" would contradict itself).
  $("list-toggle").textContent = on ? "Seats as a map" : "Seats as a list";
  $("map").hidden = on;
  $("seat-list").hidden = !on;
  if (on) fillListSections((state.canvas && state.canvas.zoom) || state.list.sectionId);
  paint();
}

// After the event is drawn: the list starts again on its first section.
function resetList() {
  state.list.sectionId = null;
  state.list.row = null;
  if (state.list.on) fillListSections(null);
}

function fillListSections(wanted) {
  const select = $("list-section");
  select.innerHTML = "";
  for (const s of seatedSections()) {
    const o = document.createElement("option");
    o.value = o.textContent = s.sectionId;
    select.append(o);
  }
  const section = sectionOf(wanted) || seatedSections()[0];
  if (section) showListRow(section.sectionId, section === sectionOf(state.list.sectionId) ? state.list.row : null, null);
  else emptyList();
}

// An event without numbered seats (or none open): nothing left of another's.
function emptyList() {
  state.list.sectionId = null;
  state.list.row = null;
  $("list-row").innerHTML = "";
  $("list-seats").innerHTML = "";
  $("list-seats").removeAttribute("aria-label");
  setText($("list-summary"), "This event has no numbered seats.");
}

// `row` of `sectionId` in the list (its first row for null), the seat
// numbered `focus` focused if given.
function showListRow(sectionId, row, focus) {
  const section = sectionOf(sectionId);
  if (!section) return;
  const line = section.rows.find((r) => r.row === row) || section.rows[0];
  const rowSelect = $("list-row");
  if (state.list.sectionId !== sectionId || rowSelect.options.length !== section.rows.length) {
    rowSelect.innerHTML = "";
    for (const r of section.rows) {
      const o = document.createElement("option");
      o.value = o.textContent = r.row;
      rowSelect.append(o);
    }
  }
  state.list.sectionId = sectionId;
  state.list.row = line.row;
  $("list-section").value = sectionId;
  rowSelect.value = line.row;
  drawListRow(section, line);
  paintList(mySeats());
  const seats = listSeats();
  const target = focus == null ? null : seats[Math.min(Math.max(focus, 1), seats.length) - 1];
  if (target) roveTo(LIST_SEATS, target);
}

function drawListRow(section, line) {
  const ul = $("list-seats");
  ul.innerHTML = "";
  ul.setAttribute("aria-label", `Section ${section.sectionId}, row ${line.row}`);
  const access = rowAccess(line);
  for (let n = 1; n <= line.count; n++) {
    const li = document.createElement("li");
    const b = document.createElement("button");
    b.type = "button";
    b.className = "list-seat";
    b.dataset.seat = seatId(section.sectionId, line.row, n);
    b.dataset.section = section.sectionId;
    b.dataset.row = line.row;
    b.dataset.number = String(n);
    if (access[n]) b.dataset.access = access[n];
    b.tabIndex = n === 1 ? 0 : -1;
    li.append(b);
    ul.append(li);
  }
}

function listSeats() { return [...document.querySelectorAll(LIST_SEATS)]; }

// Each seat of the row as it stands, and the row's summary. A seat's
// class says its status, whether it is yours and its access, so a seat
// whose class is unchanged needs no other write (each write is a DOM
// mutation, and a screen reader may re-read a changed name).
function paintList(mine) {
  if (!state.list.on || !state.list.sectionId) return;
  const seats = listSeats();
  let free = 0, spaces = 0;
  for (const b of seats) {
    const { status, isMine } = seatView(b, mine);
    const cls = `list-seat ${status}${isMine ? " mine" : ""}${b.dataset.access ? ` acc-${b.dataset.access}` : ""}`;
    if (b.className !== cls) {
      b.className = cls;
      b.textContent = `Seat ${b.dataset.number}, ${seatWords(status, isMine, b.dataset.access).join(", ")}`;
      b.dataset.status = status;
      b.dataset.mine = isMine ? "1" : "0";
    }
    free += status === "A";
    spaces += status === "A" && b.dataset.access === "W";
  }
  setText($("list-summary"), `Section ${state.list.sectionId}, row ${state.list.row}: ${free} of ${seats.length} seats available`
    + `${spaces ? `, ${spaces} of them wheelchair ${spaces === 1 ? "space" : "spaces"}` : ""}.`);
}

// The row `step` rows from the open one (null past the section's ends).
function rowStep(step) {
  const section = sectionOf(state.list.sectionId);
  if (!section) return null;
  const rows = section.rows;
  const at = rows.findIndex((r) => r.row === state.list.row);
  return rows[at + step] || null;
}

// What a key does on a seat of the list: true when it moved the focus.
function listKey(seat, key) {
  const seats = listSeats();
  const at = seats.indexOf(seat);
  const to = (next) => { roveTo(LIST_SEATS, next); return true; };
  const go = (row, number) => { if (row) showListRow(state.list.sectionId, row.row, number); return Boolean(row); };
  switch (key) {
    case "ArrowDown": return seats[at + 1] ? to(seats[at + 1]) : go(rowStep(1), 1);
    case "ArrowUp": return seats[at - 1] ? to(seats[at - 1]) : go(rowStep(-1), Infinity);
    case "PageDown": return go(rowStep(1), at + 1);
    case "PageUp": return go(rowStep(-1), at + 1);
    case "Home": return to(seats[0]);
    case "End": return to(seats[seats.length - 1]);
    default: return false;
  }
}

// "Go to seat" on a map drawn as a picture, or with the list open: the
// list opens at the seat named and focuses it; false when the plan has no
// such seat.
function goToListSeat(text) {
  const id = text.trim().toUpperCase();
  for (const section of seatedSections()) {
    const prefix = `${section.sectionId}-`.toUpperCase();
    if (!id.startsWith(prefix)) continue;
    for (const r of section.rows) {
      const rest = id.slice(prefix.length);
      const rowPrefix = `${r.row}-`.toUpperCase();
      const number = rest.slice(rowPrefix.length);
      // A seat's number as its id writes it: "A-1-01" names no seat.
      if (!rest.startsWith(rowPrefix) || !/^[1-9][0-9]*$/.test(number) || Number(number) > r.count) continue;
      const n = Number(number);
      if (!state.list.on) showList(true);
      showListRow(section.sectionId, r.row, n);
      return true;
    }
  }
  return false;
}

// Each key's response, from the key's event to the frame after its
// handlers ran (`make bench` reads them on the stadium's list).
function timeKeys() {
  document.addEventListener("keydown", (e) => {
    const at = e.timeStamp;
    requestAnimationFrame(() => setTimeout(() => {
      const kept = window.seatclaim.keystrokeMs;
      kept.push(performance.now() - at);
      if (kept.length > LIST_KEYS_KEPT) kept.shift();
    }, 0));
  }, true);
}

function wireList() {
  timeKeys();
  $("list-toggle").addEventListener("click", () => showList(!state.list.on));
  $("list-section").addEventListener("change", (e) => showListRow(e.target.value, null, null));
  $("list-row").addEventListener("change", (e) => showListRow(state.list.sectionId, e.target.value, null));
  const ul = $("list-seats");
  ul.addEventListener("keydown", (e) => {
    const seat = e.target.closest && e.target.closest(LIST_SEATS);
    if (seat && listKey(seat, e.key)) e.preventDefault();
  });
  keepRoving(ul, LIST_SEATS);
  ul.addEventListener("click", (e) => {
    const b = e.target.closest(LIST_SEATS);
    if (b) clickSeat(b.dataset.section, b.dataset.row, Number(b.dataset.number));
  });
}
