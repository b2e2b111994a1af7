// Try it: an image for a model that declares image preprocessing (tryimage.js), or an input
// built here (random of the declared shape, zeros, or a .npy/.json file): run
// POST …/infer with binary tensors, and show the outputs, the latency and, for (N, C)
// outputs, the top-k classes.

import { h, clear, fmtNum, fmtMs, fmtShape, fmtInt, errorBox, histogramSvg } from "../dom.js";
import { request, modelPath } from "../api.js";
import { encodeRequest, decodeResponse, toNumbers, topK, summarize, histogram, toNpy } from "../tensor.js";
import { openModelPage, inputBuilder } from "./common.js";
import { imageInput, imageCard } from "./tryimage.js";

export async function render(main, ctx) {
  const meta = await openModelPage(main, ctx, "try", "Try it");
  if (!meta) return;
  const img = await imageInput(ctx);
  if (!ctx.isCurrent()) return;
  if (img) main.append(imageCard(ctx, img, meta.outputs));
  const builder = inputBuilder(meta.inputs, { idPrefix: "try" });
  const kIn = h("input#try-k", { type: "number", min: 1, max: 100, value: 5, step: 1, inputmode: "numeric" });
  const runBtn = h("button.btn.btn-primary#try-run", { type: "submit" }, "Run inference");
  const latency = h("div.latency#try-latency", { role: "status", "aria-live": "polite" });
  const out = h("div#try-output", null, h("p.muted", null, "Run inference to see the outputs here."));
  const form = h("form.card", { "aria-labelledby": "try-in-h" },
    h("h2#try-in-h", null, "Input"), builder.el,
    h("div.toolbar", null, h("label", { for: "try-k" }, "Top-k"), kIn, runBtn));
  main.append(form, h("section.card", { "aria-labelledby": "try-out-h" }, h("h2#try-out-h", null, "Output"), latency, out));
  const history = [];

  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    runBtn.disabled = true;
    clear(out);
    latency.textContent = "Running…";
    try {
      const tensors = await builder.collect();
      const { body, headers } = encodeRequest(tensors, {}, true);
      const t0 = performance.now();
      const resp = await request("POST", modelPath(ctx.name, ctx.version) + "/infer", { body, headers, as: "response" });
      const doc = await decodeResponse(resp);
      const ms = performance.now() - t0;
      if (!ctx.isCurrent()) return;
      history.push(ms);
      const sorted = history.slice().sort((a, b) => a - b);
      latency.replaceChildren(
        h("span.latency-main", null, "Latency ", h("strong#try-latency-ms", null, fmtMs(ms))),
        h("span.muted", null, ` round trip, model ${doc.model_name} v${doc.model_version}` +
          (history.length > 1 ? ` · ${history.length} runs: min ${fmtMs(sorted[0])}, median ${fmtMs(sorted[Math.floor(sorted.length / 2)])}` : "")));
      showOutputs(out, doc, Math.max(1, Math.trunc(Number(kIn.value) || 5)));
    } catch (err) {
      latency.textContent = "";
      out.append(errorBox(err, "Inference failed"));
    } finally {
      runBtn.disabled = false;
    }
  });
}

function showOutputs(out, doc, k) {
  for (const o of doc.outputs) {
    const vals = toNumbers(o);
    const st = summarize(vals);
    const hist = histogram(vals, 32);
    const sec = h("section.output-block", { "aria-label": `Output ${o.name}` },
      h("h3", null, h("code", null, o.name), " ", h("span.dt", null, o.datatype), " ", h("code.shape", null, fmtShape(o.shape))),
      h("p.stats-line", null, `min ${fmtNum(st.min)} · max ${fmtNum(st.max)} · mean ${fmtNum(st.mean)} · std ${fmtNum(st.std)}` +
        (st.nan || st.inf ? ` · ${st.nan} NaN · ${st.inf} Inf` : ""), " ",
      hist.n ? histogramSvg(hist.bins, { width: 160, height: 28, label: `Histogram of ${o.name}` }) : null));
    const tk = topK(vals, o.shape, k);
    if (tk) {
      sec.append(h("h4", null, `Top-${Math.min(k, o.shape[o.shape.length - 1])}` + (tk[0].probsAreScores ? " (scores are probabilities)" : " (softmax of the scores)")));
      const grid = h("div.topk-grid");
      for (const row of tk) {
        grid.append(h("table.data.compact.topk", null,
          h("caption", null, o.shape.length === 2 ? `Row ${row.row}` : "Classes"),
          h("thead", null, h("tr", null, h("th", { scope: "col" }, "Rank"), h("th", { scope: "col" }, "Class"),
            h("th.num", { scope: "col" }, "Score"), h("th", { scope: "col" }, "Probability"))),
          h("tbody", null, row.items.map((it, i) => {
            const fill = h("span.bar-fill");
            fill.style.width = (Number.isFinite(it.prob) ? it.prob * 100 : 0).toFixed(1) + "%";
            return h("tr", null, h("td", null, i + 1), h("th", { scope: "row" }, String(it.index)),
              h("td.num", null, fmtNum(it.score)),
              h("td", null, h("span.pct", null, h("span.bar", { "aria-hidden": "true" }, fill),
                Number.isFinite(it.prob) ? (it.prob * 100).toFixed(1) + "%" : "—")));
          }))));
      }
      if (o.shape.length === 2 && o.shape[0] > tk.length) grid.append(h("p.muted", null, `First ${tk.length} of ${fmtInt(o.shape[0])} rows shown.`));
      sec.append(grid);
    }
    const preview = Array.from(vals.slice(0, 200), (v) => fmtNum(v, 6)).join(", ") + (vals.length > 200 ? `, … (${fmtInt(vals.length)} values)` : "");
    const dl = h("button.btn.small", { type: "button" }, "Download .npy");
    dl.addEventListener("click", () => {
      const a = h("a", { download: `${o.name}.npy`, href: URL.createObjectURL(new Blob([toNpy(o)], { type: "application/octet-stream" })) });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10000);
    });
    sec.append(h("details.values", null, h("summary", null, "Values"), h("pre.values-pre", { tabindex: 0 }, preview)), dl);
    out.append(sec);
  }
}
