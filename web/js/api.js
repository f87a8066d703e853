// api.js — the dashboard's only way to the server: fetch() against the JSON
// API of the origin that served the page. The token is typed once, kept in
// sessionStorage (this tab only, gone when it closes) and sent as a bearer
// header; it never appears in a URL.
const KEY = 'perfcast.token';

export function getToken() {
  return sessionStorage.getItem(KEY) || '';
}

export function setToken(token) {
  if (token) sessionStorage.setItem(KEY, token);
  else sessionStorage.removeItem(KEY);
}

export class ApiError extends Error {
  constructor(status, doc, fallback) {
    super(doc && doc.detail ? doc.detail : fallback);
    this.status = status;
    this.doc = doc;
  }
}

// GET (or another method with a JSON body) path; the parsed answer, or an
// ApiError carrying the problem document's detail.
export async function api(path, { method = 'GET', body } = {}) {
  const headers = { Accept: 'application/json' };
  const token = getToken();
  if (token) headers.Authorization = 'Bearer ' + token;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const r = await fetch(path, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'omit', cache: 'no-store',
  });
  const text = await r.text();
  let doc = null;
  try { doc = text ? JSON.parse(text) : null; } catch { doc = null; }
  if (!r.ok) throw new ApiError(r.status, doc, `${r.status} ${r.statusText}`);
  if (r.status === 202 && doc && (doc.kind === 'configurations' || doc.kind === 'advice'))
    return searchResult(r.headers.get('Location'));
  return doc;
}

// A configuration search or advice queued for the job workers (202): the
// answer the request would have had, once a worker has it (the run at its
// Location asked again until it is done or failed).
async function searchResult(location) {
  for (;;) {
    const run = await api(location);
    if (run.state === 'done') return run.result;
    if (run.state === 'failed')
      throw new ApiError(run.error && run.error.status || 500, run.error, 'the search failed');
    await new Promise(resolve => setTimeout(resolve, 250));
  }
}

// "?a=1&b=x" from an object, values encoded; undefined values left out.
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) q.set(k, v);
  const s = q.toString();
  return s ? '?' + s : '';
}
