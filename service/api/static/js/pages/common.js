// Pieces shared by the per-model pages: heading with sub-navigation, sortable tables, and the
// input builder used by "Try it" and "Inspect".

import { h, clear, errorBox } from "../dom.js";
import { get, modelPath } from "../api.js";
import { routeHref } from "../main.js";
import { DTYPES, numel, makeInput, parseNpy, parseJsonTensor, castTo, fromNumbers, isFloat } from "../tensor.js";

const SUBPAGES = [["graph", "Graph"], ["summary", "Summary"], ["try", "Try it"], ["inspect", "Inspect"]];

export function modelHeading(page, title, ctx, extra) {
  return h("div.page-head", null,
    h("h1", null, `${title}: `, h("span.model-name", null, ctx.name), h("span.model-version", null, ` v${ctx.version || "latest"}`)),
    h("nav.subnav", { "aria-label": `Pages for ${ctx.name}` },
      SUBPAGES.map(([p, t]) => h("a", { href: routeHref(p, ctx.name, ctx.version), "aria-current": p === page ? "page" : null }, t))),
    extra || null);
}

export function noModel(main, title) {
  main.append(h("div.page-head", null, h("h1", null, title)),
    h("div.empty", null, h("p", null, "No model is ready yet. Choose one in the model picker above, or upload one."),
      h("a.btn.btn-primary", { href: "#/upload" }, "Upload a model"), " ", h("a.btn", { href: "#/models" }, "See all models")));
}

/** Heading of a per-model page plus the model's metadata; null (with the page already telling
 * why) when no model is chosen, the metadata cannot be read, or the user navigated away. */
export async function openModelPage(main, ctx, page, title) {
  if (!ctx.name) { noModel(main, title); return null; }
  main.append(modelHeading(page, title, ctx));
  let meta;
  try {
    meta = await get(modelPath(ctx.name, ctx.version));
  } catch (e) {
    main.append(errorBox(e, "Could not read the model's metadata"));
    return null;
  }
  return ctx.isCurrent() ? meta : null;
}

/**
 * A table sortable by clicking column headers (buttons, aria-sort).
 * columns: [{key, label, numeric?, format?(row) → Node|string, sortValue?(row), className?}]
 */
export function sortableTable({ columns, rows, caption, rowAttrs, footer, initialSort, id, onSort }) {
  let sortKey = initialSort ? initialSort.key : null;
  let dir = initialSort ? initialSort.dir : 1;
  const table = h("table.data.sortable", { id });
  if (caption) table.append(h("caption", null, caption));
  const headRow = h("tr");
  const ths = new Map();
  for (const c of columns) {
    const btn = h("button.sort-btn", { type: "button", "data-key": c.key }, c.label, h("span.sort-ind", { "aria-hidden": "true" }));
    const th = h("th", { scope: "col", class: c.numeric ? "num" : null }, c.sortable === false ? c.label : btn);
    if (c.sortable !== false) btn.addEventListener("click", () => {
      if (sortKey === c.key) dir = -dir; else { sortKey = c.key; dir = c.numeric ? -1 : 1; }
      draw();
      if (onSort) onSort({ key: sortKey, dir });
    });
    ths.set(c.key, th);
    headRow.append(th);
  }
  table.append(h("thead", null, headRow));
  const tbody = h("tbody");
  table.append(tbody);
  if (footer) table.append(h("tfoot", null, footer));
  const val = (c, r) => (c.sortValue ? c.sortValue(r) : r[c.key]);
  function draw() {
    for (const [k, th] of ths) {
      if (k === sortKey) th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
      else th.removeAttribute("aria-sort");
    }
    let data = rows;
    if (sortKey) {
      const c = columns.find((x) => x.key === sortKey);
      data = rows.map((r, i) => [r, i]).sort(([a, ia], [b, ib]) => {
        const va = val(c, a), vb = val(c, b);
        const na = va === null || va === undefined || (typeof va === "number" && Number.isNaN(va));
        const nb = vb === null || vb === undefined || (typeof vb === "number" && Number.isNaN(vb));
        if (na || nb) return na === nb ? ia - ib : na ? 1 : -1;   // blanks last either way
        const cmp = typeof va === "number" && typeof vb === "number" ? va - vb : String(va).localeCompare(String(vb), undefined, { numeric: true });
        return cmp * dir || ia - ib;
      }).map(([r]) => r);
    }
    const frag = document.createDocumentFragment();
    for (const r of data) {
      const tr = h("tr", rowAttrs ? rowAttrs(r) : null);
      for (const c of columns) {
        const content = c.format ? c.format(r) : r[c.key];
        const cell = h(c.header ? "th" : "td", { class: [c.numeric ? "num" : null, c.className].filter(Boolean).join(" ") || null, scope: c.header ? "row" : null }, content);
        tr.append(cell);
      }
      frag.append(tr);
    }
    clear(tbody).append(frag);
  }
  draw();
  return { table, setRows(r) { rows = r; draw(); }, sortBy(key, d) { sortKey = key; dir = d; draw(); } };
}

/** Default value for a free dim: batch 1; spatial-looking dims 224; else 16. */
function defaultDim(shape, i) {
  if (i === 0) return 1;
  if (shape.length === 4 && i >= 2) return 224;
  if (shape.length === 5 && i >= 2) return 16;
  if (shape.length === 3 && i === 2) return 64;
  return 16;
}

