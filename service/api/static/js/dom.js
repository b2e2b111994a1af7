// Small DOM helpers shared by every page: element builder, formatting, announcements.

const SVG_NS = "http://www.w3.org/2000/svg";

/** h("div.card#id", {attrs}, ...children) — children may be strings, nodes, arrays, null. */
export function h(tag, attrs, ...children) {
  const [name, ...rest] = tag.split(/(?=[.#])/);
  const el = document.createElement(name || "div");
  for (const part of rest) {
    if (part[0] === ".") el.classList.add(part.slice(1));
    else if (part[0] === "#") el.id = part.slice(1);
  }
  applyAttrs(el, attrs);
  append(el, children);
  return el;
}

/** Same as h() for SVG elements (no class/id shorthand). */
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  applyAttrs(el, attrs);
  append(el, children);
  return el;
}

function applyAttrs(el, attrs) {
  if (!attrs) return;
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "class") el.setAttribute("class", Array.isArray(v) ? v.filter(Boolean).join(" ") : v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k === "text") el.textContent = v;
    else if (k === "value" && "value" in el) el.value = v;
    else if (k === "checked" || k === "selected" || k === "disabled" || k === "hidden" ||
             k === "required" || k === "multiple" || k === "readOnly") el[k] = !!v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

const nf = new Intl.NumberFormat("en-US");
export const fmtInt = (n) => (n === null || n === undefined ? "—" : nf.format(n));

/** 1363148 → "1.3 MiB" (memory). */
export function fmtBytes(n) {
  if (n === null || n === undefined) return "—";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let k = 0;
  while (Math.abs(n) >= 1024 && k < units.length - 1) { n /= 1024; k += 1; }
  return (k ? n.toFixed(1) : String(n)) + " " + units[k];
}

/** 1234567 → "1.23 M" (params, FLOPs). */
export function fmtCompact(n) {
  if (n === null || n === undefined) return "—";
  const a = Math.abs(n);
  if (a >= 1e12) return (n / 1e12).toFixed(2) + " T";
  if (a >= 1e9) return (n / 1e9).toFixed(2) + " G";
  if (a >= 1e6) return (n / 1e6).toFixed(2) + " M";
  if (a >= 1e4) return (n / 1e3).toFixed(1) + " k";
  return nf.format(n);
}

export function fmtNum(x, digits = 4) {
  if (x === null || x === undefined) return "—";
  if (typeof x !== "number") return String(x);
  if (Number.isNaN(x)) return "NaN";
  if (!Number.isFinite(x)) return x > 0 ? "+Inf" : "−Inf";
  if (x === 0) return "0";
  const a = Math.abs(x);
  if (a >= 1e5 || a < 1e-3) return x.toExponential(digits - 1);
  return Number(x.toPrecision(digits)).toString();
}

export function fmtMs(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return "—";
  if (ms < 1) return (ms * 1000).toFixed(0) + " µs";
  if (ms < 100) return ms.toFixed(2) + " ms";
  if (ms < 1000) return ms.toFixed(0) + " ms";
  if (ms < 10000) return (ms / 1000).toFixed(2) + " s";
  return (ms / 1000).toFixed(1) + " s";
}

export function fmtShape(shape) {
  if (shape === null || shape === undefined) return "?";
  if (shape.length && Array.isArray(shape[0])) return shape.map(fmtShape).join(", ");
  return "(" + shape.map((d) => (d === -1 ? "?" : d)).join(", ") + (shape.length === 1 ? ",)" : ")");
}

export function fmtAgo(ms) {
  if (!ms) return "never";
  const s = Math.max(0, (Date.now() - ms) / 1000);
  if (s < 2) return "just now";
  if (s < 60) return Math.floor(s) + " s ago";
  if (s < 3600) return Math.floor(s / 60) + " min ago";
  return new Date(ms).toLocaleString();
}

/** Polite screen-reader announcement (and visible toast). */
export function announce(msg, kind = "info") {
  const live = document.getElementById("announcer");
  if (live) {
    live.textContent = "";
    // a fresh text node makes repeated messages announce again
    requestAnimationFrame(() => { live.textContent = msg; });
  }
  const toast = document.getElementById("toast");
  if (toast) {
    toast.textContent = msg;
    toast.dataset.kind = kind;
    toast.hidden = false;
    clearTimeout(toast._t);
    toast._t = setTimeout(() => { toast.hidden = true; }, 3500);
  }
}

/** Error box with role=alert. */
export function errorBox(err, title = "Request failed") {
  const msg = err && err.message ? err.message : String(err);
  return h("div.alert.alert-error", { role: "alert" },
    h("strong", null, title + ": "), h("span.error-text", null, msg));
}

/** Make `zone` accept dropped files: highlighted while dragged over, `onFiles(files)` on drop. */
export function acceptDrops(zone, onFiles) {
  let depth = 0;
  zone.addEventListener("dragenter", (e) => { e.preventDefault(); depth++; zone.classList.add("over"); });
  zone.addEventListener("dragleave", () => { if (--depth <= 0) { depth = 0; zone.classList.remove("over"); } });
  zone.addEventListener("dragover", (e) => { e.preventDefault(); e.dataTransfer.dropEffect = "copy"; });
  zone.addEventListener("drop", (e) => {
    e.preventDefault();
    depth = 0;
    zone.classList.remove("over");
    onFiles(Array.from(e.dataTransfer.files || []));
  });
}

export function debounce(fn, ms) {
  let t;
  return (...a) => { clearTimeout(t); t = setTimeout(() => fn(...a), ms); };
}

export const prefersReducedMotion = () =>
  window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;

/** Inline SVG histogram of `bins` (counts); bars scaled to the largest bin. */
export function histogramSvg(bins, { width = 96, height = 24, label = "histogram", bad = false } = {}) {
  const max = Math.max(1, ...bins);
  const bw = width / Math.max(1, bins.length);
  const svg = s("svg", { class: "hist" + (bad ? " hist-bad" : ""), width, height,
    viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": label });
  svg.append(s("title", null, label));
  bins.forEach((c, i) => {
    if (!c) return;
    const bh = Math.max(1, (c / max) * (height - 1));
    svg.append(s("rect", { x: (i * bw + 0.5).toFixed(2), y: (height - bh).toFixed(2),
      width: Math.max(0.5, bw - 1).toFixed(2), height: bh.toFixed(2) }));
  });
  return svg;
}
