// The graph toolbar (search, zoom) and the node-details side panel, shared by the Graph and
// Inspect pages.

import { h, clear, fmtInt, fmtCompact, fmtShape, fmtNum, histogramSvg } from "../dom.js";
import { histogram } from "../tensor.js";
import { vertexLines, opFamily } from "./view.js";

/** Search + zoom controls bound to a GraphView. */
export function graphToolbar(view, { idPrefix = "g" } = {}) {
  const search = h("input.search", { type: "search", id: `${idPrefix}-search`, placeholder: "node name or op",
    autocomplete: "off", spellcheck: "false", "aria-describedby": `${idPrefix}-search-count` });
  const count = h("span.match-count", { id: `${idPrefix}-search-count`, role: "status", "aria-live": "polite" });
  const prev = h("button.btn.icon", { type: "button", "aria-label": "Previous match", title: "Previous match (Shift+Enter)" }, "↑");
  const next = h("button.btn.icon", { type: "button", "aria-label": "Next match", title: "Next match (Enter)" }, "↓");
  const zoomOut = h("button.btn.icon", { type: "button", "aria-label": "Zoom out", title: "Zoom out (−)" }, "−");
  const zoomIn = h("button.btn.icon", { type: "button", "aria-label": "Zoom in", title: "Zoom in (+)" }, "+");
  const zoomLabel = h("output.zoom-level", { "aria-live": "off", title: "Zoom level" }, "100%");
  const fit = h("button.btn", { type: "button", title: "Show the whole graph (0)" }, "Fit");
  const reset = h("button.btn", { type: "button", title: "Back to the inputs at 100%" }, "100%");
  // tall, narrow graphs (DenseNet: ~430 layers in one column) get an overview that wraps the
  // layers into side-by-side columns, so the whole model fits the screen at a usable size
  const wrap = h("button.btn#" + idPrefix + "-wrap", { type: "button", "aria-pressed": "false",
    title: "Overview: wrap the layers into columns that fit the screen" }, "Wrap columns");
  wrap.hidden = view.wrapColumns() < 2;
  wrap.addEventListener("click", () => {
    const on = wrap.getAttribute("aria-pressed") !== "true";
    const cols = view.setWrap(on);
    wrap.setAttribute("aria-pressed", String(on && cols > 1));
    wrap.textContent = on && cols > 1 ? `Wrapped: ${cols} columns` : "Wrap columns";
  });
  const form = h("form.search-form", { role: "search", "aria-label": "Find a node" },
    h("label", { for: `${idPrefix}-search` }, "Find node"), search, prev, next, count);
  const bar = h("div.graph-toolbar", null, form,
    h("div.zoom-group", { role: "group", "aria-label": "Zoom" }, zoomOut, zoomLabel, zoomIn, fit, reset, wrap));

  const run = () => {
    const n = view.search(search.value);
    if (!search.value.trim()) { count.textContent = ""; return n; }
    count.textContent = n ? `${n} match${n === 1 ? "" : "es"}` : "no match";
    return n;
  };
  let lastQuery = "";
  search.addEventListener("input", () => { run(); lastQuery = search.value; });
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (search.value !== lastQuery) { run(); lastQuery = search.value; }
    const id = view.nextMatch(1);
    if (id !== null) count.textContent = `${view.matchIndex + 1} of ${view.matches.length}`;
  });
  search.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && e.shiftKey) {
      e.preventDefault();
      if (search.value !== lastQuery) { run(); lastQuery = search.value; }
      if (view.nextMatch(-1) !== null) count.textContent = `${view.matchIndex + 1} of ${view.matches.length}`;
    }
  });
  prev.addEventListener("click", () => { if (view.nextMatch(-1) !== null) count.textContent = `${view.matchIndex + 1} of ${view.matches.length}`; });
  next.addEventListener("click", () => { if (view.nextMatch(1) !== null) count.textContent = `${view.matchIndex + 1} of ${view.matches.length}`; });
  zoomIn.addEventListener("click", () => view.zoomBy(1.25));
  zoomOut.addEventListener("click", () => view.zoomBy(0.8));
  fit.addEventListener("click", () => view.fit());
  reset.addEventListener("click", () => { view.setZoom(1); view.home(); view.setZoom(1); });
  view.opts.onView = (k) => { zoomLabel.textContent = Math.round(k * 100) + "%"; };
  return { el: bar, search };
}

export function legend() {
  const fams = [["input", "input"], ["conv", "convolution"], ["norm", "normalisation"], ["act", "activation"],
    ["pool", "pooling"], ["dense", "dense / matmul"], ["merge", "add / concat"], ["other", "other"], ["output", "output"]];
  return h("ul.legend", { "aria-label": "Colour legend" },
    fams.map(([f, t]) => h("li", null, h(`span.swatch.fam-${f}`, { "aria-hidden": "true" }), t)));
}

