// scaling.js — scaling and cost of one experiment along its first
// parameter: speedup and efficiency against the ideal (GET /scaling), cost
// per epoch versus scale with the configurations answer's time/cost Pareto
// front and its recommended point (POST /configurations), the bottleneck
// ranking from now (the largest measured point) to the target (GET
// /bottlenecks) and the load imbalance per rank as a heatmap (GET
// /measurements, GET /imbalance); each answer's coded warnings as badges,
// and each ranked callpath's own in its row of the bottleneck and LIF tables.
import { api, query } from '../api.js';
import { el, fmt, fmtInterval, errorBox, warningBadges } from '../dom.js';
import { lineChart, heatmap } from '../charts.js';
import { setup, sweep } from './experiment.js';

function atText(param, x, fixed) {
  return [[param, x], ...Object.entries(fixed)].map(([k, v]) => `${k}:${v}`).join(',');
}

async function scalingCharts(page, id, { exp, param, fixed, xs }) {
  const values = sweep(xs);
  const s = await api(`/v1/experiments/${id}/scaling` + query({ ...fixed, parameter: param, values: values.join(',') }));
  const px = s.points.map(p => p.point[param]);
  const x1 = s.baseline.point[param];
  const strong = s.scaling === 'strong';
  const box2 = el('div', { class: 'chart', id: 'chart-efficiency' }, el('h3', {}, 'Parallel efficiency against the ideal'));
  const shade = 4 * Math.max(...xs);
  if (strong) {
    const box1 = el('div', { class: 'chart', id: 'chart-speedup' }, el('h3', {}, 'Speedup T₁/Tₖ against the ideal'));
    page.append(el('h2', {}, 'Scaling'), warningBadges(s.warnings, 'warnings-scaling'),
      el('div', { class: 'charts' }, box1, box2));
    lineChart(box1, 'speedup', { xs: px, xlabel: param, ylabel: 'speedup (×)', shade, yZero: true, series: [
      { label: 'predicted', values: s.points.map(p => p.speedup ? p.speedup.value : null), color: '#2f6fdf' },
      { label: 'ideal', values: px.map(x => x / x1), color: '#667085', dash: [5, 5], width: 1 }] });
  } else {
    // weak scaling: the work grows with the scale, so T₁/Tₖ is the
    // efficiency itself; one chart, not two identical ones
    page.append(el('h2', {}, 'Scaling'), el('p', { class: 'muted', id: 'weak-note' },
      'Weak scaling: each rank keeps its share of the work, so the speedup T₁/Tₖ is the efficiency; ideal is 1 at every scale.'),
      warningBadges(s.warnings, 'warnings-scaling'), el('div', { class: 'charts' }, box2));
  }
  lineChart(box2, 'efficiency', { xs: px, xlabel: param, ylabel: 'efficiency T₁/Tₖ', shade, yZero: true, series: [
    { label: 'predicted', values: s.points.map(p => p.efficiency ? p.efficiency.value : null), color: '#2f6fdf' },
    { label: 'ideal', values: px.map(() => 1), color: '#667085', dash: [5, 5], width: 1 }] });
  return { values, exp };
}

async function costChart(page, id, { exp, param, fixed, xs }) {
  const box = el('div', { class: 'chart', id: 'chart-cost' });
  page.append(el('h2', {}, 'Cost versus scale'), box);
  // whole numbers from the smallest measured value to 8x the largest (at most ~60)
  const lo = Math.min(...xs), hi = 8 * Math.max(...xs);
  const values = [...new Set([...xs, ...Array.from({ length: 60 }, (_, k) =>
    Math.round(lo * Math.pow(hi / lo, k / 59)))])].sort((a, b) => a - b);
  const candidates = { [param]: { values } };
  for (const [k, v] of Object.entries(fixed)) candidates[k] = { values: [v] };
  let c;
  try {
    c = await api(`/v1/experiments/${id}/configurations`, { method: 'POST', body: { epochs: 1, candidates } });
  } catch (err) {
    box.append(errorBox(err));
    return;
  }
  const money = exp.cost && exp.cost.price_per_core_hour !== undefined;
  const key = money ? 'cost' : 'core_hours';
  const currency = money ? (exp.cost.currency || 'price units') : null;
  const cx = c.candidates.map(k => k.point[param]);
  const onPareto = new Set(c.pareto.map(k => k.point[param]));
  const rec = c.recommended ? c.recommended.point[param] : null;
  box.append(el('h3', {}, `${money ? `Cost per epoch (${currency})` : 'Core-hours per epoch'}; Pareto front (time, cost) and the recommendation`),
    el('p', { class: 'fn' }, c.recommended ? `recommended: ${param} = ${fmt(rec)} — ${c.recommended.reason}` : 'nothing feasible'));
  lineChart(box, 'cost', { xs: cx, xlabel: param, ylabel: money ? `${currency} per epoch` : 'core-h per epoch', yZero: true, series: [
    { label: 'all candidates', values: c.candidates.map(k => k[key]), color: '#9aa4b2', width: 1, points: true, size: 4 },
    { label: 'Pareto front', values: c.candidates.map(k => (onPareto.has(k.point[param]) ? k[key] : null)), color: '#e8833a', width: 3, spanGaps: true, points: true, size: 9 },
    { label: 'recommended', values: c.candidates.map(k => (k.point[param] === rec ? k[key] : null)), color: '#c0262d', noLine: true, points: true, size: 14 }] });
  // the front itself, point by point: no faster point costs less
  const front = c.pareto.slice().sort((a, b) => a.point[param] - b.point[param]);
  box.append(el('p', { class: 'legend-note' }, `Pareto front: ${front.length} of ${c.candidates.length} candidates (no other is both faster and cheaper).`),
    el('table', { id: 'pareto' },
      el('tr', {}, [param, 'time per epoch (s)', money ? `cost per epoch (${currency})` : 'core-h per epoch'].map(t => el('th', {}, t))),
      front.map(k => el('tr', {}, el('td', { class: 'num' }, fmt(k.point[param])),
        el('td', { class: 'num' }, fmt(k.time_s ?? (k.time && k.time.value))), el('td', { class: 'num' }, fmt(k[key]))))));
}

