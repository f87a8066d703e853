// experiment.js — one experiment's models: the application parts stacked
// under the composed epoch, then per callpath its measured points (median
// over repetitions, whiskers from the smallest to the largest repetition),
// the fitted model, its 95% band and the extrapolation region, along the
// first parameter (the others at their largest measured value), each model's
// diagnostics and its coded warnings as badges. Curves come from GET /curve,
// points from GET /measurements: every number is the API's. Under load
// imbalance (metric time) the epoch has a fourth part, what the slowest rank
// adds to the parts: it is stacked on top from GET /scaling's points, and a
// table lists the parts at the largest measured value and at 4x it from
// GET /predict (value, interval, share of the epoch) with the answers'
// epoch_imbalance warnings as badges.
import { api, query } from '../api.js';
import { el, fmt, fmtInterval, warningBadges, diagnosticsLine } from '../dom.js';
import { modelChart, stackedChart } from '../charts.js';

// x positions: 48 evenly in log from the smallest measured value to 8x the
// largest, plus the measured values themselves
export function sweep(measuredXs) {
  const lo = Math.min(...measuredXs), hi = 8 * Math.max(...measuredXs);
  const xs = new Set(measuredXs);
  for (let k = 0; k < 48; k++) xs.add(Number((lo * Math.pow(hi / lo, k / 47)).toPrecision(6)));
  return [...xs].sort((a, b) => a - b);
}

// The experiment, its first parameter, the other parameters' fixed values
// and the measured values of the first one (from the epoch measurements).
export async function setup(id, metric) {
  const exp = await api(`/v1/experiments/${id}`);
  const param = exp.parameters[0];
  const meas = await api(`/v1/experiments/${id}/measurements` +
    query({ level: 'application', name: 'epoch', metric, phase: 'epoch', limit: 1000 }));
  const fixed = {};
  for (const p of exp.parameters.slice(1))
    fixed[p] = Math.max(...meas.measurements.map(m => m.point[p]));
  const onLine = m => exp.parameters.slice(1).every(p => m.point[p] === fixed[p]);
  const xs = [...new Set(meas.measurements.filter(onLine).map(m => m.point[param]))].sort((a, b) => a - b);
  return { exp, param, fixed, xs, onLine };
}

export function curveQuery(param, fixed, xs, extra) {
  return query({ ...extra, ...fixed, parameter: param, values: xs.join(',') });
}

export async function experimentPage(page, id, state = {}) {
  const metric = state.metric || 'time';
  const log = !!state.log;
  const { exp, param, fixed, xs, onLine } = await setup(id, metric);
  page.append(el('h1', {}, `${exp.name} `, el('span', { class: 'muted' }, `(${exp.scaling} scaling)`)));
  if (!xs.length) {
    page.append(el('p', { class: 'muted' }, 'No model set yet: upload profiles at five or more values of each parameter.'));
    return;
  }
  const models = await api(`/v1/experiments/${id}/models` + query({ level: 'callpath', phase: 'epoch', limit: 1000 }));
  const metrics = [...new Set(models.models.map(m => m.metric))].sort();
  const metricSel = el('select', { id: 'metric' }, metrics.map(m => el('option', { value: m, selected: m === metric }, m)));
  const logBox = el('input', { type: 'checkbox', id: 'log', checked: log });
  const rerender = () => {
    page.replaceChildren();
    experimentPage(page, id, { metric: metricSel.value, log: logBox.checked })
      .catch(err => page.append(el('p', { class: 'error' }, err.message)));
  };
  metricSel.addEventListener('change', rerender);
  logBox.addEventListener('change', rerender);
  const others = Object.entries(fixed).map(([k, v]) => `${k} = ${fmt(v)}`).join(', ');
  page.append(el('div', { class: 'controls' },
    el('label', {}, 'metric ', metricSel),
    el('label', {}, logBox, ' log axes'),
    el('span', { class: 'muted' }, `along ${param}${others ? ', ' + others : ''}; shaded: beyond 4× the largest measured ${param}`)));

  const values = sweep(xs);
  const unit = metric === 'time' ? 's' : metric;
  // the application: comp, comm, mem (and under load imbalance the imbalance
  // part) stacked under the composed epoch
  const app = {};
  await Promise.all(['comp', 'comm', 'mem', 'epoch'].map(async n => {
    app[n] = await api(`/v1/experiments/${id}/curve` +
      curveQuery(param, fixed, values, { level: 'application', name: n, metric }));
  }));
  // the application models' own warnings (comp, comm, mem, epoch), as badges
  const appModels = await api(`/v1/experiments/${id}/models` + query({ level: 'application', metric, limit: 1000 }));
  const appWarnings = appModels.models.flatMap(m => (m.warnings || []).map(w => ({ ...w, model: `${m.callpath} ${metric}` })));
  const imb = metric === 'time' ? await imbalancePart(id, exp, param, fixed, xs, values) : {};
  const withImb = !!imb.curve;
  const appBox = el('div', { class: 'chart', id: 'chart-application' },
    el('h3', {}, `Application per epoch: comp + comm + mem${withImb ? ' + imbalance' : ''}`),
    el('p', { class: 'fn' }, `epoch = comp + comm + mem${withImb ? ' + imbalance' : ''}; comm: ${app.comm.function ?? 'not modeled'}` +
      (withImb ? `; imbalance (what the slowest rank adds to the parts): ${imb.function}` : '')),
    warningBadges(appWarnings, 'warnings-application'));
  page.append(el('h2', {}, 'Application models'), appBox);
  stackedChart(appBox, 'application', { parts: withImb ? { ...app, imbalance: imb.curve } : app, epoch: app.epoch, log,
                                        xlabel: param, ylabel: `${metric} per epoch (${unit})` });
  if (imb.error) appBox.append(el('p', { class: 'muted', id: 'imbalance-unread' }, `The epoch's imbalance part could not be read: ${imb.error}`));
  if (withImb) appBox.append(partsTable(param, unit, imb.at));

  page.append(el('h2', {}, 'Callpaths'));
  const grid = el('div', { class: 'charts' });
  page.append(grid);
  const callpaths = models.models.filter(m => m.metric === metric && m.function);
  const skipped = models.models.filter(m => m.metric === metric && !m.function);
  let n = 0;
  for (const m of callpaths) {
    const [curve, meas] = await Promise.all([
      api(`/v1/experiments/${id}/curve` + curveQuery(param, fixed, values, { level: 'callpath', name: m.callpath, metric })),
      api(`/v1/experiments/${id}/measurements` + query({ level: 'callpath', name: m.callpath, metric, phase: 'epoch', limit: 1000 })),
    ]);
    const measured = meas.measurements.filter(onLine).map(r => ({
      x: r.point[param], value: r.value,
      min: r.repetitions.length ? Math.min(...r.repetitions) : r.value,
      max: r.repetitions.length ? Math.max(...r.repetitions) : r.value,
    }));
    const box = el('div', { class: 'chart', id: `chart-callpath-${n}`, 'data-callpath': m.callpath },
      el('h3', {}, `${m.callpath} `, el('span', { class: 'muted' }, `(${m.category})`)),
      el('p', { class: 'fn' }, m.function),
      diagnosticsLine(m.diagnostics),
      warningBadges(m.warnings, `warnings-callpath-${n}`));
    grid.append(box);
    modelChart(box, `callpath-${n}`, { curve, measured, log, xlabel: param, ylabel: `${metric} per epoch (${unit})` });
    n++;
  }
  if (skipped.length)
    page.append(el('p', { class: 'muted' }, `Not modeled: ${skipped.map(s => s.callpath).join(', ')}`));
}

