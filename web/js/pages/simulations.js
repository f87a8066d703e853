// simulations.js — asynchronous-SGD simulations (paper 002): the list of the
// tenant's simulations, and one simulation's step graphs, runs and, for a
// run, its throughput against the number of workers for each number of
// parameter servers, with the saturation point or "no saturation up to W",
// the utilisation and the time per step. Every number is the API's
// (GET /v1/simulations, /v1/simulations/{id}, .../runs, .../runs/{run}).
import { api, query } from '../api.js';
import { el, fmt } from '../dom.js';
import { lineChart } from '../charts.js';
import { warningBadges, emptyNote, table } from '../widgets.js';

const COLORS = ['#2f6fdf', '#e8833a', '#3aa26b', '#c0262d', '#7a4fd0', '#1d2430'];

export async function simulationsPage(page) {
  page.append(el('h1', {}, 'Simulations'));
  const list = await api('/v1/simulations' + query({ limit: 1000 }));
  if (!list.simulations.length) {
    page.append(emptyNote('No simulation yet: POST /v1/simulations, then a worker\'s step graph to .../profiles and a run to .../runs.', 'simulations-empty'));
    return;
  }
  page.append(table(['simulation', 'batch size', 'created'], list.simulations.map(s =>
    [el('a', { href: `#/s/${s.id}` }, s.name), fmt(s.batch_size), s.created_at]), { id: 'simulations', num: [1] }));
}

function saturationText(r, maxW) {
  if (r.saturation_workers !== null && r.saturation_workers !== undefined && r.saturation_workers < maxW)
    return `saturates at ${r.saturation_workers} workers`;
  if (r.points.length < 2)
    return 'one value of W: saturation needs two or more';
  return `no saturation up to ${maxW} workers`;
}

function runResult(page, run) {
  const res = run.result;
  page.append(el('h2', {}, `Run #${run.id}: throughput against workers`), warningBadges(res.warnings, 'run-warnings'),
    el('p', { class: 'muted' }, `${res.units.samples_per_s} (${res.units.steps_per_s}, ×${fmt(res.batch_size)} samples per step); ` +
      `bandwidth ${fmt(res.bandwidth_bytes_per_s / 1e6)} MB/s, window ${res.flow_control ? fmt(res.win_bytes / 1e6) + ' MB' : 'off'}, ` +
      `${res.replications} replication(s), ${res.warmup_steps} warm-up step(s) left out.`));
  const ws = [...new Set(res.results.flatMap(r => r.points.map(p => p.workers)))].sort((a, b) => a - b);
  const maxW = Math.max(...ws);
  const box = el('div', { class: 'chart', id: 'chart-throughput' }, el('h3', {}, 'Samples per second (mean over replications)'));
  page.append(box);
  lineChart(box, 'throughput', { xs: ws, xlabel: 'workers W', ylabel: 'samples/s', yZero: true,
    series: res.results.map((r, k) => ({ label: `${r.servers} server(s)`, color: COLORS[k % COLORS.length], points: true,
      values: ws.map(w => { const p = r.points.find(q => q.workers === w); return p ? p.samples_per_s.mean : null; }) })) });
  page.append(el('ul', { id: 'saturation' }, res.results.map(r =>
    el('li', { 'data-servers': String(r.servers) }, `${r.servers} server(s): ${saturationText(r, maxW)}`))));
  const rows = [];
  for (const r of res.results)
    for (const p of r.points)
      rows.push([r.servers, p.workers, fmt(p.samples_per_s.mean),
        p.samples_per_s.interval ? `[${fmt(p.samples_per_s.interval[0])}, ${fmt(p.samples_per_s.interval[1])}]` : '–',
        `${fmt(100 * p.utilisation.worker, 3)}%`, fmt(p.step_time.total), fmt(p.step_time.compute),
        fmt(p.step_time.transfer), fmt(p.step_time.waiting)]);
  page.append(table(['servers', 'workers', 'samples/s', '95% interval', 'worker busy', 'step (s)', 'compute (s)', 'transfer (s)', 'waiting (s)'],
    rows, { id: 'run-table', num: [0, 1, 2, 4, 5, 6, 7, 8] }));
}

export async function simulationPage(page, id, runId) {
  const sim = await api(`/v1/simulations/${id}`);
  page.append(el('h1', {}, `${sim.name} `, el('span', { class: 'muted' }, '(asynchronous SGD simulation)')));
  page.append(el('h2', {}, 'Step graphs'));
  if (!sim.profiles.length)
    page.append(emptyNote('No step graph yet: POST one worker\'s step graph, TensorFlow timeline or Kineto trace to .../profiles.', 'profiles-empty'));
  else
    page.append(table(['profile', 'source', 'steps', 'operations', 'servers', 'uploaded'],
      sim.profiles.map(p => [`#${p.id}`, p.source, p.steps, p.ops, p.servers, p.created_at]), { id: 'sim-profiles', num: [2, 3, 4] }));
  const runs = await api(`/v1/simulations/${id}/runs` + query({ limit: 1000 }));
  page.append(el('h2', {}, 'Runs'));
  if (!runs.runs.length) {
    page.append(emptyNote('No run yet: POST {"workers":"1..16","servers":[1,2],"bandwidth":"10Gbit"} to .../runs.', 'runs-empty'));
    return;
  }
  page.append(table(['run', 'state', 'workers', 'servers', 'created'], runs.runs.map(r =>
    [el('a', { href: `#/s/${id}/runs/${r.id}` }, `#${r.id}`), r.state,
     (r.request.workers || []).join(','), (r.request.servers || []).join(','), r.created_at]), { id: 'sim-runs' }));
  const done = runs.runs.filter(r => r.state === 'done');
  const pick = runId ? Number(runId) : done.length ? done[done.length - 1].id : null;
  if (!pick) {
    page.append(emptyNote('No run has finished yet: the newest is ' + runs.runs[runs.runs.length - 1].state + '.', 'run-pending'));
    return;
  }
  const run = await api(`/v1/simulations/${id}/runs/${pick}`);
  if (run.state !== 'done') {
    page.append(emptyNote(`Run #${run.id} is ${run.state}${run.error ? ': ' + run.error : ''}.`, 'run-pending'));
    return;
  }
  runResult(page, run);
}
