// Graph: the model's symbol graph as a layered SVG diagram with search, zoom, pan and a
// node-details panel. NaN/Inf marks from the last inspection of this version are shown too.

import { h, fmtInt, fmtCompact, errorBox } from "../dom.js";
import { get, modelPath } from "../api.js";
import { GraphView } from "../graph/view.js";
import { graphToolbar, legend, showDetails } from "../graph/panel.js";
import { modelHeading, noModel } from "./common.js";
import { inspections, key } from "../store.js";
import { marksFromInspection } from "./inspect.js";

export async function render(main, ctx) {
  if (!ctx.name) { noModel(main, "Graph"); return; }
  const info = h("p.lead.graph-info", { role: "status" }, "Loading the graph…");
  main.append(modelHeading("graph", "Graph", ctx), info);
  let doc;
  try {
    doc = await get(modelPath(ctx.name, ctx.version) + "/graph");
  } catch (e) {
    info.remove();
    main.append(errorBox(e, "Could not load the graph"));
    return;
  }
  if (!ctx.isCurrent()) return;
  const panel = h("aside.panel.node-panel#node-panel", { "aria-labelledby": "node-panel-title", tabindex: -1 });
  const host = h("div.graph-host");
  const layoutBox = h("div.graph-layout", null, h("div.graph-main", null, host), panel);
  main.append(layoutBox);
  let inspectMap = null;
  const view = new GraphView(host, doc, {
    label: `Graph of ${ctx.name} version ${ctx.version || doc.version}`,
    onSelect: (v) => { showDetails(panel, v, view, { inspect: inspectMap }); const t = panel.querySelector("h2"); if (t) t.id = "node-panel-title"; },
  });
  const tb = graphToolbar(view, { idPrefix: "graph" });
  host.before(tb.el);
  showDetails(panel, null, view);
  panel.querySelector("h2").id = "node-panel-title";
  const st = view.layout.stats;
  info.textContent = `${fmtInt(doc.op_count)} ops · ${fmtCompact(doc.total_params)} parameters · ` +
    `${st.layers} layers · ${fmtInt(view.layout.crossings)} edge crossings · laid out in ${st.ms.toFixed(0)} ms`;
  info.dataset.layoutMs = st.ms.toFixed(1);
  const last = inspections.get(key(ctx.name, ctx.version || doc.version));
  if (last) {
    const { marks, byVertex, bad } = marksFromInspection(view, last);
    view.setMarks(marks);
    inspectMap = byVertex;
    main.insertBefore(h("p.note", null, bad
      ? `${bad} node(s) produced NaN or Inf in the last inspection — marked in red.`
      : "Nodes are annotated with statistics from the last inspection (no NaN or Inf)."), layoutBox);
  }
  main.append(legend());
  view.home();
  return () => view.destroy();
}