async function bottlenecks(page, id, { param, fixed, xs }) {
  const target = 8 * Math.max(...xs);
  const b = await api(`/v1/experiments/${id}/bottlenecks` + query({ at: atText(param, target, fixed), limit: 15 }));
  const measuredMax = Math.max(...xs);
  page.append(el('h2', {}, `Bottlenecks from now (${param} = ${fmt(b.now[param])}) to ${param} = ${fmt(target)}`),
    el('p', { class: 'extrapolated', id: 'bottlenecks-extrapolated' },
      `The target ${param} = ${fmt(target)} is ${fmt(target / measuredMax)}× the largest measured ${param} (${fmt(measuredMax)}): ` +
      'its shares are extrapolations (beyond 4× the measured range, errors grow with the distance).'),
    warningBadges(b.warnings, 'warnings-bottlenecks'));
  // each ranked callpath's own coded warnings (its model's and its
  // prediction's at the target) as badges in its row
  const rows = b.callpaths.map((c, i) => el('tr', { 'data-callpath': c.callpath },
    el('td', { class: 'num' }, c.rank), el('td', {}, c.callpath), el('td', {}, c.category),
    el('td', { class: 'num' }, `${fmt(c.share_now_pct)}%`),
    el('td', {}, bar(c.share_now_pct, '')),
    el('td', { class: 'num' }, `${fmt(c.share_at_pct.value)}%`),
    el('td', {}, bar(c.share_at_pct.value, 'at')),
    el('td', { class: 'num' }, fmtInterval(c.value_at)),
    el('td', {}, warningBadges(c.warnings, `warnings-bottleneck-${i}`))));
  page.append(el('table', { id: 'bottlenecks' },
    el('thead', {}, el('tr', {}, ['#', 'callpath', 'category', 'share now (measured)', '', `share at ${param} = ${fmt(target)} (extrapolated)`, '', 'value there [95%]', 'warnings'].map(t => el('th', {}, t)))),
    el('tbody', {}, rows)));
}

function bar(pct, cls) {
  const b = el('span', { class: cls ? `bar ${cls}` : 'bar' });
  b.style.width = `${Math.max(0, Math.min(100, pct || 0)) * 1.5}px`;
  return b;
}

async function imbalance(page, id, { param, xs, onLine }) {
  const xmax = Math.max(...xs);
  const [meas, lif] = await Promise.all([
    api(`/v1/experiments/${id}/measurements` + query({ level: 'callpath', metric: 'time', phase: 'epoch', limit: 1000 })),
    api(`/v1/experiments/${id}/imbalance` + query({ limit: 50 })),
  ]);
  const at = meas.measurements.filter(m => onLine(m) && m.point[param] === xmax);
  const ranks = [...new Set(at.flatMap(m => m.ranks.map(r => r.rank)))].sort((a, b) => a - b);
  const rows = at.map(m => m.name);
  const values = at.map(m => ranks.map(r => { const v = m.ranks.find(k => k.rank === r); return v ? v.value : null; }));
  page.append(el('h2', {}, `Load imbalance per rank at ${param} = ${fmt(xmax)}`));
  const box = el('div', { class: 'heatmap', id: 'chart-imbalance' });
  page.append(box);
  heatmap(box, 'imbalance', { rows, cols: ranks, values,
    title: 'each cell: the rank\'s per-epoch time over the callpath\'s mean over ranks (white = mean, red = slower, blue = faster, full color at ±10%)' });
  // the answer's warnings, then each callpath's (its LIF model's) in its row
  page.append(warningBadges(lif.warnings, 'warnings-imbalance'), el('table', { id: 'lif' },
    el('thead', {}, el('tr', {}, ['callpath', 'LIF now (max/mean)', 'warnings'].map(t => el('th', {}, t)))),
    el('tbody', {}, lif.callpaths.map((c, i) => el('tr', { 'data-callpath': c.callpath },
      el('td', {}, c.callpath), el('td', { class: 'num' }, fmt(c.lif_now, 6)),
      el('td', {}, warningBadges(c.warnings, `warnings-imbalance-${i}`)))))));
}

export async function scalingPage(page, id) {
  const ctx = await setup(id, 'time');
  page.append(el('h1', {}, `${ctx.exp.name}: scaling and cost`));
  if (!ctx.xs.length) {
    page.append(el('p', { class: 'muted' }, 'No model set yet.'));
    return;
  }
  await scalingCharts(page, id, ctx);
  await costChart(page, id, ctx);
  await bottlenecks(page, id, ctx);
  await imbalance(page, id, ctx);
}
