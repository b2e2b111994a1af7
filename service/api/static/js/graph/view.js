// Interactive SVG view of a laid-out graph: zoom (wheel, buttons, keys), pan (drag, keys),
// search with highlight + centring, selection (click or keyboard), a minimap, level-of-detail
// classes for large graphs, and marks (e.g. NaN/Inf from an inspection).
//
// The layout is computed once; zooming and panning only change one transform attribute.

import { h, s, fmtShape, fmtCompact, prefersReducedMotion } from "../dom.js";
import { layoutGraph, edgePath } from "./layout.js";

const NODE_H = 54;
const MIN_K = 0.02, MAX_K = 4;

/** Op name → colour family (class suffix). */
export function opFamily(op, kind) {
  if (kind === "input") return "input";
  if (kind === "output") return "output";
  const o = op.toLowerCase();
  if (o.includes("conv") || o.includes("deconv")) return "conv";
  if (o.includes("norm")) return "norm";
  if (o.includes("fullyconnected") || o.includes("fully_connected") || o === "dot" || o.includes("dense") || o.includes("matmul") || o.includes("batch_dot")) return "dense";
  if (o.includes("pool")) return "pool";
  if (o.includes("activation") || o.includes("relu") || o.includes("sigmoid") || o.includes("tanh") || o.includes("softmax") || o.includes("gelu") || o.includes("elu")) return "act";
  if (o.includes("concat") || o.includes("add") || o.includes("plus") || o.includes("elemwise") || o.includes("broadcast") || o.includes("mul") || o.includes("sub")) return "merge";
  if (o.includes("rnn") || o.includes("lstm") || o.includes("gru")) return "rnn";
  return "other";
}

let measureCtx = null;
function textWidth(text, font) {
  if (!measureCtx) measureCtx = document.createElement("canvas").getContext("2d");
  measureCtx.font = font;
  return measureCtx.measureText(text).width;
}

function ellipsize(text, max) {
  return text.length > max ? text.slice(0, max - 1) + "…" : text;
}

/** The three lines of a vertex's box. */
export function vertexLines(v) {
  const n = v.node;
  if (v.kind === "output") {
    return { title: "output", name: n.name, meta: fmtShape(n.shape) + (n.datatype ? " " + n.datatype : "") };
  }
  const shapes = n.output_shapes || [];
  const shape = shapes.length === 1 ? fmtShape(shapes[0]) : shapes.length ? shapes.map(fmtShape).join(" ") : "?";
  if (v.kind === "input") return { title: "input", name: n.name, meta: shape + " " + (n.datatype || "") };
  const meta = n.params ? `${shape} · ${fmtCompact(n.params)} params` : shape;
  return { title: n.op, name: n.name, meta };
}

function measureVertex(v) {
  const L = vertexLines(v);
  const wt = Math.max(textWidth(L.title, "600 12px system-ui, sans-serif"),
    textWidth(ellipsize(L.name, 30), "11px system-ui, sans-serif"),
    textWidth(ellipsize(L.meta, 36), "11px ui-monospace, monospace"));
  return { w: Math.min(260, Math.max(116, Math.ceil(wt) + 22)), h: NODE_H };
}

export class GraphView {
  /**
   * @param {HTMLElement} host
   * @param {object} doc  graph document from /graph
   * @param {{onSelect?: Function, label?: string}} opts
   */
  constructor(host, doc, opts = {}) {
    this.doc = doc;
    this.opts = opts;
    this.layout = layoutGraph(doc, measureVertex);
    this.k = 1; this.tx = 0; this.ty = 0;
    this.selected = null;
    this.matches = [];
    this.matchIndex = -1;
    this.marks = new Map();
    this.byOutput = new Map();
    for (const v of this.layout.vertices) {
      if (v.kind === "output") continue;
      for (const o of v.node.outputs || []) this.byOutput.set(o, v.id);
      this.byOutput.set(v.node.name, v.id);
    }
    this.cols = 1;
    this.geom = this._geometry(1);
    this._build(host);
  }

