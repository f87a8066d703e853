// dom.js — building elements without innerHTML (text is always text).
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

export function clear(node) {
  while (node.firstChild) node.firstChild.remove();
  return node;
}

// A number as the API gave it, shortened for reading: 4 significant digits.
export function fmt(v, digits = 4) {
  if (v === null || v === undefined || Number.isNaN(v)) return '–';
  if (typeof v !== 'number') return String(v);
  if (v !== 0 && (Math.abs(v) >= 1e6 || Math.abs(v) < 1e-3)) return v.toExponential(digits - 1);
  return Number(v.toPrecision(digits)).toString();
}

export function fmtInterval(o) {
  if (!o) return '–';
  const iv = o.interval;
  return iv ? `${fmt(o.value)} [${fmt(iv[0])}, ${fmt(iv[1])}]` : fmt(o.value);
}

export function errorBox(err) {
  const hint = err && err.status === 401
    ? ' Type an API token above (perfcast token create, or POST /v1/tokens).' : '';
  return el('p', { class: 'error' }, `${err && err.message ? err.message : err}${hint}`);
}

// The coded warnings of a model or an answer as badges: the code visible
// (with the share of the epoch where the warning has one: epoch_imbalance),
// the message (and the model it is about) on hover; an empty line when there
// are none.
export function warningBadges(warnings, id) {
  const list = (warnings || []).filter(w => w && typeof w === 'object');
  return el('p', { class: 'warnings', id },
    list.map(w => el('span', { class: `badge badge-${w.code}`, title: w.model ? `${w.model}: ${w.message}` : w.message,
                               'data-code': w.code, 'data-share': shareOf(w) },
      w.code + (shareOf(w) === null ? '' : ` ${fmt(100 * w.share, 3)}% of the epoch`) + (w.model ? ` (${w.model})` : ''))));
}

// A warning's share (a fraction), or null where it has none.
export function shareOf(w) {
  return w && typeof w.share === 'number' && Number.isFinite(w.share) ? w.share : null;
}

// A model's diagnostics in one line: fit quality and what it was fitted to.
export function diagnosticsLine(d) {
  if (!d) return null;
  const ranges = Object.entries(d.parameters || {})
    .map(([p, r]) => `${p} ${fmt(r.min)}–${fmt(r.max)} (${r.distinct} values)`).join(', ');
  return el('p', { class: 'diag' },
    `SMAPE ${fmt(d.smape)}%, adj. R² ${fmt(d.adjusted_r2)}, cross-validated SMAPE ${fmt(d.cross_validated_smape)}%, RSS ${fmt(d.rss)}` +
    (ranges ? `; measured ${ranges}` : ''));
}
