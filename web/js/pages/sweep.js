// sweep.js — an experiment's repetitions and sweep analyses (paper 003):
// the epoch time's repetition statistics per point with their 95%
// confidence intervals (GET /statistics), the Taguchi signal-to-noise
// ranking of the factors (GET /sensitivity), the scaling-efficiency table
// SE_N = t_baseline/t_N with its intervals (GET /efficiency), and the runs
// advised next for the prediction at 4x the largest measured value within a
// budget (POST /advice). Every number is the API's.
import { api, query } from '../api.js';
import { el, fmt } from '../dom.js';
import { lineChart } from '../charts.js';
import { warningBadges, emptyNote, table } from '../widgets.js';

function pointText(p) {
  return Object.entries(p || {}).map(([k, v]) => `${k}=${fmt(v)}`).join(', ');
}

function ci(iv) {
  return iv ? `[${fmt(iv[0])}, ${fmt(iv[1])}]` : '–';
}

async function statistics(page, id, exp) {
  const s = await api(`/v1/experiments/${id}/statistics` +
    query({ level: 'application', name: 'epoch', metric: 'time', limit: 1000 }));
  page.append(el('h2', {}, 'Repetitions of the epoch time'), warningBadges(s.warnings, 'stats-warnings'));
  const items = s.items || [];
  if (!items.length) {
    page.append(emptyNote('No epoch measurement yet: upload profiles (several repetitions of each point give intervals).', 'stats-empty'));
    return;
  }
  const param = exp.parameters[0];
  page.append(el('p', { class: 'muted' }, `${s.measurements} point(s); seconds per epoch; 95% confidence ` +
      `interval of the mean (t) and of the median (order statistics, n ≥ 6); ${s.single_repetition} point(s) ` +
      `with one repetition have none. Noisy: the interval's half width exceeds ${fmt(100 * s.target)}% of the mean.`),
    table(['point', 'n', 'mean', '95% CI of the mean', 'median', '95% CI of the median', 'CV', 'repetitions needed', 'noisy'],
      items.map(i => [pointText(i.point), i.n, fmt(i.mean), ci(i.mean_ci), fmt(i.median), ci(i.median_ci),
                      i.cv === null ? '–' : `${fmt(100 * i.cv, 3)}%`, i.repetitions_needed ?? '–', i.noisy ? 'yes' : 'no']),
      { id: 'stats-table', num: [1, 2, 4, 6, 7] }));
  const box = el('div', { class: 'chart', id: 'chart-stats' }, el('h3', {}, `Mean epoch time with its 95% interval, along ${param}`));
  page.append(box);
  const line = items.filter(i => Object.keys(i.point).length === 1 || exp.parameters.length === 1);
  lineChart(box, 'stats', { xs: line.map(i => i.point[param]), xlabel: param, ylabel: 'seconds per epoch', yZero: true,
    series: [{ label: 'mean', values: line.map(i => i.mean), color: '#2f6fdf', points: true },
             { label: 'CI low', values: line.map(i => (i.mean_ci ? i.mean_ci[0] : null)), color: '#667085', dash: [4, 4], width: 1 },
             { label: 'CI high', values: line.map(i => (i.mean_ci ? i.mean_ci[1] : null)), color: '#667085', dash: [4, 4], width: 1 }] });
}

async function sensitivity(page, id) {
  const s = await api(`/v1/experiments/${id}/sensitivity`);
  page.append(el('h2', {}, 'Which factor matters most: Taguchi signal-to-noise'), warningBadges(s.warnings, 'sn-warnings'),
    el('p', { class: 'muted' }, `${s.formula}; ${s.ranking}. S/N in dB (higher is better).`));
  if (!(s.factors || []).length) {
    page.append(emptyNote('No factor varies in the measurements: nothing to rank.', 'sn-empty'));
    return;
  }
  page.append(table(['rank', 'factor', 'kind', 'S/N range (dB)', 'share', 'best level', 'mean S/N per level (dB)'],
    s.factors.map(f => [f.rank, f.factor, f.kind, fmt(f.range), `${fmt(100 * f.normalized, 3)}%`, fmt(f.best_level),
      f.levels.map(l => `${fmt(l.level)}: ${fmt(l.mean_sn)}`).join('; ')]), { id: 'sn-table', num: [0, 3, 4] }));
}

