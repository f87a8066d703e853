// experiment.js — one experiment's models: the application parts stacked
// under the composed epoch, then per callpath its measured points (median
// over repetitions, whiskers from the smallest to the largest repetition),
// the fitted model, its 95% band and the extrapolation region, along the
// first parameter (the others at their largest measured value), each model's
// diagnostics and its coded warnings as badges. Curves come from GET /curve,
// points from GET /measurements: every number is the API's.
import { api, query } from '../api.js';
import { el, fmt, warningBadges, diagnosticsLine } from '../dom.js';
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
  // the application: comp, comm, mem stacked under the composed epoch
  const app = {};
  await Promise.all(['comp', 'comm', 'mem', 'epoch'].map(async n => {
    app[n] = await api(`/v1/experiments/${id}/curve` +
      curveQuery(param, fixed, values, { level: 'application', name: n, metric }));
  }));
  // the application models' own warnings (comp, comm, mem, epoch), as badges
  const appModels = await api(`/v1/experiments/${id}/models` + query({ level: 'application', metric, limit: 1000 }));
  const appWarnings = appModels.models.flatMap(m => (m.warnings || []).map(w => ({ ...w, model: `${m.callpath} ${metric}` })));
  const appBox = el('div', { class: 'chart', id: 'chart-application' },
    el('h3', {}, 'Application per epoch: comp + comm + mem'),
    el('p', { class: 'fn' }, `epoch = comp + comm + mem; comm: ${app.comm.function ?? 'not modeled'}`),
    warningBadges(appWarnings, 'warnings-application'));
  page.append(el('h2', {}, 'Application models'), appBox);
  stackedChart(appBox, 'application', { parts: app, epoch: app.epoch, log, xlabel: param, ylabel: `${metric} per epoch (${unit})` });

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
