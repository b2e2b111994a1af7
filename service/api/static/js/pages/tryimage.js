// Try it with an image: for a model whose config declares image preprocessing (an input with
// "preprocess"), drop or pick a JPEG/PNG/WebP/BMP. It goes to POST …/infer as a BYTES tensor
// (the binary tensor extension: 4-byte length, then the file's bytes) with
// classification=k on every output, so the server decodes it exactly as any client's image,
// and the top-k come back as "score:index:label" strings, shown here as a table.

import { h, clear, fmtMs, errorBox, acceptDrops } from "../dom.js";
import { request, get, modelPath } from "../api.js";

/** The model's image input (its config entry) or null. */
export async function imageInput(ctx) {
  try {
    const cfg = await get(modelPath(ctx.name, ctx.version) + "/config");
    return (cfg.input || []).find((t) => t.preprocess) || null;
  } catch {
    return null;                        // no config view: the page works without images
  }
}

function imageRequest(inputName, outputs, bytes, k) {
  const tail = new Uint8Array(4 + bytes.length);
  new DataView(tail.buffer).setUint32(0, bytes.length, true);
  tail.set(bytes, 4);
  const head = new TextEncoder().encode(JSON.stringify({
    inputs: [{ name: inputName, datatype: "BYTES", shape: [1], parameters: { binary_data_size: tail.length } }],
    outputs: outputs.map((o) => ({ name: o.name, parameters: { classification: k } })),
  }));
  const body = new Uint8Array(head.length + tail.length);
  body.set(head, 0);
  body.set(tail, head.length);
  return { body, headers: { "Content-Type": "application/octet-stream", "Inference-Header-Content-Length": String(head.length) } };
}

/** "0.97:8:brown" → {score, index, label}; labels may contain ':' themselves. */
function parseClass(s) {
  const [score, index, ...rest] = String(s).split(":");
  return { score: Number(score), index: Number(index), label: rest.join(":") };
}

function resultTable(o) {
  const rows = o.data.map(parseClass);
  return h("table.data.compact.topk.image-topk", { "aria-label": `Top classes of ${o.name}` },
    h("caption", null, h("code", null, o.name)),
    h("thead", null, h("tr", null, h("th", { scope: "col" }, "Rank"), h("th", { scope: "col" }, "Label"),
      h("th.num", { scope: "col" }, "Class"), h("th", { scope: "col" }, "Score"))),
    h("tbody", null, rows.map((r, i) => {
      const fill = h("span.bar-fill");
      fill.style.width = (Number.isFinite(r.score) ? Math.max(0, Math.min(1, r.score)) * 100 : 0).toFixed(1) + "%";
      return h("tr", null, h("td", null, i + 1), h("th", { scope: "row" }, r.label || "—"),
        h("td.num", null, String(r.index)),
        h("td", null, h("span.pct", null, h("span.bar", { "aria-hidden": "true" }, fill), r.score.toFixed(4))));
    })));
}

/** The image card: a drop zone with a picker, a preview, top-k and the result tables. */
export function imageCard(ctx, input, outputs) {
  const picker = h("input#try-image-file", { type: "file", accept: "image/jpeg,image/png,image/webp,image/bmp" });
  const kIn = h("input#try-image-k", { type: "number", min: 1, max: 100, value: 5, step: 1, inputmode: "numeric" });
  const preview = h("img#try-image-preview.image-preview", { alt: "", hidden: true });
  const status = h("div.latency#try-image-status", { role: "status", "aria-live": "polite" });
  const out = h("div#try-image-output");
  const zone = h("div.dropzone#try-image-drop", { "aria-describedby": "try-image-help" },
    h("p.drop-title#try-image-help", null, "Drop an image here (JPEG, PNG, WebP, BMP) or ",
      h("label", { for: "try-image-file" }, "choose one"), ": the server decodes and preprocesses it for ",
      h("code", null, input.name), " as the model's config declares."),
    h("div.toolbar", null, picker, h("label", { for: "try-image-k" }, "Top-k"), kIn), preview);

  async function run(file) {
    clear(out);
    status.textContent = `Classifying ${file.name}…`;
    if (preview.src) URL.revokeObjectURL(preview.src);
    preview.src = URL.createObjectURL(file);
    preview.alt = file.name;
    preview.hidden = false;
    try {
      const bytes = new Uint8Array(await file.arrayBuffer());
      const k = Math.max(1, Math.trunc(Number(kIn.value) || 5));
      const { body, headers } = imageRequest(input.name, outputs, bytes, k);
      const t0 = performance.now();
      const resp = await request("POST", modelPath(ctx.name, ctx.version) + "/infer", { body, headers, as: "response" });
      const doc = await resp.json();
      if (!ctx.isCurrent()) return;
      status.replaceChildren(h("span.latency-main", null, "Latency ", h("strong", null, fmtMs(performance.now() - t0))),
        h("span.muted", null, ` ${file.name}, model ${doc.model_name} v${doc.model_version}`));
      for (const o of doc.outputs) out.append(resultTable(o));
    } catch (err) {
      status.textContent = "";
      out.append(errorBox(err, "Image inference failed"));
    }
  }

  picker.addEventListener("change", () => { if (picker.files[0]) run(picker.files[0]); });
  acceptDrops(zone, (files) => { if (files[0]) run(files[0]); });
  return h("section.card", { "aria-labelledby": "try-image-h" }, h("h2#try-image-h", null, "Image"), zone, status, out);
}
