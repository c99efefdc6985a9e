// seatclaim's live seat map, a large event's canvas (loaded before app.js,
// whose state, statusOf and clickSeat it uses): every section at once, a
// seat a cell of pixels, and one section zoomed in to pick seats.
"use strict";

const OVERVIEW_CELL = 2;   // px per seat, every section at once
const ZOOM_SEAT = 14;      // px per seat in a zoomed section
const ZOOM_GAP = 3;
const ZOOM_LABEL = 34;     // px for the row labels
const SECTION_LABEL = 14;  // px above each section of the overview for its name
const COLORS = { A: [46, 157, 91], H: [224, 162, 27], S: [154, 160, 166], mine: [47, 111, 223] };

// ----- The canvas map: every section at once, or one zoomed in --------------------------

function drawCanvas() {
  const map = $("map");
  const bar = document.createElement("div");
  bar.id = "zoom-bar";
  const back = document.createElement("button");
  back.type = "button";
  back.id = "overview";
  back.textContent = "All sections";
  back.addEventListener("click", () => zoom(null));
  const title = document.createElement("span");
  title.id = "zoom-title";
  bar.append(back, title);
  const c = document.createElement("canvas");
  c.id = "stadium";
  c.setAttribute("role", "img");
  c.addEventListener("click", canvasClick);
  map.append(bar, c);
  // Sections left to right, wrapping, each its rows of seats.
  // The panel's width: the map itself is hidden (0 wide) while the list is open.
  const width = Math.max(map.clientWidth || $("map-panel").clientWidth, 640);
  const layout = [];
  let x = 0, y = 0, lineHeight = 0;
  for (const section of state.event.sections) {
    if (section.kind === "ga") continue;
    const w = Math.max(...section.rows.map((r) => r.count)) * OVERVIEW_CELL;
    const h = section.rows.length * OVERVIEW_CELL;
    if (x > 0 && x + w > width) { x = 0; y += lineHeight + 12; lineHeight = 0; }
    layout.push({ section, x, y: y + SECTION_LABEL, w, h });
    x += w + 12;
    lineHeight = Math.max(lineHeight, h + SECTION_LABEL);
  }
  state.canvas = { layout, zoom: null, width: Math.max(...layout.map((l) => l.x + l.w), 1), height: y + lineHeight };
  zoom(null);
}

function zoom(sectionId) {
  state.canvas.zoom = sectionId;
  const c = $("stadium");
  const entry = state.canvas.layout.find((l) => l.section.sectionId === sectionId);
  if (entry) {
    const longest = Math.max(...entry.section.rows.map((r) => r.count));
    c.width = ZOOM_LABEL + longest * (ZOOM_SEAT + ZOOM_GAP);
    c.height = entry.section.rows.length * (ZOOM_SEAT + ZOOM_GAP);
  } else {
    c.width = state.canvas.width;
    c.height = state.canvas.height;
  }
  c.dataset.zoom = sectionId || "";
  $("zoom-title").textContent = sectionId ? `Section ${sectionId}: pick seats` : "Every section: pick one to zoom in";
  // A picture to assistive technology, which the list stands in for.
  c.setAttribute("aria-label", `${sectionId ? `Section ${sectionId}` : "Every section"} drawn as a picture. `
    + "To pick seats by keyboard or with a screen reader, use Seats as a list or Go to seat.");
  paint();
}

