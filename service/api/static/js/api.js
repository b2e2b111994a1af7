// The server API as the console uses it: same-origin fetch with the bearer token, the
// protocol's {"error": "..."} bodies as exceptions, XHR uploads with progress.

const TOKEN_KEY = "hybridserve.token";

/** Base URL of the server: the console lives at <base>ui/, the API at <base>v2/… */
export const BASE = new URL("..", new URL(".", location.href)).href;

export function url(path) {
  return new URL(path.replace(/^\//, ""), BASE).href;
}

export class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

export const token = {
  get: () => sessionStorage.getItem(TOKEN_KEY) || "",
  set: (t) => (t ? sessionStorage.setItem(TOKEN_KEY, t) : sessionStorage.removeItem(TOKEN_KEY)),
};

export function authHeaders() {
  const t = token.get();
  return t ? { Authorization: "Bearer " + t } : {};
}

// -- asking for the token ------------------------------------------------------------------
let pendingAsk = null;
let declined = false;      // the user cancelled: don't prompt again on every refresh

/** Opens the token dialog once, however many requests are waiting; resolves true when the
 * user saved a token, false when they cancelled. After a cancel, only an explicit request
 * (`force`, e.g. the header's button) opens it again. */
export function askToken(reason, { force = false } = {}) {
  if (pendingAsk) return pendingAsk;
  if (declined && !force) return Promise.resolve(false);
  const dlg = document.getElementById("token-dialog");
  if (!dlg || typeof dlg.showModal !== "function") return Promise.resolve(false);
  const input = dlg.querySelector("#token-input");
  const why = dlg.querySelector("#token-reason");
  why.textContent = reason ? (reason.includes("token") && !reason.includes(".") ? `The server says: ${reason}.` : reason)
    : "The server needs an access token for this.";
  input.value = token.get();
  pendingAsk = new Promise((resolve) => {
    const done = () => {
      dlg.removeEventListener("close", done);
      pendingAsk = null;
      if (dlg.returnValue === "save") {
        declined = false;
        token.set(input.value.trim());
        document.dispatchEvent(new CustomEvent("token-changed"));
        resolve(true);
      } else {
        declined = dlg.returnValue !== "cleared";
        resolve(false);
      }
    };
    dlg.addEventListener("close", done);
  });
  dlg.returnValue = "";
  dlg.showModal();
  input.focus();
  return pendingAsk;
}

async function errorFrom(resp) {
  let body = null;
  let msg = `${resp.status} ${resp.statusText}`;
  try {
    const text = await resp.text();
    try {
      body = JSON.parse(text);
      if (body && body.error) msg = body.error;
    } catch {
      if (text) msg = text.slice(0, 500);
    }
  } catch { /* no body */ }
  return new ApiError(resp.status, msg, body);
}

/**
 * request("GET", "v2/models") → parsed JSON (or text/ArrayBuffer with `as`).
 * opts: json (body object), body (raw), headers, as: "json" | "text" | "response", signal
 */
export async function request(method, path, opts = {}, retried = false) {
  const headers = { ...(opts.headers || {}), ...authHeaders() };
  let body = opts.body;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers["Content-Type"] = "application/json";
  }
  const resp = await fetch(url(path), { method, headers, body, signal: opts.signal,
    cache: "no-store", credentials: "same-origin" });
  if (resp.status === 401 && !retried && !opts.noAuthPrompt) {
    const ok = await askToken(await resp.clone().json().then((b) => b.error).catch(() => null));
    if (ok) return request(method, path, opts, true);
  }
  if (!resp.ok) throw await errorFrom(resp);
  if (opts.as === "response") return resp;
  if (opts.as === "text") return resp.text();
  const text = await resp.text();
  return text ? JSON.parse(text) : null;
}

export const get = (path, opts) => request("GET", path, opts);
export const post = (path, json, opts = {}) => request("POST", path, { ...opts, json });

/**
 * Multipart upload with progress: onProgress(loaded, total) while sending, onSent() once the
 * body is out (the server then validates: loads and warms the model).
 */
export function upload(path, formData, { onProgress, onSent } = {}, retried = false) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", url(path));
    for (const [k, v] of Object.entries(authHeaders())) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => { if (onProgress) onProgress(e.loaded, e.lengthComputable ? e.total : 0); };
    xhr.upload.onload = () => { if (onSent) onSent(); };
    xhr.onerror = () => reject(new ApiError(0, "network error: the upload did not reach the server"));
    xhr.onabort = () => reject(new ApiError(0, "upload cancelled"));
    xhr.onload = async () => {
      let body = null;
      try { body = JSON.parse(xhr.responseText); } catch { /* not JSON */ }
      if (xhr.status === 401 && !retried) {
        const ok = await askToken(body && body.error);
        if (ok) {
          upload(path, formData, { onProgress, onSent }, true).then(resolve, reject);
          return;
        }
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(body);
      else reject(new ApiError(xhr.status, (body && body.error) || `${xhr.status} ${xhr.statusText}`, body));
    };
    xhr.send(formData);
  });
}

/** Path prefix of a model version: v2/models/<name>[/versions/<v>] */
export function modelPath(name, version) {
  let p = "v2/models/" + encodeURIComponent(name);
  if (version) p += "/versions/" + encodeURIComponent(version);
  return p;
}
