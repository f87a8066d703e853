// traces.js — an experiment's profiler traces and the per-iteration
// analysis of one (paper 001): each profiled step measured against the time
// predicted on the critical path and its 95% interval, the operators on that path, the GPU time
// breakdown (HTA's definitions), and a what-if: one kernel or operator's
// time scaled, the step predicted again. Every number is the API's
// (POST .../profiles/{profile}/iteration; a large trace is analysed as a
// job, polled at .../analyses/{run}).
import { api, query } from '../api.js';
import { el, fmt } from '../dom.js';
import { lineChart } from '../charts.js';
import { warningBadges, emptyNote, table, postAndWait } from '../widgets.js';

const TRACE_FORMATS = new Set(['kineto', 'nsys']);

function pointText(p) {
  return Object.entries(p || {}).map(([k, v]) => `${k}=${fmt(v)}`).join(', ');
}

async function analyse(id, pid, body) {
  return postAndWait(`/v1/experiments/${id}/profiles/${pid}/iteration`, body,
    run => `/v1/experiments/${id}/analyses/${run.id}`);
}

function bar(px) {
  const b = el('span', { class: 'bar' });
  b.style.width = `${Math.max(0, Math.min(150, px || 0))}px`;
  return b;
}

function stepsSection(page, doc) {
  const steps = doc.steps || [];
  page.append(el('h2', {}, 'Steps: measured against predicted'),
    el('p', { class: 'muted' }, 'measured: the step\'s wall time in the trace (ProfilerStep, profiler on); ' +
      'predicted: the critical path through the trace\'s operators and kernels with the profiler\'s ' +
      'overhead per event taken out (paper 001, Algorithm 1), in seconds per step.'));
  if (!steps.length) {
    page.append(emptyNote('The trace holds no complete profiled step (ProfilerStep#N): nothing to compare.', 'steps-empty'));
    return;
  }
  const ivText = s => s.interval ? `${fmt(s.interval[0])} – ${fmt(s.interval[1])}` : '–';
  page.append(table(['step', 'measured (s)', 'predicted (s)', '95% interval (s)', 'error', 'CPU (s)', 'GPU (s)', 'bound'],
    steps.map(s => [s.label, fmt(s.measured), fmt(s.predicted), ivText(s), `${fmt(100 * s.error, 3)}%`,
                    fmt(s.cpu_time), fmt(s.gpu_time), s.bound]), { id: 'steps-table', num: [1, 2, 3, 4, 5, 6] }));
  page.append(el('p', { class: 'muted' }, '95% interval: where the step falls in the run unprofiled, from the ' +
      'measured steps\' spread, the profiler\'s overhead per event over a range, the outliers the overheads ' +
      'dropped and the critical path\'s own error on this trace (no interval with one step).'),
    warningBadges((doc.summary || {}).warnings, 'steps-warnings'));
  const box = el('div', { class: 'chart', id: 'chart-steps' }, el('h3', {}, 'Step time (s)'));
  page.append(box);
  lineChart(box, 'steps', {
    xs: steps.map((s, i) => i + 1), xLabels: steps.map(s => s.label), xlabel: 'profiled step',
    ylabel: 'seconds per step', log: false, yZero: true,
    series: [{ label: 'measured', values: steps.map(s => s.measured), color: '#1d2430', points: true },
             { label: 'predicted', values: steps.map(s => s.predicted), color: '#2f6fdf', points: true, dash: [6, 4] },
             { label: 'interval low', values: steps.map(s => s.interval ? s.interval[0] : null), color: '#9db8ea', dash: [2, 3] },
             { label: 'interval high', values: steps.map(s => s.interval ? s.interval[1] : null), color: '#9db8ea', dash: [2, 3] }],
  });
  if (doc.summary)
    page.append(el('p', { id: 'steps-summary' }, `Geometric mean error over ${doc.summary.steps} step(s): ` +
      `${fmt(100 * doc.summary.geomean_error, 3)}% (mean measured ${fmt(doc.summary.mean_measured)} s, ` +
      `mean predicted ${fmt(doc.summary.mean_predicted)} s).`));
}

function criticalPathSection(page, doc) {
  const step = (doc.steps || [])[0];
  page.append(el('h2', {}, 'On the critical path'));
  if (!step || !(step.top_ops || []).length) {
    page.append(emptyNote('No operator on the critical path: the trace has no complete step.', 'ops-empty'));
    return;
  }
  const max = Math.max(...step.top_ops.map(o => o.seconds));
  page.append(el('p', { class: 'muted' }, `${step.label}: the operators that take the largest share of the predicted step.`),
    table(['operator', 'seconds on the path', 'share of the step', 'count', ''],
      step.top_ops.map(o => [o.name, fmt(o.seconds), `${fmt(o.share_pct, 3)}%`, o.count,
        bar(150 * o.seconds / max)]),
      { id: 'ops-table', num: [1, 2, 3] }));
}