  // -- geometry: the layout as drawn, optionally wrapped into columns --------------------------
  /** Positions and edge polylines with the layers split into `cols` side-by-side columns (an
   * overview for tall, narrow graphs such as DenseNet); cols = 1 is the plain layout. */
  _geometry(cols) {
    const L = this.layout;
    const n = Math.max(1, L.stats.layers);
    const per = cols > 1 ? Math.ceil(n / cols) : n;
    const gap = 90, pitch = L.rowPitch;
    const col = (layer) => Math.floor(layer / per);
    const dx = (layer) => col(layer) * (L.width + gap);
    const dy = (layer) => -col(layer) * per * pitch;
    const px = new Float64Array(L.vertices.length), py = new Float64Array(L.vertices.length);
    let maxX = 0, maxY = 0;
    for (const v of L.vertices) {
      px[v.id] = v.x + dx(v.layer);
      py[v.id] = v.y + dy(v.layer);
      maxX = Math.max(maxX, px[v.id] + v.w / 2);
      maxY = Math.max(maxY, py[v.id] + v.h / 2);
    }
    const edges = L.edges.map((e) => {
      const a = L.vertices[e.from].layer;
      const segs = [];
      let cur = [];
      e.points.forEach((p, i) => {
        const l = a + i;
        const q = [p[0] + dx(l), p[1] + dy(l)];
        if (i > 0 && col(l) !== col(l - 1)) {        // continue at the top of the next column
          const last = cur[cur.length - 1];
          cur.push([last[0], last[1] + pitch * 0.45]);
          segs.push(cur);
          cur = [[q[0], q[1] - pitch * 0.45]];
        }
        cur.push(q);
      });
      segs.push(cur);
      return segs;
    });
    return { cols, px, py, edges, width: maxX + L.margin, height: maxY + L.margin };
  }

  /** Columns that make a tall graph's overview roughly the canvas's shape (1 = no wrap). */
  wrapColumns() {
    const r = this.canvas.getBoundingClientRect();
    const L = this.layout;
    const k = Math.round(Math.sqrt((L.height * Math.max(1, r.width)) / (L.width * Math.max(1, r.height))));
    return Math.max(1, Math.min(60, k, L.stats.layers));
  }

  /** Switch between the plain layout and the column-wrapped overview (positions only: the
   * layering and ordering stay as computed). */
  setWrap(on) {
    const cols = on ? this.wrapColumns() : 1;
    if (cols === this.cols) return cols;
    this.cols = cols;
    this.geom = this._geometry(cols);
    this._place();
    this._drawMinimapBase();
    this.fit();
    return cols;
  }

  _place() {
    const { px, py, edges } = this.geom;
    for (const v of this.layout.vertices) {
      this.nodeEls[v.id].setAttribute("transform", `translate(${(px[v.id] - v.w / 2).toFixed(1)},${(py[v.id] - v.h / 2).toFixed(1)})`);
    }
    edges.forEach((segs, i) => this.edgeEls[i].setAttribute("d", segs.map(edgePath).join("")));
  }

