// widgets.js — pieces every page shares: warning badges (the answers'
// coded warnings, or plain texts from older answers), the note a chart
// shows when it has nothing to draw and why, simple tables, a "not found"
// box with a way back, and polling of a 202 answer's Location.
import { api, ApiError } from './api.js';
import { el, fmt, shareOf } from './dom.js';

// A warnings array as badges: {code, message} objects show their code and
// carry the message as a tooltip and text (with the share of the epoch
// where the warning has one: epoch_imbalance); plain strings show as text.
export function warningBadges(warnings, id) {
  const list = (warnings || []).filter(w => w !== null && w !== undefined);
  const box = el('div', { class: 'warnings', id, 'data-count': String(list.length) });
  for (const w of list) {
    const code = typeof w === 'object' ? (w.code || 'warning') : 'warning';
    const msg = typeof w === 'object' ? (w.message || w.detail || JSON.stringify(w)) : String(w);
    const share = shareOf(w);
    box.append(el('span', { class: 'badge', title: msg, 'data-code': code, 'data-share': share },
      el('b', {}, code), share === null ? '' : ` ${fmt(100 * share, 3)}% of the epoch`, ' ', msg));
  }
  return box;
}

// Why a chart or a table is empty, in its place.
export function emptyNote(text, id) {
  return el('p', { class: 'empty muted', id }, text);
}

// rows: arrays of cells (strings, numbers, nodes); numeric columns right-aligned.
export function table(headers, rows, { id, num = [] } = {}) {
  const t = el('table', { id });
  t.append(el('tr', {}, headers.map((h, i) => el('th', { class: num.includes(i) ? 'num' : null }, h))));
  for (const r of rows)
    t.append(el('tr', {}, r.map((c, i) => el('td', { class: num.includes(i) ? 'num' : null }, c))));
  return t;
}

// A 404 answer as a page of its own: what was not found, and the way back.
export function notFound(page, what, back, backText) {
  page.append(el('h1', {}, 'Not found'),
    el('p', { class: 'not-found' }, `${what} does not exist here (or belongs to another tenant).`),
    el('p', {}, el('a', { href: back, id: 'back' }, backText)));
}

// 1 when err is the API's 404.
export function isNotFound(err) {
  return err instanceof ApiError && err.status === 404;
}

// POST path; a 202 answer (a job) is polled at its run's route until done.
export async function postAndWait(path, body, runPath) {
  const doc = await api(path, { method: 'POST', body });
  if (!doc || doc.state === undefined || !runPath || doc.state === 'done') return doc.result ?? doc;
  for (let i = 0; i < 600; i++) {
    await new Promise(r => setTimeout(r, 200));
    const run = await api(runPath(doc));
    if (run.state === 'done') return run.result ?? run;
    if (run.state === 'failed') throw new Error(run.error || 'the analysis failed');
  }
  throw new Error('the analysis did not finish in 120 s');
}