async function efficiency(page, id) {
  const e = await api(`/v1/experiments/${id}/efficiency`);
  page.append(el('h2', {}, 'Scaling efficiency SE_N = t_baseline / t_N'), warningBadges(e.warnings, 'se-warnings'),
    el('p', { class: 'muted' }, `${e.definition}; ${e.interval}.`));
  const rows = [];
  for (const g of e.groups || [])
    for (const p of g.points)
      rows.push([pointText({ ...g.fixed, [e.parameter]: p[e.parameter] }), fmt(g.baseline), fmt(p.mean), p.n,
                 fmt(p.se.value), ci(p.se.interval)]);
  if (!rows.length) {
    page.append(emptyNote('No measured points along the parameter: nothing to compare with a baseline.', 'se-empty'));
    return;
  }
  page.append(table(['point', 'baseline', 'mean epoch (s)', 'n', 'SE', '95% interval'], rows, { id: 'se-table', num: [1, 2, 3, 4] }));
}

async function advice(page, id, exp) {
  page.append(el('h2', {}, 'Where to measure next'));
  const stats = await api(`/v1/experiments/${id}/measurements` +
    query({ level: 'application', name: 'epoch', metric: 'time', phase: 'epoch', limit: 1000 }));
  if (!stats.measurements.length || !exp.cost) {
    page.append(emptyNote(!exp.cost ? 'The experiment has no cost set-up (cores_per_rank): runs cannot be priced in core-hours.'
      : 'No measurement yet.', 'advice-empty'));
    return;
  }
  const target = {};
  for (const p of exp.parameters) target[p] = 4 * Math.max(...stats.measurements.map(m => m.point[p]));
  const budget = 50;
  let a;
  try {
    a = await api(`/v1/experiments/${id}/advice`, { method: 'POST', body: { target, budget_core_hours: budget } });
  } catch (err) {
    page.append(el('p', { class: 'error' }, err.message));
    return;
  }
  page.append(warningBadges([...(a.warnings || []), ...(a.extrapolation && a.extrapolation.beyond_4x
      ? [{ code: 'extrapolation_far', message: a.extrapolation.warning }] : [])], 'advice-warnings'),
    el('p', { id: 'advice-summary' }, `For the prediction at ${pointText(a.target)} (${fmt(a.prediction.value)} s per epoch), ` +
      `within ${fmt(budget)} core-h: ${a.runs} run(s), ${fmt(a.spent_core_hours)} core-h, shrinking the 95% half width of ` +
      `the predicted mean from ${fmt(a.mean_half_width_s.now)} s to ${fmt(a.mean_half_width_s.after)} s (−${fmt(a.expected_shrink_pct, 3)}%).`),
    table(['point', 'runs', 'measured repetitions', 'core-h', 'share of the variance'],
      a.recommendations.map(r => [pointText(r.point), r.runs, r.measured_repetitions, fmt(r.core_hours), `${fmt(r.variance_share_pct, 3)}%`]),
      { id: 'advice-table', num: [1, 2, 3, 4] }));
}

export async function sweepPage(page, id) {
  const exp = await api(`/v1/experiments/${id}`);
  page.append(el('h1', {}, `${exp.name}: repetitions, sensitivity and advice`));
  // a section the experiment cannot answer yet (no model set, no cost)
  // says why in its place; the others still show
  for (const section of [statistics, sensitivity, efficiency, advice]) {
    try {
      await section(page, id, exp);
    } catch (err) {
      page.append(emptyNote(`${section.name}: ${err.message}`, `${section.name}-empty`));
    }
  }
}