// The epoch's imbalance part, when it has one: predict at the largest
// measured value (and at 4x it) says so; the part along values comes from
// the scaling answer's points (the same composition as predict's).
// {} without one; {error} when it could not be read. An experiment with
// factors has none here: its curves are read across the level
// combinations, whose epoch is the parts' sum.
async function imbalancePart(id, exp, param, fixed, xs, values) {
  if (exp.factors && Object.keys(exp.factors).length) return {};
  const xmax = Math.max(...xs);
  try {
    const first = await api(`/v1/experiments/${id}/predict` + query({ ...fixed, [param]: xmax }));
    if (!first.imbalance) return {};
    const [far, s] = await Promise.all([
      api(`/v1/experiments/${id}/predict` + query({ ...fixed, [param]: 4 * xmax })),
      api(`/v1/experiments/${id}/scaling` + query({ ...fixed, parameter: param, values: values.join(',') })),
    ]);
    const byX = new Map(s.points.map(p => [p.point[param], p.imbalance]));
    const points = values.map(x => {
      const p = byX.get(x);
      return { x, value: p ? p.value : null, interval: p ? p.interval : null };
    });
    return { curve: { points }, function: first.imbalance.function, at: [[xmax, first], [4 * xmax, far]] };
  } catch (err) {
    return { error: err.message };
  }
}

// The epoch's parts at each point of at ([x, predict answer]): value with
// its 95% interval and share of the epoch, the parts' sum without the
// imbalance part, the imbalance part and the epoch they add up to; below,
// the answers' epoch_imbalance warnings as badges.
function partsTable(param, unit, at) {
  const cell = (o, epoch, share) => {
    const v = o ? o.time ?? o.value : null;
    const iv = o && o.interval ? o.interval : null;
    const sh = share ?? (v !== null && epoch > 0 ? v / epoch : null);
    return [el('td', { class: 'num', 'data-value': v, 'data-lo': iv && iv[0], 'data-hi': iv && iv[1] },
                  fmtInterval({ value: v, interval: iv })),
            el('td', { class: 'num', 'data-share': sh }, sh === null ? '–' : `${fmt(100 * sh, 3)}%`)];
  };
  const rows = [['comp', p => p.comp], ['comm', p => p.comm], ['mem', p => p.mem],
                ['comp + comm + mem (medians over the ranks)', p => p.imbalance.parts_sum, 'parts_sum'],
                ['imbalance (the slowest rank)', p => p.imbalance, 'imbalance'],
                ['epoch', p => p.epoch, 'epoch']];
  const warnings = at.flatMap(([x, p]) => (p.warnings || []).filter(w => w.code === 'epoch_imbalance')
    .map(w => ({ ...w, model: `${w.model || 'epoch time'} at ${param} = ${fmt(x)}` })));
  return el('div', { id: 'application-parts' },
    el('p', { class: 'legend-note' }, `The epoch's parts (predict, ${unit}, 95% interval, share of the epoch): under load imbalance ` +
      'the epoch, its slowest rank\'s, exceeds the sum of the parts (each a median over the ranks) by the imbalance part.'),
    el('table', { id: 'parts' },
      el('thead', {}, el('tr', {}, el('th', {}, 'part'),
        at.flatMap(([x]) => [el('th', { class: 'num' }, `at ${param} = ${fmt(x)} [95%]`), el('th', { class: 'num' }, 'share')]))),
      el('tbody', {}, rows.map(([name, get, key]) => el('tr', { 'data-part': key || name },
        el('td', {}, name),
        at.flatMap(([, p]) => cell(get(p), p.epoch.time, key === 'imbalance' ? p.imbalance.share : null)))))),
    warningBadges(warnings, 'warnings-epoch-imbalance'));
}
