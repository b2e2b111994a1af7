// Inspect: run op-hook inspection (POST …/inspect) and show per-op statistics with inline
// histograms, and the graph with the nodes that produced NaN/Inf marked.

import { h, clear, fmtNum, fmtInt, fmtShape, errorBox, histogramSvg, announce } from "../dom.js";
import { get, request, modelPath } from "../api.js";
import { encodeRequest, histogram } from "../tensor.js";
import { GraphView } from "../graph/view.js";
import { graphToolbar, showDetails } from "../graph/panel.js";
import { openModelPage, inputBuilder, sortableTable } from "./common.js";
import { inspections, key } from "../store.js";

/** Vertex marks for a GraphView from an inspection response. */
export function marksFromInspection(view, resp) {
  const marks = new Map(), byVertex = new Map();
  let unmapped = 0, bad = 0;
  const locate = (name) => {
    let id = view.vertexForOutput(name);
    let cut = name;
    while (id === undefined && cut.includes("_")) {       // monitor_all: <node>_<input slot>
      cut = cut.slice(0, cut.lastIndexOf("_"));
      id = view.vertexForOutput(cut);
    }
    return id;
  };
  for (const rec of resp.records) {
    const id = locate(rec.name);
    if (id === undefined) { unmapped++; continue; }
    rec.vertex = id;
    const own = (view.layout.vertices[id].node.outputs || []).includes(rec.name);
    if (!byVertex.has(id) || own) byVertex.set(id, rec);
    const isBad = rec.nan_count > 0 || rec.inf_count > 0;
    const prev = marks.get(id);
    if (isBad) {
      const badge = rec.nan_count && rec.inf_count ? "NaN+Inf" : rec.nan_count ? "NaN" : "Inf";
      if (!prev || prev.cls !== "bad") bad++;
      marks.set(id, { cls: "bad", badge, label: `${fmtInt(rec.nan_count)} NaN, ${fmtInt(rec.inf_count)} Inf` });
    } else if (!prev) {
      marks.set(id, { cls: "inspected", label: "inspected, finite" });
    }
  }
  return { marks, byVertex, unmapped, bad };
}

