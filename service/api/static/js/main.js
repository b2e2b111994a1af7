// Console shell: hash routes, the navigation, the model picker and the token dialog.
//   #/models  #/upload  #/graph/<name>/<version>  #/summary/…  #/try/…  #/inspect/…

import { h, clear, announce } from "./dom.js";
import { get, token, askToken } from "./api.js";

const PAGES = {
  models: { title: "Models", load: () => import("./pages/models.js"), needsModel: false },
  upload: { title: "Upload", load: () => import("./pages/upload.js"), needsModel: false },
  graph: { title: "Graph", load: () => import("./pages/graph.js"), needsModel: true },
  summary: { title: "Summary", load: () => import("./pages/summary.js"), needsModel: true },
  try: { title: "Try it", load: () => import("./pages/try.js"), needsModel: true },
  inspect: { title: "Inspect", load: () => import("./pages/inspect.js"), needsModel: true },
};
const MODEL_KEY = "hybridserve.model";

const state = {
  overview: null,          // last /ui/api/overview
  cleanup: null,           // current page's teardown
  model: null,             // {name, version}
  renderSeq: 0,
};

export function parseRoute() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  const page = PAGES[parts[0]] ? parts[0] : "models";
  return { page, name: parts[1] || null, version: parts[2] || null };
}

export function routeHref(page, name, version) {
  let r = "#/" + page;
  if (name) r += "/" + encodeURIComponent(name) + (version ? "/" + encodeURIComponent(version) : "");
  return r;
}

/** Ready versions from the overview, as [{name, version}]. */
export function readyVersions(ov = state.overview) {
  const out = [];
  for (const m of (ov && ov.models) || []) {
    for (const v of m.versions) if (v.state === "READY") out.push({ name: m.name, version: v.version });
  }
  return out;
}

export async function refreshOverview() {
  state.overview = await get("ui/api/overview");
  updatePicker();
  updateTokenButton();
  return state.overview;
}

export const getOverview = () => state.overview;

function updatePicker() {
  const sel = document.getElementById("model-select");
  const ready = readyVersions();
  const cur = state.model ? `${state.model.name}/${state.model.version}` : "";
  clear(sel);
  sel.append(h("option", { value: "" }, ready.length ? "Choose a model…" : "No ready models"));
  for (const r of ready) {
    const key = `${r.name}/${r.version}`;
    sel.append(h("option", { value: key, selected: key === cur }, `${r.name} (v${r.version})`));
  }
}

function updateTokenButton() {
  const btn = document.getElementById("token-button");
  const ov = state.overview;
  const needed = ov && ov.auth && (ov.auth.admin || ov.auth.inference);
  btn.hidden = !needed && !token.get();
  btn.textContent = token.get() ? "Access token ✓" : "Access token";
  btn.setAttribute("aria-label", token.get() ? "Access token (set) — change or clear" : "Set access token");
}

function setModel(name, version) {
  state.model = name ? { name, version } : null;
  if (name) sessionStorage.setItem(MODEL_KEY, `${name}/${version || ""}`);
  const sel = document.getElementById("model-select");
  if (sel) sel.value = name ? `${name}/${version}` : "";
}

function markNav(page) {
  for (const a of document.querySelectorAll("#nav a")) {
    const p = a.dataset.page;
    if (p === page) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
    if (PAGES[p].needsModel) {
      a.href = state.model ? routeHref(p, state.model.name, state.model.version) : routeHref(p);
    }
  }
}

async function render() {
  const seq = ++state.renderSeq;
  const route = parseRoute();
  const page = PAGES[route.page];
  if (state.cleanup) { try { state.cleanup(); } catch (e) { console.error(e); } state.cleanup = null; }
  const main = document.getElementById("main");
  if (page.needsModel) {
    if (route.name && !route.version) {
      // a model without a version: its newest ready version (as /v2/models/<name> serves)
      if (!state.overview) { try { await refreshOverview(); } catch { /* shown by the page */ } }
      const newest = readyVersions().filter((r) => r.name === route.name)
        .sort((a, b) => Number(b.version) - Number(a.version))[0];
      if (newest) { location.replace(routeHref(route.page, newest.name, newest.version)); return; }
      setModel(route.name, null);
    } else if (route.name) {
      setModel(route.name, route.version);
    } else {
      // no model in the URL: the last one used, else the first ready one
      if (!state.overview) { try { await refreshOverview(); } catch { /* shown by the page */ } }
      const ready = readyVersions();
      const saved = (sessionStorage.getItem(MODEL_KEY) || "").split("/");
      const pick = ready.find((r) => r.name === saved[0] && r.version === saved[1]) || ready[0];
      if (pick) { location.replace(routeHref(route.page, pick.name, pick.version)); return; }
    }
  }
  markNav(route.page);
  const toast = document.getElementById("toast");
  if (toast) toast.hidden = true;            // a message about the previous page is stale here
  document.title = `${page.title}${route.name ? " · " + route.name : ""} — hybridserve console`;
  clear(main);
  const mod = await page.load();
  if (seq !== state.renderSeq) return;
  const ctx = { name: route.name, version: route.version, route, state, refreshOverview, routeHref,
    isCurrent: () => seq === state.renderSeq };
  try {
    state.cleanup = (await mod.render(main, ctx)) || null;
  } catch (e) {
    console.error(e);
    main.append(h("div.alert.alert-error", { role: "alert" }, "This page failed to render: " + e.message));
  }
  if (seq !== state.renderSeq) return;
  // move focus to the new page's heading so keyboard and screen-reader users land there
  const h1 = main.querySelector("h1");
  if (h1 && state.rendered) { h1.tabIndex = -1; h1.focus({ preventScroll: false }); }
  state.rendered = true;
}

function initTokenDialog() {
  const dlg = document.getElementById("token-dialog");
  const btn = document.getElementById("token-button");
  btn.addEventListener("click", () => askToken("Enter the server's access token. It is kept in this browser tab only (sessionStorage).", { force: true }));
  dlg.querySelector("#token-clear").addEventListener("click", () => {
    token.set("");
    dlg.querySelector("#token-input").value = "";
    document.dispatchEvent(new CustomEvent("token-changed"));
    dlg.close("cleared");
    announce("Access token cleared");
  });
  document.addEventListener("token-changed", () => {
    updateTokenButton();
    if (token.get()) announce("Access token saved for this tab");
  });
}

async function boot() {
  const nav = document.getElementById("nav");
  for (const [key, p] of Object.entries(PAGES)) {
    nav.append(h("li", null, h("a", { href: routeHref(key), "data-page": key }, p.title)));
  }
  const saved = (sessionStorage.getItem(MODEL_KEY) || "").split("/");
  if (saved[0]) state.model = { name: saved[0], version: saved[1] || null };
  document.getElementById("model-select").addEventListener("change", (e) => {
    const [name, version] = e.target.value.split("/");
    if (!name) return;
    setModel(name, version);
    const route = parseRoute();
    const page = PAGES[route.page].needsModel ? route.page : "graph";
    location.hash = routeHref(page, name, version);
  });
  initTokenDialog();
  // the skip link must not change the hash (that is the router's)
  document.querySelector(".skip-link").addEventListener("click", (e) => {
    e.preventDefault();
    const main = document.getElementById("main");
    const target = main.querySelector("h1") || main;
    target.tabIndex = -1;
    target.focus();
  });
  window.addEventListener("hashchange", render);
  try {
    await refreshOverview();
  } catch (e) {
    if (e.status !== 401) console.warn("overview failed", e);
  }
  if (!location.hash) location.replace("#/models");
  await render();
}

boot();
