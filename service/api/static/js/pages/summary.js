// Summary: the layer table of GET …/summary, sortable by any column, with totals; the
// MXNet-style text table on demand.

import { h, clear, fmtInt, fmtCompact, fmtShape, errorBox } from "../dom.js";
import { get, modelPath } from "../api.js";
import { modelHeading, noModel, sortableTable } from "./common.js";

export async function render(main, ctx) {
  if (!ctx.name) { noModel(main, "Summary"); return; }
  const batchIn = h("input#sum-batch", { type: "number", min: 1, step: 1, value: 1, inputmode: "numeric" });
  const shapeIn = h("input#sum-shape", { type: "text", placeholder: "data:1,3,224,224", autocomplete: "off", spellcheck: "false" });
  const filterIn = h("input#sum-filter", { type: "search", placeholder: "name or op", autocomplete: "off" });
  const textToggle = h("input#sum-text", { type: "checkbox" });
  const controls = h("form.toolbar.summary-controls", { "aria-label": "Summary options" },
    h("label", { for: "sum-batch" }, "Batch size"), batchIn,
    h("label", { for: "sum-shape" }, "Input shape"), shapeIn,
    h("label", { for: "sum-filter" }, "Filter rows"), filterIn,
    h("label.check", null, textToggle, " MXNet text table"));
  const body = h("div#summary-body", { "aria-live": "polite", "aria-busy": "true" });
  main.append(modelHeading("summary", "Summary", ctx), controls, body);
  let data = null, table = null, sortState = null;

  function rowsFiltered() {
    const q = filterIn.value.trim().toLowerCase();
    const rows = data.layers.map((r, i) => ({ ...r, idx: i + 1, shapeSize: shapeSize(r.output_shape) }));
    return q ? rows.filter((r) => r.name.toLowerCase().includes(q) || r.op.toLowerCase().includes(q)) : rows;
  }

  async function load() {
    body.setAttribute("aria-busy", "true");
    const b = Math.max(1, Math.trunc(Number(batchIn.value) || 1));
    const shapes = shapeIn.value.split(/[;\s]+/).filter(Boolean)
      .map((s) => "&shape=" + encodeURIComponent(s)).join("");
    const path = modelPath(ctx.name, ctx.version) + "/summary?batch_size=" + b + shapes;
    try {
      if (textToggle.checked) {
        const text = await get(path + "&format=text", { as: "text" });
        if (!ctx.isCurrent()) return;
        clear(body).append(h("pre.summary-text", { tabindex: 0, "aria-label": "Summary as text" }, text));
        return;
      }
      data = await get(path);
      if (!ctx.isCurrent()) return;
      draw();
    } catch (e) {
      clear(body).append(errorBox(e, "Could not load the summary"));
    } finally {
      body.setAttribute("aria-busy", "false");
    }
  }

  function draw() {
    clear(body);
    const d = data;
    const totalRow = (rows) => h("tr.totals", null,
      h("th", { scope: "row", colspan: 4 }, `Total (${fmtInt(rows.length)} of ${fmtInt(d.layers.length)} layers)`),
      h("td.num#sum-total-params", null, fmtInt(rows.reduce((a, r) => a + (r.params || 0), 0))),
      h("td.num", null, fmtInt(rows.reduce((a, r) => a + (r.flops || 0), 0))), h("td"));
    const rows = rowsFiltered();
    const tp = d.total_params || 1;
    table = sortableTable({
      id: "summary-table",
      caption: `Layers of ${d.name} v${ctx.version || d.version} at batch size ${d.batch_size}`,
      columns: [
        { key: "idx", label: "#", numeric: true },
        { key: "name", label: "Layer", format: (r) => h("code", null, r.name), header: true },
        { key: "op", label: "Op" },
        { key: "output_shape", label: "Output shape", format: (r) => h("code", null, fmtShape(r.output_shape)), sortValue: (r) => r.shapeSize },
        { key: "params", label: "Params", numeric: true, format: (r) => fmtInt(r.params) },
        { key: "flops", label: "FLOPs", numeric: true, format: (r) => (r.flops == null ? "—" : fmtCompact(r.flops)) },
        { key: "share", label: "% params", numeric: true, sortValue: (r) => r.params, format: (r) => bar(r.params / tp) },
      ],
      rows,
      rowAttrs: (r) => ({ "data-op": r.op, "data-name": r.name }),
      initialSort: sortState,
      onSort: (st) => { sortState = st; },
      footer: totalRow(rows),
    });
    const totals = h("section.card.totals-card", { "aria-labelledby": "totals-h" },
      h("h2#totals-h", null, "Totals"),
      h("dl.tiles", null,
        [["Total params", fmtInt(d.total_params)], ["Trainable", fmtInt(d.trainable_params)],
          ["Non-trainable", fmtInt(d.non_trainable_params)], ["Shared", fmtInt(d.shared_params)],
          ["Unique", fmtInt(d.unique_params)], ["Layers", fmtInt(d.layers.length)],
          ["Estimated FLOPs", fmtCompact(d.flops) + (d.flops_complete ? "" : " (lower bound)")]]
          .map(([k, v]) => h("div.tile", null, h("dt", null, k), h("dd", null, v)))),
      h("dl.kv.signature", null,
        h("dt", null, "Inputs"), h("dd", null, d.inputs.map((i) => h("code.block", null, `${i.name} ${i.datatype} ${fmtShape(i.shape)}`))),
        h("dt", null, "Outputs"), h("dd", null, d.outputs.map((o) => h("code.block", null, `${o.name} ${o.datatype} ${fmtShape(o.shape)}`)))));
    // inputs of unknown shape: said, never guessed (give them in "Input shape")
    const warn = (d.warnings || []).map((w) => h("p.alert.alert-warn.sum-warning", { role: "status" }, w));
    body.append(...warn, totals, h("div.table-wrap", { tabindex: 0, role: "region", "aria-label": "Layer table" }, table.table));
  }

  batchIn.addEventListener("change", load);
  shapeIn.addEventListener("change", load);
  textToggle.addEventListener("change", load);
  filterIn.addEventListener("input", () => { if (data && !textToggle.checked) draw(); });
  controls.addEventListener("submit", (e) => { e.preventDefault(); load(); });
  await load();
}

function shapeSize(s) {
  if (!s) return -1;
  if (Array.isArray(s[0])) return s.reduce((a, x) => a + shapeSize(x), 0);
  return s.reduce((a, b) => a * b, 1);
}

function bar(frac) {
  const pct = Math.max(0, Math.min(1, frac || 0)) * 100;
  const fill = h("span.bar-fill");
  fill.style.width = pct.toFixed(1) + "%";
  return h("span.pct", null, h("span.bar", { "aria-hidden": "true" }, fill), pct.toFixed(1) + "%");
}