function breakdownSection(page, doc) {
  const b = doc.breakdown;
  page.append(el('h2', {}, 'GPU time breakdown'));
  if (!b || !(b.window > 0)) {
    page.append(emptyNote('No GPU activity in the trace\'s profiled steps: nothing to break down.', 'breakdown-empty'));
    return;
  }
  const parts = ['computation', 'communication', 'memory', 'other', 'idle'];
  page.append(el('p', { class: 'muted' }, `Over ${fmt(b.window)} s of GPU time window (the profiled steps but the last, ` +
      'as HTA counts them); a kernel overlapping another counts once.'),
    table(['part', 'seconds', 'share of the window'],
      parts.map(p => [p, fmt(b[p]), `${fmt(b[p + '_pct'], 3)}%`]), { id: 'breakdown-table', num: [1, 2] }));
}

function whatIfSection(page, id, pid, doc) {
  const step = (doc.steps || [])[0];
  page.append(el('h2', {}, 'What if'));
  if (!step || !(step.top_ops || []).length) {
    page.append(emptyNote('Nothing to change: the trace has no operator on a critical path.', 'whatif-empty'));
    return;
  }
  const sel = el('select', { id: 'whatif-name' }, step.top_ops.map(o => el('option', { value: o.name }, o.name)));
  const factor = el('input', { id: 'whatif-scale', type: 'number', step: '0.1', min: '0.01', value: '0.5' });
  const out = el('div', { id: 'whatif-result' });
  const run = el('button', { id: 'whatif-run', type: 'button' }, 'Predict again');
  run.addEventListener('click', async () => {
    out.replaceChildren(el('p', { class: 'muted' }, 'Analysing…'));
    try {
      const scale = Number(factor.value);
      const next = await analyse(id, pid, { top: 10, kernel_times: { [sel.value]: { scale } } });
      const before = doc.summary.mean_predicted, after = next.summary.mean_predicted;
      out.replaceChildren(el('p', { id: 'whatif-answer', 'data-before': String(before), 'data-after': String(after) },
        `${sel.value} at ${fmt(scale)}× its measured time: the step is predicted at ${fmt(after)} s ` +
        `instead of ${fmt(before)} s (${fmt(100 * (after - before) / before, 3)}%).`),
        warningBadges(next.warnings, 'whatif-warnings'));
    } catch (err) {
      out.replaceChildren(el('p', { class: 'error' }, err.message));
    }
  });
  page.append(el('div', { class: 'controls' }, el('label', {}, 'operator ', sel),
    el('label', {}, 'time × ', factor), run), out);
}

export async function tracesPage(page, id, state = {}) {
  const exp = await api(`/v1/experiments/${id}`);
  page.append(el('h1', {}, `${exp.name} `, el('span', { class: 'muted' }, '(traces and per-iteration analysis)')));
  const listing = await api(`/v1/experiments/${id}/profiles` + query({ limit: 1000 }));
  const traces = listing.profiles.filter(p => TRACE_FORMATS.has(p.format));
  if (!traces.length) {
    page.append(emptyNote('This experiment holds no profiler trace: upload a PyTorch profiler (Kineto) ' +
      'trace or an Nsight Systems export to POST /v1/experiments/' + id + '/profiles to see its steps here.', 'traces-empty'));
    return;
  }
  const pid = Number(state.profile || traces[0].id);
  const sel = el('select', { id: 'trace' }, traces.map(t => el('option', { value: t.id, selected: t.id === pid },
    `#${t.id} ${t.format} at ${pointText(t.point)}, repetition ${t.repetition}, ${t.ranks} rank(s)`)));
  sel.addEventListener('change', () => { location.hash = `#/e/${id}/traces/${sel.value}`; });
  page.append(el('div', { class: 'controls' }, el('label', {}, 'trace ', sel),
    el('span', { class: 'muted' }, `${traces.length} trace(s) of ${listing.profiles.length} upload(s)`)));
  const doc = await analyse(id, pid, { top: 10 });
  page.append(el('p', { id: 'trace-info', 'data-profile': String(pid) },
    `rank ${doc.rank ?? '–'} of ${doc.world_size || '–'}, ${doc.events} events, ` +
    `overheads ${doc.overheads ? doc.overheads.source : '–'}`), warningBadges(doc.warnings, 'trace-warnings'));
  stepsSection(page, doc);
  criticalPathSection(page, doc);
  breakdownSection(page, doc);
  whatIfSection(page, id, pid, doc);
}