  // -- construction ----------------------------------------------------------------------------
  _build(host) {
    const L = this.layout;
    const label = this.opts.label || `Graph of ${this.doc.name}`;
    this.svg = s("svg", { class: "graph-svg", "aria-hidden": "true", focusable: "false" });
    const defs = s("defs", null,
      s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7,
        markerHeight: 7, orient: "auto-start-reverse" }, s("path", { d: "M0,0 L10,5 L0,10 z", class: "arrowhead" })));
    this.viewport = s("g", { class: "viewport" });
    const gEdges = s("g", { class: "edges" });
    const gNodes = s("g", { class: "nodes" });
    this.svg.append(defs, this.viewport);
    this.viewport.append(gEdges, gNodes);

    this.edgeEls = [];
    for (const segs of this.geom.edges) {
      const p = s("path", { d: segs.map(edgePath).join(""), class: "edge", "marker-end": "url(#arrow)" });
      this.edgeEls.push(p);
      gEdges.append(p);
    }
    const { px, py } = this.geom;
    this.nodeEls = new Array(L.vertices.length);
    const frag = document.createDocumentFragment();
    for (const v of L.vertices) {
      const lines = vertexLines(v);
      const fam = opFamily(lines.title, v.kind);
      const g = s("g", { class: `gnode fam-${fam}`, transform: `translate(${(px[v.id] - v.w / 2).toFixed(1)},${(py[v.id] - v.h / 2).toFixed(1)})`, "data-id": v.id });
      g.append(
        s("title", null, `${lines.title}: ${lines.name}\n${lines.meta}`),
        s("rect", { class: "box", width: v.w, height: v.h, rx: 6, ry: 6 }),
        s("rect", { class: "stripe", width: 5, height: v.h, rx: 2 }),
        s("text", { class: "t-op", x: 12, y: 17 }, ellipsize(lines.title, 30)),
        s("text", { class: "t-name", x: 12, y: 32 }, ellipsize(lines.name, 30)),
        s("text", { class: "t-meta", x: 12, y: 46 }, ellipsize(lines.meta, 36)));
      this.nodeEls[v.id] = g;
      frag.append(g);
    }
    gNodes.append(frag);

    this.canvas = h("div.graph-canvas", {
      tabindex: 0, role: "application",
      "aria-roledescription": "graph viewer",
      "aria-label": `${label}: ${this.doc.op_count} ops. Arrow keys move between nodes, ` +
        "Shift+arrows pan, plus and minus zoom, 0 fits the graph, Enter centres the selected node.",
    }, this.svg);
    this.live = h("div.sr-only", { "aria-live": "polite", role: "status" });
    this.minimap = h("canvas.minimap", { width: 180, height: 180, "aria-hidden": "true",
      title: "Overview: click or drag to move the view" });
    this.root = h("div.graph-viewer", null, this.canvas, this.minimap, this.live);
    host.append(this.root);
    this._events();
    this._drawMinimapBase();
    this._resizeObs = new ResizeObserver(() => this._scheduleApply());
    this._resizeObs.observe(this.canvas);
  }

  _events() {
    const c = this.canvas;
    let drag = null;
    c.addEventListener("pointerdown", (e) => {
      if (e.button !== 0) return;
      drag = { x: e.clientX, y: e.clientY, tx: this.tx, ty: this.ty, moved: false, id: e.pointerId };
    });
    c.addEventListener("pointermove", (e) => {
      if (!drag || e.pointerId !== drag.id) return;
      const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      if (!drag.moved && Math.hypot(dx, dy) > 4) {
        drag.moved = true;
        c.setPointerCapture(e.pointerId);
        c.classList.add("dragging");
      }
      if (drag.moved) { this.tx = drag.tx + dx; this.ty = drag.ty + dy; this._scheduleApply(); }
    });
    const end = (e) => {
      if (!drag || e.pointerId !== drag.id) return;
      const wasDrag = drag.moved;
      drag = null;
      c.classList.remove("dragging");
      if (!wasDrag && e.type === "pointerup") {
        const g = e.target.closest && e.target.closest(".gnode");
        if (g) this.select(Number(g.dataset.id), { center: false });
      }
    };
    c.addEventListener("pointerup", end);
    c.addEventListener("pointercancel", end);
    c.addEventListener("wheel", (e) => {
      e.preventDefault();
      const scale = e.deltaMode === 1 ? 33 : e.deltaMode === 2 ? 400 : 1;
      const r = c.getBoundingClientRect();
      this.zoomBy(Math.exp(-e.deltaY * scale * 0.0015), e.clientX - r.left, e.clientY - r.top);
    }, { passive: false });
    c.addEventListener("keydown", (e) => this._key(e));
    c.addEventListener("focus", () => {
      if (this.selected === null) this.live.textContent = "Graph focused. Use arrow keys to select nodes.";
    });

    const mm = this.minimap;
    let mmDrag = false;
    const mmMove = (e) => {
      const r = mm.getBoundingClientRect();
      const gx = (e.clientX - r.left - this.mm.ox) / this.mm.scale;
      const gy = (e.clientY - r.top - this.mm.oy) / this.mm.scale;
      const vr = this.canvas.getBoundingClientRect();
      this.tx = vr.width / 2 - gx * this.k;
      this.ty = vr.height / 2 - gy * this.k;
      this._scheduleApply();
    };
    mm.addEventListener("pointerdown", (e) => { mmDrag = true; mm.setPointerCapture(e.pointerId); mmMove(e); });
    mm.addEventListener("pointermove", (e) => { if (mmDrag) mmMove(e); });
    mm.addEventListener("pointerup", () => { mmDrag = false; });
  }

  _key(e) {
    const step = 80;
    const k = e.key;
    if (e.shiftKey && k.startsWith("Arrow")) {
      if (k === "ArrowLeft") this.tx += step;
      if (k === "ArrowRight") this.tx -= step;
      if (k === "ArrowUp") this.ty += step;
      if (k === "ArrowDown") this.ty -= step;
      this._scheduleApply();
    } else if (k.startsWith("Arrow")) {
      this._moveSelection(k);
    } else if (k === "+" || k === "=") {
      this.zoomBy(1.25);
    } else if (k === "-" || k === "_") {
      this.zoomBy(0.8);
    } else if (k === "0") {
      this.fit();
    } else if (k === "Enter" || k === " ") {
      if (this.selected !== null) this.centerOn(this.selected);
    } else if (k === "Escape") {
      this.select(null);
    } else {
      return;
    }
    e.preventDefault();
  }

  _moveSelection(key) {
    const L = this.layout;
    if (this.selected === null) {
      const first = L.layers[0] && L.layers[0][0];
      if (first !== undefined) this.select(first, { center: "ifHidden" });
      return;
    }
    const v = L.vertices[this.selected];
    let next = null;
    if (key === "ArrowUp" && v.preds.length) next = v.preds[0];
    if (key === "ArrowDown" && v.succs.length) next = v.succs[0];
    if (key === "ArrowLeft" || key === "ArrowRight") {
      const row = L.layers[v.layer];
      const i = row.indexOf(v.id) + (key === "ArrowLeft" ? -1 : 1);
      if (i >= 0 && i < row.length) next = row[i];
    }
    if (next !== null) this.select(next, { center: "ifHidden" });
  }

  // -- view transform --------------------------------------------------------------------------
  _scheduleApply() {
    if (this._raf) return;
    this._raf = requestAnimationFrame(() => { this._raf = 0; this._apply(); });
  }

  _apply() {
    this.viewport.setAttribute("transform", `translate(${this.tx.toFixed(2)},${this.ty.toFixed(2)}) scale(${this.k.toFixed(4)})`);
    const lod = this.k < 0.22 ? "lod-low" : this.k < 0.5 ? "lod-mid" : "lod-full";
    if (lod !== this._lod) {
      this.svg.classList.remove("lod-low", "lod-mid", "lod-full");
      this.svg.classList.add(lod);
      this._lod = lod;
    }
    this._drawMinimapView();
    if (this.opts.onView) this.opts.onView(this.k);
  }

  zoomBy(f, cx, cy) {
    const r = this.canvas.getBoundingClientRect();
    if (cx === undefined) { cx = r.width / 2; cy = r.height / 2; }
    const k = Math.min(MAX_K, Math.max(MIN_K, this.k * f));
    const gx = (cx - this.tx) / this.k, gy = (cy - this.ty) / this.k;
    this.k = k;
    this.tx = cx - gx * k;
    this.ty = cy - gy * k;
    this._scheduleApply();
  }

  setZoom(k) { this.zoomBy(k / this.k); }

  /** Whole graph in view. */
  fit() {
    const r = this.canvas.getBoundingClientRect();
    const L = this.geom;
    const k = Math.min(MAX_K, Math.max(MIN_K, Math.min(r.width / L.width, r.height / L.height) * 0.98));
    this.k = k;
    this.tx = (r.width - L.width * k) / 2;
    this.ty = (r.height - L.height * k) / 2;
    this._scheduleApply();
  }

  /** Start view: readable scale, top of the graph (the inputs) in view. */
  home() {
    const r = this.canvas.getBoundingClientRect();
    const L = this.layout, G = this.geom;
    const fitK = Math.min(r.width / G.width, r.height / G.height);
    if (fitK >= 0.6) { this.fit(); return; }
    this.k = Math.max(0.6, Math.min(1, r.width / G.width));
    const first = L.layers[0] && L.layers[0].length ? L.layers[0][0] : null;
    const cx = first !== null ? G.px[first] : G.width / 2;
    this.tx = r.width / 2 - cx * this.k;
    this.ty = 10;
    this._scheduleApply();
  }

  isVisible(id, pad = 30) {
    const v = this.layout.vertices[id];
    const r = this.canvas.getBoundingClientRect();
    const x = this.geom.px[id], y = this.geom.py[id];
    const x0 = (x - v.w / 2) * this.k + this.tx, x1 = (x + v.w / 2) * this.k + this.tx;
    const y0 = (y - v.h / 2) * this.k + this.ty, y1 = (y + v.h / 2) * this.k + this.ty;
    return x0 >= pad && y0 >= pad && x1 <= r.width - pad && y1 <= r.height - pad;
  }

  centerOn(id, { minZoom = 0.7 } = {}) {
    const v = this.layout.vertices[id];
    const r = this.canvas.getBoundingClientRect();
    const k1 = Math.max(this.k, minZoom);
    const tx1 = r.width / 2 - this.geom.px[v.id] * k1, ty1 = r.height / 2 - this.geom.py[v.id] * k1;
    cancelAnimationFrame(this._anim);
    delete this.canvas.dataset.animating;
    if (prefersReducedMotion()) { this.k = k1; this.tx = tx1; this.ty = ty1; this._scheduleApply(); return; }
    const k0 = this.k, tx0 = this.tx, ty0 = this.ty, t0 = performance.now(), dur = 260;
    this.canvas.dataset.animating = "1";
    const stepFn = (now) => {
      const t = Math.min(1, (now - t0) / dur), e = t < 0.5 ? 2 * t * t : 1 - Math.pow(-2 * t + 2, 2) / 2;
      this.k = k0 + (k1 - k0) * e; this.tx = tx0 + (tx1 - tx0) * e; this.ty = ty0 + (ty1 - ty0) * e;
      this._apply();
      if (t < 1) this._anim = requestAnimationFrame(stepFn);
      else delete this.canvas.dataset.animating;
    };
    this._anim = requestAnimationFrame(stepFn);
  }

  // -- selection, search, marks ----------------------------------------------------------------
  select(id, { center = false } = {}) {
    if (this.selected !== null && this.nodeEls[this.selected]) this.nodeEls[this.selected].classList.remove("selected");
    this.selected = id;
    if (id !== null && id !== undefined) {
      this.nodeEls[id].classList.add("selected");
      if (center === true || (center === "ifHidden" && !this.isVisible(id))) this.centerOn(id);
      const L = vertexLines(this.layout.vertices[id]);
      const mark = this.marks.get(id);
      this.live.textContent = `${L.title} ${L.name}, ${L.meta}${mark ? ", " + mark.label : ""}`;
    }
    this._highlightEdges(id);
    if (this.opts.onSelect) this.opts.onSelect(id === null ? null : this.layout.vertices[id]);
  }

  _highlightEdges(id) {
    for (const el of this.svg.querySelectorAll(".edge.hl")) el.classList.remove("hl");
    if (id === null || id === undefined) return;
    this.layout.edges.forEach((e, i) => { if (e.from === id || e.to === id) this.edgeEls[i].classList.add("hl"); });
  }

  /** Highlight every node whose name (or op) contains `q`; returns the match count. */
  search(q) {
    for (const id of this.matches) this.nodeEls[id].classList.remove("match", "current");
    this.matches = [];
    this.matchIndex = -1;
    const needle = q.trim().toLowerCase();
    if (!needle) return 0;
    const exact = [], partial = [];
    for (const v of this.layout.vertices) {
      const n = v.node;
      const name = (n.name || "").toLowerCase();
      if (name === needle) exact.push(v.id);
      else if (name.includes(needle) || (v.kind === "op" && n.op.toLowerCase().includes(needle))) partial.push(v.id);
    }
    const byPos = (a, b) => this.layout.vertices[a].y - this.layout.vertices[b].y || this.layout.vertices[a].x - this.layout.vertices[b].x;
    this.matches = exact.concat(partial.sort(byPos));
    for (const id of this.matches) this.nodeEls[id].classList.add("match");
    return this.matches.length;
  }

  /** Go to the next (+1) or previous (−1) match: highlight, centre and select it. */
  nextMatch(dir = 1) {
    if (!this.matches.length) return null;
    if (this.matchIndex >= 0) this.nodeEls[this.matches[this.matchIndex]].classList.remove("current");
    this.matchIndex = (this.matchIndex + dir + this.matches.length) % this.matches.length;
    const id = this.matches[this.matchIndex];
    this.nodeEls[id].classList.add("current");
    this.centerOn(id, { minZoom: 0.9 });
    this.select(id);
    return id;
  }

  /** Marks: Map(vertex id → {cls, label}); e.g. NaN/Inf from an inspection. */
  setMarks(marks) {
    for (const [id] of this.marks) {
      const g = this.nodeEls[id];
      g.classList.remove("bad", "ok", "inspected");
      const b = g.querySelector(".badge");
      if (b) b.remove();
    }
    this.marks = marks;
    for (const [id, m] of marks) {
      const g = this.nodeEls[id];
      const v = this.layout.vertices[id];
      g.classList.add(m.cls);
      if (m.badge) {
        const bw = 8 + m.badge.length * 7;
        g.append(s("g", { class: "badge", transform: `translate(${v.w - bw - 4},${-9})` },
          s("rect", { width: bw, height: 16, rx: 8 }),
          s("text", { x: bw / 2, y: 12, "text-anchor": "middle" }, m.badge)));
      }
    }
    this._drawMinimapBase();
    this._drawMinimapView();
  }

  vertexForOutput(name) {
    if (this.byOutput.has(name)) return this.byOutput.get(name);
    const stripped = name.replace(/_(output|out)\d*$/, "");
    return this.byOutput.has(stripped) ? this.byOutput.get(stripped) : undefined;
  }

  // -- minimap -----------------------------------------------------------------------------------
  _drawMinimapBase() {
    const L = this.layout, G = this.geom;
    const maxW = 180, maxH = 220;
    const scale = Math.min(maxW / G.width, maxH / G.height);
    const cw = Math.max(40, Math.ceil(G.width * scale)), ch = Math.max(40, Math.ceil(G.height * scale));
    const dpr = window.devicePixelRatio || 1;
    const mm = this.minimap;
    mm.width = cw * dpr; mm.height = ch * dpr;
    mm.style.width = cw + "px"; mm.style.height = ch + "px";
    this.mm = { scale, ox: (cw - G.width * scale) / 2, oy: (ch - G.height * scale) / 2, cw, ch, dpr };
    const base = document.createElement("canvas");
    base.width = mm.width; base.height = mm.height;
    const ctx = base.getContext("2d");
    ctx.scale(dpr, dpr);
    const css = getComputedStyle(this.root);
    ctx.fillStyle = css.getPropertyValue("--mm-bg").trim() || "#f4f6f8";
    ctx.fillRect(0, 0, cw, ch);
    ctx.strokeStyle = css.getPropertyValue("--mm-edge").trim() || "#b8c0cc";
    ctx.lineWidth = 0.5;
    ctx.beginPath();
    for (const segs of G.edges) {
      for (const p of segs) {
        ctx.moveTo(this.mm.ox + p[0][0] * scale, this.mm.oy + p[0][1] * scale);
        for (let i = 1; i < p.length; i++) ctx.lineTo(this.mm.ox + p[i][0] * scale, this.mm.oy + p[i][1] * scale);
      }
    }
    ctx.stroke();
    const nodeColor = css.getPropertyValue("--mm-node").trim() || "#4a6fa5";
    const badColor = css.getPropertyValue("--bad").trim() || "#c62828";
    for (const v of L.vertices) {
      ctx.fillStyle = this.marks.get(v.id) && this.marks.get(v.id).cls === "bad" ? badColor : nodeColor;
      ctx.fillRect(this.mm.ox + (G.px[v.id] - v.w / 2) * scale, this.mm.oy + (G.py[v.id] - v.h / 2) * scale,
        Math.max(1.5, v.w * scale), Math.max(1.5, v.h * scale));
    }
    this.mmBase = base;
  }

  _drawMinimapView() {
    if (!this.mm || !this.mmBase) return;
    const ctx = this.minimap.getContext("2d");
    const { scale, ox, oy, dpr } = this.mm;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.drawImage(this.mmBase, 0, 0);
    ctx.scale(dpr, dpr);
    const r = this.canvas.getBoundingClientRect();
    const x = ox + (-this.tx / this.k) * scale, y = oy + (-this.ty / this.k) * scale;
    const w = (r.width / this.k) * scale, hh = (r.height / this.k) * scale;
    ctx.strokeStyle = getComputedStyle(this.root).getPropertyValue("--accent").trim() || "#d9480f";
    ctx.lineWidth = 1.5;
    ctx.strokeRect(x, y, w, hh);
  }

  destroy() {
    cancelAnimationFrame(this._raf);
    cancelAnimationFrame(this._anim);
    if (this._resizeObs) this._resizeObs.disconnect();
    this.root.remove();
  }
}
