// history.js — model sets per commit: the newest set of every commit, in
// the order they were made, each compared with the commit before it by
// GET /regressions (at the default target: 4x the largest measured value);
// regressions are marked in the table and in the chart of the epoch at the
// target per commit, beside its parts comp, comm and mem (so that a
// regression shows which part moved).
import { api, query } from '../api.js';
import { el, fmt, fmtInterval } from '../dom.js';
import { lineChart } from '../charts.js';

export async function historyPage(page, id) {
  const exp = await api(`/v1/experiments/${id}`);
  page.append(el('h1', {}, `${exp.name}: model sets per commit`));
  const sets = await api(`/v1/experiments/${id}/model_sets` + query({ limit: 200 }));
  const seen = new Set();
  const commits = [];
  for (const s of sets.model_sets) { // newest first: keep each commit's newest set
    if (!s.commit || seen.has(s.commit)) continue;
    seen.add(s.commit);
    commits.unshift(s);
  }
  if (commits.length < 1) {
    page.append(el('p', { class: 'muted' }, 'No model set names a commit yet: upload with ?commit=SHA (and &branch=, &ci_run=).'));
    return;
  }
  const reports = await Promise.all(commits.slice(1).map((s, i) =>
    api(`/v1/experiments/${id}/regressions` + query({ base: commits[i].commit, head: s.commit })).catch(err => ({ error: err.message }))));
  const epochAt = [], flagged = [];
  const parts = ['comp', 'comm', 'mem'];
  const partAt = Object.fromEntries(parts.map(p => [p, []]));
  // a commit's value of an application model at the target: the head side of
  // its comparison with the commit before it; the first commit's, the base
  // side of the first comparison
  const valueAt = (i, name) => {
    const r = i > 0 ? reports[i - 1] : reports[0];
    const a = r && !r.error ? r.application.find(x => x.name === name) : null;
    return a && a.at ? a.at[i > 0 ? 'head' : 'base'] : null;
  };
  const rows = commits.map((s, i) => {
    const r = i > 0 ? reports[i - 1] : null;
    const shown = valueAt(i, 'epoch');
    epochAt.push(shown ? shown.value : null);
    const partCells = parts.map(p => {
      const v = valueAt(i, p);
      partAt[p].push(v ? v.value : null);
      return el('td', { class: 'num', 'data-part': p }, v ? fmt(v.value) : '–');
    });
    const bad = r && r.regression;
    flagged.push(bad ? epochAt[i] : null);
    const worst = r && !r.error ? r.callpaths.filter(c => c.status === 'regression').map(c => c.name) : [];
    return el('tr', { class: bad ? 'regression' : null, 'data-commit': s.commit },
      el('td', {}, s.commit), el('td', {}, s.branch ?? '–'), el('td', {}, s.ci_run ?? '–'),
      el('td', { class: 'num' }, `#${s.model_set}`), el('td', {}, s.created_at),
      el('td', { class: 'num' }, shown ? fmtInterval(shown) : '–'), ...partCells,
      el('td', {}, i === 0 ? 'first' : r.error ? r.error
        : bad ? `REGRESSION vs ${commits[i - 1].commit}${worst.length ? ': ' + worst.join(', ') : ''}`
          : r.improvements ? `improvement vs ${commits[i - 1].commit}` : `no regression vs ${commits[i - 1].commit}`));
  });
  const at = reports.find(r => r && !r.error);
  const atText = at ? Object.entries(at.at).map(([k, v]) => `${k} = ${fmt(v)}`).join(', ') : '';
  const box = el('div', { class: 'chart', id: 'chart-history' }, el('h3', {}, `Epoch and its parts at ${atText} per commit (red: regression; the epoch includes any imbalance part)`));
  page.append(box);
  lineChart(box, 'history', { xs: commits.map((_, i) => i + 1), xlabel: 'commit (oldest first)', ylabel: 'epoch (s)', yZero: true,
    xLabels: commits.map(c => c.commit), series: [
    { label: 'epoch at target', values: epochAt, color: '#2f6fdf', points: true, size: 6 },
    { label: 'comp at target', values: partAt.comp, color: '#2a9d8f', points: true, size: 4 },
    { label: 'comm at target', values: partAt.comm, color: '#e9a23b', points: true, size: 4 },
    { label: 'mem at target', values: partAt.mem, color: '#8a5cc2', points: true, size: 4 },
    { label: 'regression', values: flagged, color: '#c0262d', noLine: true, points: true, size: 12 }] });
  page.append(el('table', { id: 'history' },
    el('thead', {}, el('tr', {}, ['commit', 'branch', 'CI run', 'model set', 'created', `epoch at ${atText} [95%]`, 'comp', 'comm', 'mem', 'against the previous commit'].map(t => el('th', {}, t)))),
    el('tbody', {}, rows)));
}
