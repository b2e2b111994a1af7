// Models: every model and version with state, signature, parameters, memory held, load time
// and live request/latency figures from the statistics endpoint, under the memory budget;
// refreshes itself.

import { h, clear, fmtBytes, fmtCompact, fmtInt, fmtMs, fmtShape, fmtAgo, errorBox } from "../dom.js";
import { get } from "../api.js";
import { routeHref } from "../main.js";

// 11 columns: the table fits a 1366-px-wide window (requests and rate share a cell, as do the
// average latency and compute time)
const COLUMNS = ["Version", "State", "Inputs", "Outputs", "Params", "Memory", "Load time", "Requests",
  "Avg latency · compute", "Last request", "Open"];
const STATE_LABEL = { READY: "ready", LOADING: "loading", FAILED: "failed", UNAVAILABLE: "unavailable",
  UNLOADING: "unloading", UNKNOWN: "unknown" };

function sig(list) {
  if (!list || !list.length) return h("span.muted", null, "—");
  return h("ul.sig", null, list.map((t) =>
    h("li", null, h("code", null, t.name), " ", h("span.dt", null, t.datatype), " ", h("code.shape", null, fmtShape(t.shape)))));
}

function stateBadge(v) {
  const st = v.state || "UNKNOWN";
  return h(`span.badge.state-${st.toLowerCase()}`, { "data-state": st },
    st === "LOADING" ? h("span.spinner", { "aria-hidden": "true" }) : null, STATE_LABEL[st] || st.toLowerCase());
}

/** The server's error for a version; long ones fold into a disclosure. */
function reasonBox(reason) {
  if (reason.length <= 140) return h("div.reason", null, reason);
  return h("details.reason", null, h("summary", null, reason.slice(0, 120) + "…"), h("div", null, reason));
}

/** Which engine serves the version (onnxruntime, openvino or NumPy), in which precision and,
 * after a fallback, why. */
function engineNote(v) {
  const e = v.engine;
  if (!e || v.state !== "READY") return null;
  const compiled = e.engine === "onnxruntime" || e.engine === "openvino";
  const text = compiled
    // OpenVINO's provider names its precision ("OpenVINOCPU:bf16"); ONNX Runtime's is f32
    ? `${e.engine} · ${e[e.engine + "_nodes"]}/${e.graph_nodes} nodes · ${String(e.execution_providers || "").replace(/ExecutionProvider/g, "")}`
    : `NumPy · ${e.engine_graph} graph`;
  // a compiled engine's reason is about the engine or precision it stands in for
  const r = e.engine_fallback_reason || "";
  const why = compiled || r.startsWith("openvino") ? r : "onnxruntime not used: " + r;
  return h("div.engine.muted.small", { "data-engine": e.engine },
    h("span", { title: "engine: what runs this version's requests" }, text),
    e.engine_fallback_reason ? reasonBox(why) : null);
}

/** INT8 serving: how the quantized graph agreed with float32 on the calibration inputs. */
function int8Note(v) {
  const q = v.quantization;
  if (!q || !q.quantized || v.state !== "READY") return null;
  const parts = ["INT8"];
  if (q.quantize_top1_agreement != null) parts.push(`top-1 agreement ${(q.quantize_top1_agreement * 100).toFixed(1)} %`);
  if (q.quantize_max_abs_diff != null) parts.push(`max|Δ| ${Number(q.quantize_max_abs_diff).toPrecision(3)}`);
  return h("div.int8.muted.small", { "data-int8": "", title: "INT8 vs float32 on the calibration inputs" },
    parts.join(" · "));
}

function statsCells(st, prev, dt) {
  if (!st) return { requests: "—", latency: "—", last: "—" };
  const is = st.inference_stats;
  const ok = is.success.count, fail = is.fail.count;
  const lat = ok ? is.success.ns / ok / 1e6 : null;
  const comp = is.compute_infer.count ? is.compute_infer.ns / is.compute_infer.count / 1e6 : null;
  let rate = "—";
  if (prev && dt > 0) {
    const d = (ok + fail) - (prev.inference_stats.success.count + prev.inference_stats.fail.count);
    rate = (d / dt).toFixed(d / dt < 10 ? 1 : 0) + "/s";
  }
  return {
    requests: `${fmtInt(ok)} ok` + (fail ? ` · ${fmtInt(fail)} failed` : "") + (rate !== "—" ? ` · ${rate}` : ""),
    latency: `${fmtMs(lat)} · ${fmtMs(comp)}`, last: fmtAgo(st.last_inference),
    failed: fail > 0,
  };
}