/**
 * Form controls for a model's inputs: shape (free dims editable), and the source — random
 * uniform/normal, zeros, or a .npy/.json file. `collect()` resolves to the tensors to send.
 */
export function inputBuilder(inputs, { idPrefix = "in", nanOption = false } = {}) {
  const parts = inputs.map((spec, k) => {
    const pid = `${idPrefix}-${k}`;
    const known = spec.shape && !(spec.shape.length === 1 && spec.shape[0] === -1);
    const shape = known ? spec.shape : [1, 16];
    const dimInputs = shape.map((d, i) => h("input.dim", {
      type: "number", min: 1, step: 1, inputmode: "numeric", id: `${pid}-dim-${i}`,
      value: d === -1 ? defaultDim(shape, i) : d, readOnly: known && d !== -1,
      "aria-label": `${spec.name} dimension ${i}${known && d !== -1 ? " (fixed)" : ""}`,
    }));
    const radios = [["uniform", "Random uniform [0, 1)"], ["normal", "Random normal"], ["zeros", "Zeros"], ["file", "File (.npy or .json)"]];
    const group = `${pid}-src`;
    const fileIn = h("input", { type: "file", id: `${pid}-file`, accept: ".npy,.json,application/json", "aria-describedby": `${pid}-file-info` });
    const fileInfo = h("span.file-info", { id: `${pid}-file-info` }, ".npy (float/int, any byte order) or JSON");
    const seedIn = h("input.seed", { type: "number", id: `${pid}-seed`, value: k + 1, min: 0, step: 1 });
    const radioEls = radios.map(([v, t], i) => h("label.radio", null,
      h("input", { type: "radio", name: group, value: v, checked: i === 0 }), " ", t));
    let parsed = null;
    fileIn.addEventListener("change", async () => {
      parsed = null;
      const f = fileIn.files[0];
      if (!f) { fileInfo.textContent = ""; return; }
      radioEls[3].querySelector("input").checked = true;
      try {
        if (f.name.toLowerCase().endsWith(".npy")) {
          parsed = parseNpy(await f.arrayBuffer());
        } else {
          const j = parseJsonTensor(await f.text(), spec.name);
          parsed = fromNumbers(j.values, spec.datatype in DTYPES ? spec.datatype : "FP32", j.shape);
        }
        fileInfo.textContent = `${f.name}: ${parsed.datatype} ${JSON.stringify(parsed.shape)}`;
        fileInfo.classList.remove("warn-text");
        if (parsed.shape.length === dimInputs.length) {
          parsed.shape.forEach((d, i) => { if (!dimInputs[i].readOnly) dimInputs[i].value = d; });
        }
      } catch (e) {
        fileInfo.textContent = `${f.name}: ${e.message}`;
        fileInfo.classList.add("warn-text");
      }
    });
    const fs = h("fieldset.input-spec", null,
      h("legend", null, h("code", null, spec.name), " ", h("span.dt", null, spec.datatype), " ",
        h("code.shape", null, known ? "[" + spec.shape.join(", ") + "]" : "any shape")),
      h("div.dims", { role: "group", "aria-label": `Shape of ${spec.name}` }, h("span.dims-label", { "aria-hidden": "true" }, "Shape"),
        dimInputs.flatMap((d, i) => (i ? [h("span.times", { "aria-hidden": "true" }, "×"), d] : [d]))),
      h("div.sources", { role: "radiogroup", "aria-label": `Values for ${spec.name}` }, radioEls),
      h("div.file-pick", null, h("label", { for: `${pid}-file` }, "Input file"), fileIn, fileInfo),
      h("div.seed-row", null, h("label", { for: `${pid}-seed` }, "Random seed"), seedIn));
    const source = () => fs.querySelector(`input[name="${group}"]:checked`).value;
    async function collect(injectNaN) {
      const src = source();
      let t;
      if (src === "file") {
        if (!parsed) throw new Error(`choose a .npy or .json file for input '${spec.name}'`);
        t = castTo(parsed, spec.datatype);
      } else {
        const shp = dimInputs.map((d) => Math.trunc(Number(d.value)));
        if (shp.some((d) => !(d >= 1))) throw new Error(`every dimension of '${spec.name}' must be a positive integer`);
        if (numel(shp) > 64 * 1024 * 1024) throw new Error(`'${spec.name}' would have ${numel(shp)} elements — too many for the console`);
        t = makeInput(spec.datatype, shp, src, Number(seedIn.value) || 0);
      }
      if (injectNaN && isFloat(t.datatype) && t.datatype !== "FP16" && t.data.length) {
        t.data[0] = NaN;
        if (t.data.length > 1) t.data[1] = Infinity;
      }
      return { name: spec.name, ...t };
    }
    return { el: fs, collect };
  });
  let nanBox = null;
  if (nanOption) {
    nanBox = h("input#" + idPrefix + "-nan", { type: "checkbox" });
  }
  const el = h("div.input-builder", null, parts.map((p) => p.el),
    nanOption ? h("label.check", null, nanBox, " Inject NaN and +Inf into the first two values (to see how they spread)") : null);
  return {
    el,
    async collect() { return Promise.all(parts.map((p) => p.collect(nanBox && nanBox.checked))); },
  };
}
