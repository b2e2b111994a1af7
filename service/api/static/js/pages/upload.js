// Upload: a symbol.json + params pair (and optional config) by drag-and-drop or file pickers,
// sent as multipart with upload progress; the server validates by loading and warming it.

import { h, clear, fmtInt, announce, acceptDrops } from "../dom.js";
import { upload, ApiError } from "../api.js";
import { routeHref } from "../main.js";

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

function fmtBytes(n) {
  if (n >= 1 << 30) return (n / (1 << 30)).toFixed(2) + " GiB";
  if (n >= 1 << 20) return (n / (1 << 20)).toFixed(1) + " MiB";
  if (n >= 1 << 10) return (n / (1 << 10)).toFixed(1) + " KiB";
  return n + " B";
}

/** Which field a dropped file belongs to, by its name. */
export function classify(file) {
  const n = file.name.toLowerCase();
  if (n.endsWith("-symbol.json") || n.endsWith(".symbol.json") || n === "symbol.json") return "symbol";
  if (n.endsWith(".params")) return "params";
  if (n === "config.json" || n.endsWith("config.json") || n.endsWith(".pbtxt")) return "config";
  if (n.endsWith(".json")) return "symbol";
  return null;
}

export async function render(main) {
  const files = { symbol: null, params: null, config: null };
  const nameIn = h("input#up-name", { type: "text", required: true, autocomplete: "off", spellcheck: "false",
    pattern: NAME_RE.source, "aria-describedby": "up-name-help" });
  const versionIn = h("input#up-version", { type: "number", min: 1, step: 1, inputmode: "numeric",
    "aria-describedby": "up-version-help" });
  const pickers = {};
  const fileRow = (key, label, accept, help, required) => {
    const input = h(`input#up-${key}.file-input`, { type: "file", accept, "aria-describedby": `up-${key}-info`, required });
    const info = h(`span.file-info#up-${key}-info`, null, help);
    input.addEventListener("change", () => { if (input.files[0]) setFile(key, input.files[0], false); });
    pickers[key] = { input, info, help };
    return h("div.file-row", null,
      h("label", { for: `up-${key}` }, label, required ? h("span.req", { "aria-hidden": "true" }, " *") : null),
      input, info);
  };
  const dropZone = h("div.dropzone#dropzone", { "aria-describedby": "drop-help" },
    h("p.drop-title#drop-help", null,
      "Drop ", h("code", null, "<prefix>-symbol.json"), " and ", h("code", null, "<prefix>-NNNN.params"),
      " (and optionally ", h("code", null, "config.json"), ") here, or choose them below."),
    fileRow("symbol", "Symbol file", ".json,application/json", "MXNet graph, *-symbol.json", true),
    fileRow("params", "Parameters file", ".params", "MXNet parameters, *-NNNN.params", false),
    fileRow("config", "Config (optional)", ".json,.pbtxt", "model config: input shapes, batching…", false));
  const preview = h("div.preview#symbol-preview", { "aria-live": "polite" });
  const progress = h("progress#up-progress", { max: 100, value: 0, "aria-labelledby": "up-progress-label" });
  const progressText = h("span#up-progress-text", null, "");
  const progressBox = h("div.progress-box", { hidden: true },
    h("label#up-progress-label", { for: "up-progress" }, "Upload progress"), progress, progressText);
  const result = h("div#upload-result");
  const submit = h("button.btn.btn-primary#up-submit", { type: "submit" }, "Upload and validate");
  const form = h("form.card.upload-form", { novalidate: true },
    h("div.field", null, h("label", { for: "up-name" }, "Model name", h("span.req", { "aria-hidden": "true" }, " *")), nameIn,
      h("small#up-name-help", null, "Letters, digits, '_', '.', '-'. Filled in from the symbol file name.")),
    h("div.field", null, h("label", { for: "up-version" }, "Version (optional)"), versionIn,
      h("small#up-version-help", null, "Default: the next free version number.")),
    dropZone, preview,
    h("div.actions", null, submit), progressBox, result);

  main.append(h("div.page-head", null, h("h1", null, "Upload a model")),
    h("p.lead", null, "The server loads and warms the uploaded model before it becomes visible; " +
      "a model that fails validation leaves the store exactly as it was."), form);

  function setFile(key, file, fromDrop) {
    files[key] = file;
    const p = pickers[key];
    p.info.textContent = `${file.name} — ${fmtBytes(file.size)}`;
    p.info.classList.add("has-file");
    if (fromDrop) {
      // mirror dropped files into the picker so the form state stays consistent
      try { const dt = new DataTransfer(); dt.items.add(file); p.input.files = dt.files; } catch { /* old browsers */ }
    }
    if (key === "symbol") {
      const m = /^(.*?)(-symbol)?\.json$/i.exec(file.name);
      if (m && !nameIn.value) nameIn.value = m[1].replace(/[^A-Za-z0-9_.-]/g, "_").replace(/^[^A-Za-z0-9]+/, "");
      inspectSymbol(file);
    }
  }

  async function inspectSymbol(file) {
    clear(preview);
    try {
      if (file.size > 64 * 1024 * 1024) { preview.append(h("p.muted", null, "Large symbol file: not previewed.")); return; }
      const doc = JSON.parse(await file.text());
      if (!doc || !Array.isArray(doc.nodes)) throw new Error("no 'nodes' array — is this an MXNet -symbol.json?");
      const ops = doc.nodes.filter((n) => n.op !== "null");
      const counts = {};
      for (const n of ops) counts[n.op] = (counts[n.op] || 0) + 1;
      const top = Object.entries(counts).sort((a, b) => b[1] - a[1]).slice(0, 6);
      preview.append(h("p.ok-text", null, `Symbol looks valid: ${fmtInt(ops.length)} ops, ${fmtInt(doc.nodes.length - ops.length)} variables` +
        (top.length ? " (" + top.map(([k, v]) => `${v}× ${k}`).join(", ") + ")" : "") + "."));
    } catch (e) {
      preview.append(h("p.warn-text", { role: "alert" }, "This symbol file does not parse: " + e.message));
    }
  }

  // drag and drop: the whole zone accepts files; classify each by name
  acceptDrops(dropZone, (dropped) => {
    const unknown = [];
    for (const f of dropped) {
      const k = classify(f);
      if (k) setFile(k, f, true); else unknown.push(f.name);
    }
    announce(`${dropped.length - unknown.length} file(s) added` + (unknown.length ? `; not recognised: ${unknown.join(", ")}` : ""));
  });

  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    clear(result);
    const name = nameIn.value.trim();
    const problems = [];
    if (!NAME_RE.test(name)) problems.push("Give the model a name (letters, digits, '_', '.', '-').");
    if (!files.symbol) problems.push("Choose the symbol file (*-symbol.json).");
    if (versionIn.value && !(Number(versionIn.value) >= 1)) problems.push("The version must be a positive number.");
    if (problems.length) {
      result.append(h("div.alert.alert-error", { role: "alert" }, h("strong", null, "Cannot upload yet:"),
        h("ul", null, problems.map((p) => h("li", null, p)))));
      (NAME_RE.test(name) ? pickers.symbol.input : nameIn).focus();
      return;
    }
    const fd = new FormData();
    fd.append("symbol", files.symbol, files.symbol.name);
    if (files.params) fd.append("params", files.params, files.params.name);
    if (files.config) fd.append("config", files.config, files.config.name);
    if (versionIn.value) fd.append("version", String(Math.trunc(Number(versionIn.value))));
    submit.disabled = true;
    progressBox.hidden = false;
    progress.value = 0;
    progressText.textContent = "0 %";
    const t0 = performance.now();
    try {
      const out = await upload(`v2/repository/models/${encodeURIComponent(name)}/upload`, fd, {
        onProgress: (loaded, total) => {
          const pct = total ? Math.round((loaded / total) * 100) : 0;
          progress.value = pct;
          progressText.textContent = `${pct} % (${fmtBytes(loaded)}${total ? " of " + fmtBytes(total) : ""})`;
        },
        onSent: () => {
          progress.value = 100;
          progressText.textContent = "100 % — uploaded; the server is loading and warming the model…";
          progress.classList.add("validating");
        },
      });
      const secs = ((performance.now() - t0) / 1000).toFixed(1);
      progressText.textContent = `Done in ${secs} s`;
      result.append(h("div.alert.alert-ok", { role: "status" },
        h("strong", null, "Validated: "), `model ${out.name} version ${out.version} is `,
        h("span.badge.state-ready", null, (out.state || "").toLowerCase()), ". ",
        h("nav.row-links.inline", { "aria-label": "Open the new version" },
          [["graph", "Graph"], ["summary", "Summary"], ["try", "Try it"], ["inspect", "Inspect"], ["models", "All models"]]
            .map(([p, t]) => h("a", { href: p === "models" ? "#/models" : routeHref(p, out.name, out.version) }, t)))));
      announce(`Model ${out.name} version ${out.version} uploaded and ready`);
    } catch (err) {
      progressText.textContent = "Failed";
      const status = err instanceof ApiError && err.status ? ` (HTTP ${err.status})` : "";
      result.append(h("div.alert.alert-error", { role: "alert" },
        h("strong", null, `The server rejected the model${status}: `), h("span.error-text", null, err.message)));
    } finally {
      submit.disabled = false;
      progress.classList.remove("validating");
    }
  });
}