export async function render(main, ctx) {
  const status = h("span.muted#models-updated", { role: "status" }, "Loading…");
  const auto = h("input#auto-refresh", { type: "checkbox", checked: true });
  const interval = h("select#refresh-interval", null,
    [1, 2, 5, 10].map((s) => h("option", { value: s * 1000, selected: s === 2 }, `${s} s`)));
  const refreshBtn = h("button.btn", { type: "button" }, "Refresh now");
  const body = h("div#models-body");
  const memLine = h("p.muted#memory-budget", { role: "status" });
  const grpcLine = h("p.muted#grpc-port");
  main.append(
    h("div.page-head", null,
      h("h1", null, "Models"),
      h("div.toolbar", { role: "group", "aria-label": "Refresh" },
        h("label.check", null, auto, " Auto-refresh"),
        h("label", { for: "refresh-interval" }, "every"), interval, refreshBtn, status)),
    h("p.lead", null, "Every model in the store and each of its versions, with live figures from ",
      h("code", null, "/v2/models/stats"), "."),
    memLine, grpcLine, body);
  // where the same API is served over gRPC (server metadata says; absent when it is off)
  get("v2").then((meta) => {
    if (meta && meta.grpc) {
      grpcLine.append("gRPC (inference.GRPCInferenceService): port ",
        h("code", null, String(meta.grpc.port)), meta.grpc.tls ? ", TLS" : "", ".");
    }
  }).catch(() => {});

  let timer = null, prevStats = null, prevT = 0, structKey = "", busy = false;
  const rows = new Map();      // "name/version" → cell refs

  function buildStructure(ov) {
    clear(body);
    rows.clear();
    if (!ov.models.length) {
      body.append(h("div.empty", null, h("p", null, "The model store is empty."),
        h("a.btn.btn-primary", { href: "#/upload" }, "Upload a model")));
      return;
    }
    // one table, one row group per model, so the columns line up across models
    const table = h("table.data.versions#models-table", null,
      h("caption.sr-only", null, "Models and their versions"),
      h("thead", null, h("tr", null, COLUMNS.map((c) => h("th", { scope: "col" }, c)))));
    for (const m of ov.models) {
      const desc = (m.versions.find((v) => v.description) || {}).description;
      const tb = h("tbody.model-group", { "data-model": m.name });
      tb.append(h("tr.model-row", null, h("th", { scope: "rowgroup", colspan: COLUMNS.length },
        h("h2", { id: `m-${m.name}` }, m.name), desc ? h("span.muted.model-desc", null, desc) : null)));
      for (const v of m.versions) {
        const key = `${m.name}/${v.version}`;
        const cells = {
          state: h("td"), requests: h("td.num"), latency: h("td.num"), last: h("td"),
        };
        cells.state.append(h("div.state-cell", null, stateBadge(v),
          v.reason && v.state !== "READY" ? reasonBox(v.reason) : null, engineNote(v), int8Note(v)));
        const ready = v.state === "READY";
        const links = ready ? h("nav.row-links", { "aria-label": `${m.name} version ${v.version}` },
          [["graph", "Graph"], ["summary", "Summary"], ["try", "Try it"], ["inspect", "Inspect"]].map(([p, t]) =>
            h("a", { href: routeHref(p, m.name, v.version) }, t))) : h("span.muted", null, "—");
        const tr = h("tr", { "data-model": m.name, "data-version": v.version, "data-state": v.state },
          h("th", { scope: "row" }, "v" + v.version),
          cells.state, h("td", null, sig(v.inputs)), h("td", null, sig(v.outputs)),
          h("td.num", { title: v.total_params != null ? fmtInt(v.total_params) + " parameters" : "" }, fmtCompact(v.total_params)),
          h("td.num", { title: "measured at load" }, fmtBytes(v.memory_bytes)),
          h("td.num", null, v.load_seconds != null ? fmtMs(v.load_seconds * 1000) : "—"),
          cells.requests, cells.latency, cells.last, h("td", null, links));
        // labels for the narrow-screen layout, where each row becomes a card
        [...tr.children].forEach((c, i) => { c.dataset.label = COLUMNS[i]; });
        tb.append(tr);
        rows.set(key, cells);
      }
      table.append(tb);
    }
    body.append(h("div.card.table-card", null,
      h("div.table-wrap", { tabindex: 0, role: "region", "aria-label": "Models table" }, table)));
  }

  async function refresh() {
    if (busy) return;
    busy = true;
    try {
      const [ov, stats] = await Promise.all([ctx.refreshOverview(), get("v2/models/stats").catch(() => ({ model_stats: [] }))]);
      if (!ctx.isCurrent()) return;
      const key = JSON.stringify(ov.models.map((m) => [m.name, m.versions.map((v) => [v.version, v.state, v.reason, v.load_seconds])]));
      if (key !== structKey) { buildStructure(ov); structKey = key; }
      const mem = ov.memory;
      if (mem) {
        memLine.textContent = `Memory: loaded versions hold ${fmtBytes(mem.held_bytes)} of a ` +
          (mem.budget_bytes ? `${fmtBytes(mem.budget_bytes)} budget` : "budget that is off") +
          ` · server resident ${fmtBytes(mem.resident_bytes)}`;
      }
      const now = performance.now();
      const byKey = new Map(stats.model_stats.map((s) => [`${s.name}/${s.version}`, s]));
      for (const [k, cells] of rows) {
        const st = byKey.get(k);
        const c = statsCells(st, prevStats && prevStats.get(k), (now - prevT) / 1000);
        for (const f of ["requests", "latency", "last"]) {
          if (cells[f].textContent !== c[f]) cells[f].textContent = c[f];
        }
        cells.requests.classList.toggle("has-fail", !!c.failed);
      }
      prevStats = byKey; prevT = now;
      status.textContent = "Updated " + new Date().toLocaleTimeString();
    } catch (e) {
      if (!ctx.isCurrent()) return;
      clear(body).append(errorBox(e, "Could not list models"));
      structKey = "";
      status.textContent = "Update failed";
    } finally {
      busy = false;
    }
  }

  function schedule() {
    clearInterval(timer);
    timer = auto.checked ? setInterval(refresh, Number(interval.value)) : null;
  }
  auto.addEventListener("change", schedule);
  interval.addEventListener("change", schedule);
  refreshBtn.addEventListener("click", refresh);
  const onToken = () => refresh();
  document.addEventListener("token-changed", onToken);
  await refresh();
  schedule();
  return () => { clearInterval(timer); document.removeEventListener("token-changed", onToken); };
}