function kv(rows) {
  return h("dl.kv", null, rows.filter(Boolean).flatMap(([k, v]) => [h("dt", null, k), h("dd", null, v)]));
}

/**
 * Fill `panel` with the details of vertex `v` (or a hint when null). `inspect` maps vertex
 * id → inspection record for extra stats.
 */
export function showDetails(panel, v, view, { inspect } = {}) {
  clear(panel);
  if (!v) {
    panel.append(h("h2", null, "Node details"),
      h("p.muted", null, "Click a node, or focus the graph and use the arrow keys, to see its attributes here."));
    return;
  }
  const n = v.node;
  const L = vertexLines(v);
  panel.append(h("h2", null, h(`span.swatch.fam-${opFamily(L.title, v.kind)}`, { "aria-hidden": "true" }), L.title),
    h("p.node-name", null, h("code", null, n.name)));
  if (v.kind === "output") {
    panel.append(kv([["Output", h("code", null, n.name)], ["Shape", h("code", null, fmtShape(n.shape))], ["Datatype", n.datatype || "?"]]));
  } else {
    const shapes = n.output_shapes || [];
    panel.append(kv([
      ["Op", h("code", null, n.op)],
      ["Output shape", shapes.length ? h("span", null, shapes.map((sh, i) => h("code.block", null, (shapes.length > 1 ? `[${i}] ` : "") + fmtShape(sh)))) : "?"],
      v.kind === "op" ? ["Parameters", n.params ? `${fmtInt(n.params)} (${fmtCompact(n.params)})` : "0"] : null,
      n.flops != null ? ["FLOPs (batch 1)", fmtCompact(n.flops)] : null,
      n.datatype ? ["Datatype", n.datatype] : null,
      (n.outputs || []).length ? ["Output names", h("span", null, n.outputs.map((o) => h("code.block", null, o)))] : null,
    ]));
  }
  const rec = inspect && inspect.get(v.id);
  if (rec) {
    const hist = rec.values ? histogram(rec.values, 24) : null;
    panel.append(h("h3", null, "Inspection"), kv([
      ["min / max", `${fmtNum(rec.min)} / ${fmtNum(rec.max)}`],
      ["mean ± std", `${fmtNum(rec.mean)} ± ${fmtNum(rec.std)}`],
      ["NaN / Inf", h("span", { class: rec.nan_count || rec.inf_count ? "bad-text" : null }, `${fmtInt(rec.nan_count)} / ${fmtInt(rec.inf_count)}`)],
    ]), hist && hist.n ? histogramSvg(hist.bins, { width: 220, height: 48, label: `Histogram of ${rec.name} values from ${fmtNum(hist.lo)} to ${fmtNum(hist.hi)}`, bad: rec.nan_count || rec.inf_count }) : null);
  }
  const attrs = Object.entries(n.attrs || {});
  if (attrs.length) {
    panel.append(h("h3", null, "Attributes"),
      h("table.data.compact.attrs", null, h("caption.sr-only", null, "Attributes"),
        h("tbody", null, attrs.map(([k, val]) => h("tr", null, h("th", { scope: "row" }, k), h("td", null, h("code", null, String(val))))))));
  } else if (v.kind === "op") {
    panel.append(h("p.muted", null, "No attributes."));
  }
  if ((n.param_tensors || []).length) {
    panel.append(h("h3", null, "Parameter tensors"),
      h("table.data.compact", null, h("caption.sr-only", null, "Parameter tensors"),
        h("thead", null, h("tr", null, h("th", { scope: "col" }, "name"), h("th", { scope: "col" }, "shape"), h("th.num", { scope: "col" }, "size"))),
        h("tbody", null, n.param_tensors.map((p) => h("tr", null,
          h("td", null, h("code", null, p.name), p.auxiliary ? h("span.tag", null, "aux") : null, p.shared ? h("span.tag", null, "shared") : null),
          h("td", null, h("code", null, fmtShape(p.shape))), h("td.num", null, fmtInt(p.size)))))));
  }
  const L2 = view.layout;
  const link = (id) => {
    const u = L2.vertices[id];
    return h("li", null, h("button.linklike", { type: "button", onclick: () => view.select(id, { center: true }) },
      vertexLines(u).title + " ", h("code", null, u.node.name)));
  };
  if (v.preds.length) panel.append(h("h3", null, "Inputs"), h("ul.nodelinks", null, v.preds.map(link)));
  if (v.succs.length) panel.append(h("h3", null, "Consumers"), h("ul.nodelinks", null, v.succs.map(link)));
}