export async function render(main, ctx) {
  const meta = await openModelPage(main, ctx, "inspect", "Inspect");
  if (!meta) return;
  const builder = inputBuilder(meta.inputs, { idPrefix: "insp", nanOption: true });
  const filterIn = h("input#insp-filter", { type: "text", placeholder: "node name or op (substring, any case)", autocomplete: "off" });
  const regexBox = h("input#insp-regex", { type: "checkbox" });
  const allBox = h("input#insp-all", { type: "checkbox" });
  const valuesBox = h("input#insp-values", { type: "checkbox", checked: true });
  const maxIn = h("input#insp-max", { type: "number", min: 16, max: 100000, step: 1, value: 4096, inputmode: "numeric" });
  const runBtn = h("button.btn.btn-primary#insp-run", { type: "submit" }, "Run inspection");
  const form = h("form.card", { "aria-labelledby": "insp-in-h" },
    h("h2#insp-in-h", null, "Input and options"), builder.el,
    h("fieldset.options", null, h("legend", null, "Inspection"),
      h("div.field.inline", null, h("label", { for: "insp-filter" }, "Filter"), filterIn),
      h("label.check", null, regexBox, " Filter is a regular expression"),
      h("label.check", null, allBox, " Also record each op's inputs (monitor_all)"),
      h("label.check", null, valuesBox, " Return values for histograms"),
      h("div.field.inline", null, h("label", { for: "insp-max" }, "Values per tensor (cap)"), maxIn)),
    h("div.actions", null, runBtn));
  const status = h("div#insp-status", { role: "status", "aria-live": "polite" });
  const results = h("div#insp-results");
  const graphSec = h("section.card.inspect-graph", { "aria-labelledby": "insp-graph-h" },
    h("h2#insp-graph-h", null, "Graph"), h("p.muted", null, "Nodes that produced NaN or Inf are marked in red; click a node for its statistics."));
  main.append(form, status, results, graphSec);

  // the graph loads in parallel with the user filling the form
  let view = null, inspectMap = null;
  const panel = h("aside.panel.node-panel", { "aria-label": "Node details" });
  const graphReady = get(modelPath(ctx.name, ctx.version) + "/graph").then((doc) => {
    if (!ctx.isCurrent()) return;
    const host = h("div.graph-host.short");
    graphSec.append(h("div.graph-layout", null, h("div.graph-main", null, host), panel));
    view = new GraphView(host, doc, { label: `Graph of ${ctx.name} for inspection`,
      onSelect: (v) => showDetails(panel, v, view, { inspect: inspectMap }) });
    host.before(graphToolbar(view, { idPrefix: "insp-graph" }).el);
    showDetails(panel, null, view);
    view.home();
    const last = inspections.get(key(ctx.name, ctx.version || doc.version));
    if (last) apply(last, false);
  }).catch((e) => { graphSec.append(errorBox(e, "Could not load the graph")); });

  function apply(resp, announceIt = true) {
    clear(results);
    let mapped = null;
    if (view) {
      mapped = marksFromInspection(view, resp);
      view.setMarks(mapped.marks);
      inspectMap = mapped.byVertex;
    }
    const recs = resp.records.map((r, i) => ({ ...r, idx: i + 1, bad: (r.nan_count || 0) + (r.inf_count || 0) }));
    const badRecs = recs.filter((r) => r.bad);
    const first = badRecs[0];
    const summary = h("p.inspect-summary", null,
      `${fmtInt(recs.length)} record(s)` + (resp.records_truncated ? ` (${fmtInt(resp.records_skipped)} more skipped by the server's cap)` : "") + ". ",
      badRecs.length ? h("strong.bad-text", null, `${badRecs.length} tensor(s) contain NaN or Inf`) : h("span.ok-text", null, "No NaN or Inf anywhere."),
      first ? h("span", null, " — first at ", goto(first, h("code", null, first.name)), ".") : null,
      mapped && mapped.unmapped ? h("span.muted", null, ` ${mapped.unmapped} record(s) have no node on the graph.`) : null);
    const anyValues = recs.some((r) => Array.isArray(r.values));
    const table = sortableTable({
      id: "inspect-table",
      caption: "Per-op statistics (min/max/mean/std over finite values)",
      columns: [
        { key: "idx", label: "#", numeric: true },
        { key: "name", label: "Tensor", header: true, format: (r) => goto(r, h("code", null, r.name)) },
        { key: "op", label: "Op" },
        { key: "shape", label: "Shape", format: (r) => h("code", null, fmtShape(r.shape)), sortValue: (r) => r.size },
        { key: "min", label: "Min", numeric: true, format: (r) => fmtNum(r.min) },
        { key: "max", label: "Max", numeric: true, format: (r) => fmtNum(r.max) },
        { key: "mean", label: "Mean", numeric: true, format: (r) => fmtNum(r.mean) },
        { key: "std", label: "Std", numeric: true, format: (r) => fmtNum(r.std) },
        { key: "nan_count", label: "NaN", numeric: true, format: (r) => h("span", { class: r.nan_count ? "bad-text" : null }, fmtInt(r.nan_count)) },
        { key: "inf_count", label: "Inf", numeric: true, format: (r) => h("span", { class: r.inf_count ? "bad-text" : null }, fmtInt(r.inf_count)) },
        { key: "hist", label: "Histogram", sortable: false, format: (r) => histCell(r) },
      ],
      rows: recs,
      rowAttrs: (r) => ({ class: r.bad ? "row-bad" : null, "data-name": r.name }),
    });
    results.append(h("section.card", { "aria-labelledby": "insp-res-h" }, h("h2#insp-res-h", null, "Statistics"), summary,
      anyValues ? null : h("p.muted", null, "Histograms need values: tick “Return values for histograms”."),
      h("div.table-wrap", { tabindex: 0, role: "region", "aria-label": "Per-op statistics" }, table.table)));
    if (resp.outputs && resp.outputs.length) {
      results.lastChild.append(h("h3", null, "Model outputs"), h("ul.plain", null, resp.outputs.map((o) =>
        h("li", null, h("code", null, o.name), ` ${fmtShape(o.shape)}: min ${fmtNum(o.min)}, max ${fmtNum(o.max)}, mean ${fmtNum(o.mean)}` +
          (o.nan_count || o.inf_count ? `, ${o.nan_count} NaN, ${o.inf_count} Inf` : "")))));
    }
    if (announceIt) announce(badRecs.length ? `Inspection done: ${badRecs.length} tensors with NaN or Inf` : `Inspection done: ${recs.length} records, all finite`);
  }

  function goto(rec, label) {
    return h("button.linklike", { type: "button", title: "Show on the graph", onclick: () => {
      if (!view || rec.vertex === undefined) return;
      view.select(rec.vertex, { center: true });
      graphSec.scrollIntoView({ behavior: "smooth", block: "start" });
      view.canvas.focus({ preventScroll: true });
    } }, label);
  }

  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    runBtn.disabled = true;
    status.textContent = "Inspecting…";
    try {
      const tensors = await builder.collect();
      const params = { include_values: valuesBox.checked, monitor_all: allBox.checked };
      if (valuesBox.checked) params.max_values = Math.max(16, Math.trunc(Number(maxIn.value) || 4096));
      if (filterIn.value.trim()) { params.filter = filterIn.value.trim(); params.regex = regexBox.checked; }
      const { body, headers } = encodeRequest(tensors, params, false);
      const t0 = performance.now();
      const resp = await request("POST", modelPath(ctx.name, ctx.version) + "/inspect", { body, headers });
      const ms = performance.now() - t0;
      if (!ctx.isCurrent()) return;
      await graphReady;
      inspections.set(key(ctx.name, ctx.version || resp.model_version), resp);
      status.textContent = `Inspection of ${resp.model_name} v${ctx.version || resp.model_version} took ${ms.toFixed(0)} ms.`;
      apply(resp);
    } catch (err) {
      status.textContent = "";
      clear(results).append(errorBox(err, "Inspection failed"));
    } finally {
      runBtn.disabled = false;
    }
  });
  return () => { if (view) view.destroy(); };
}

function histCell(r) {
  if (!Array.isArray(r.values) || !r.values.length) return h("span.muted", null, "—");
  const vals = r.values.map((v) => (v === null ? NaN : Number(v)));
  const hs = histogram(vals, 20);
  if (!hs.n) return h("span.muted", null, "no finite values");
  const note = r.values_truncated ? ` (first ${fmtInt(r.values.length)} of ${fmtInt(r.size)} values)` : "";
  return histogramSvg(hs.bins, { width: 96, height: 22, bad: r.bad > 0,
    label: `Histogram of ${r.name}: ${hs.n} finite values from ${fmtNum(hs.lo)} to ${fmtNum(hs.hi)}${note}` });
}