function paintCanvas(mine) {
  const c = $("stadium");
  if (!c) return;
  const ctx = c.getContext("2d");
  // Your order's seats are yours before the map's projection shows them held (seatView).
  const colour = (status, id) => (mine.size && mine.has(id()) ? COLORS.mine : COLORS[status] || COLORS.A);
  const zoomed = state.canvas.layout.find((l) => l.section.sectionId === state.canvas.zoom);
  if (zoomed) {
    const section = zoomed.section;
    ctx.clearRect(0, 0, c.width, c.height);
    ctx.font = "11px system-ui";
    section.rows.forEach((row, r) => {
      const y = r * (ZOOM_SEAT + ZOOM_GAP);
      ctx.fillStyle = "#1d2330";
      ctx.fillText(row.row, 2, y + ZOOM_SEAT - 3);
      for (let n = 1; n <= row.count; n++) {
        const [R, G, B] = colour(statusOf(section.sectionId, row.row, n), () => seatId(section.sectionId, row.row, n));
        ctx.fillStyle = `rgb(${R},${G},${B})`;
        ctx.fillRect(ZOOM_LABEL + (n - 1) * (ZOOM_SEAT + ZOOM_GAP), y, ZOOM_SEAT, ZOOM_SEAT);
      }
    });
    return;
  }
  // Every seat as a cell of pixels, written straight into one image.
  const img = ctx.createImageData(c.width, c.height);
  const px = img.data;
  for (const { section, x, y } of state.canvas.layout) {
    section.rows.forEach((row, r) => {
      const s = state.rows.get(rowKey(section.sectionId, row.row)) || "";
      for (let n = 1; n <= row.count; n++) {
        const status = s[n - 1] || "A";
        const [R, G, B] = colour(status, () => seatId(section.sectionId, row.row, n));
        for (let dy = 0; dy < OVERVIEW_CELL; dy++) {
          let i = ((y + r * OVERVIEW_CELL + dy) * c.width + x + (n - 1) * OVERVIEW_CELL) * 4;
          for (let dx = 0; dx < OVERVIEW_CELL; dx++, i += 4) { px[i] = R; px[i + 1] = G; px[i + 2] = B; px[i + 3] = 255; }
        }
      }
    });
  }
  ctx.putImageData(img, 0, 0);
  ctx.font = "11px system-ui";
  ctx.fillStyle = "#1d2330";
  for (const { section, x, y } of state.canvas.layout) ctx.fillText(section.sectionId, x, y - 3);
}

// Canvas coordinates of an event: the canvas may be drawn smaller than its pixels.
function canvasPoint(e) {
  const c = $("stadium");
  const rect = c.getBoundingClientRect();
  return [(e.clientX - rect.left) * (c.width / rect.width), (e.clientY - rect.top) * (c.height / rect.height)];
}

function canvasClick(e) {
  const [x, y] = canvasPoint(e);
  const zoomed = state.canvas.layout.find((l) => l.section.sectionId === state.canvas.zoom);
  if (!zoomed) {
    const hit = state.canvas.layout.find((l) => x >= l.x && x < l.x + l.w && y >= l.y && y < l.y + l.h);
    if (hit) zoom(hit.section.sectionId);
    return;
  }
  const row = zoomed.section.rows[Math.floor(y / (ZOOM_SEAT + ZOOM_GAP))];
  const n = Math.floor((x - ZOOM_LABEL) / (ZOOM_SEAT + ZOOM_GAP)) + 1;
  if (row && x >= ZOOM_LABEL && n >= 1 && n <= row.count) clickSeat(zoomed.section.sectionId, row.row, n);
}

// What the overview shows for each seat, read back from the canvas's pixels:
// per "sectionId|row", one letter a seat (A, H, S, M for mine, ? for a
// colour that is no status's). `make bench` checks them against the reply.
function overviewStatuses() {
  const c = $("stadium");
  const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
  const letters = { A: "A", H: "H", S: "S", mine: "M" };
  const byColour = new Map(Object.entries(COLORS).map(([k, rgb]) => [rgb.join(","), letters[k]]));
  const drawn = {};
  for (const { section, x, y } of state.canvas.layout) {
    section.rows.forEach((row, r) => {
      let s = "";
      for (let n = 1; n <= row.count; n++) {
        const i = ((y + r * OVERVIEW_CELL) * c.width + x + (n - 1) * OVERVIEW_CELL) * 4;
        s += byColour.get(`${px[i]},${px[i + 1]},${px[i + 2]}`) || "?";
      }
      drawn[`${section.sectionId}|${row.row}`] = s;
    });
  }
  return drawn;
}

// Where a seat is drawn in a zoomed section, in the page's CSS pixels (tests click it).
function seatPoint(sectionId, row, number) {
  const c = $("stadium");
  const section = state.event.sections.find((s) => s.sectionId === sectionId);
  const r = section.rows.findIndex((x) => x.row === row);
  const rect = c.getBoundingClientRect();
  const x = ZOOM_LABEL + (number - 1) * (ZOOM_SEAT + ZOOM_GAP) + ZOOM_SEAT / 2;
  const y = r * (ZOOM_SEAT + ZOOM_GAP) + ZOOM_SEAT / 2;
  return { x: rect.left + x * (rect.width / c.width), y: rect.top + y * (rect.height / c.height) };
}
