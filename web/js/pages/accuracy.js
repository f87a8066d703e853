// accuracy.js — how far the models held on points they were not fitted to:
// the held-out (evaluation) uploads measured against the predictions, per
// application part and per callpath, beside the error on the modeling
// points themselves (GET /accuracy, Extra-Deep §4). Every number is the API's.
import { api, query } from '../api.js';
import { el, fmt } from '../dom.js';
import { lineChart } from '../charts.js';
import { warningBadges, emptyNote, table } from '../widgets.js';

function pointText(p) {
  return Object.entries(p || {}).map(([k, v]) => `${k}=${fmt(v)}`).join(', ');
}

export async function accuracyPage(page, id) {
  const exp = await api(`/v1/experiments/${id}`);
  page.append(el('h1', {}, `${exp.name}: accuracy on held-out points`));
  const a = await api(`/v1/experiments/${id}/accuracy` + query({ metric: 'time' }));
  page.append(warningBadges(a.warnings, 'accuracy-warnings'));
  const entries = [...a.application.map(e => ({ ...e, level: 'application' })),
                   ...a.callpaths.map(e => ({ ...e, level: 'callpath' }))];
  if (!(a.evaluation_points || []).length) {
    page.append(emptyNote('No held-out point: upload profiles with ?use=evaluation (they are measured against the ' +
      'models, never fitted) to see how far the predictions hold.', 'accuracy-empty'));
  } else {
    page.append(el('p', { id: 'accuracy-summary' }, `Held-out point(s): ${a.evaluation_points.map(pointText).join('; ')}. ` +
      `Median error over the callpaths: ${fmt(a.callpaths_median_evaluation_error_pct, 3)}%.`));
    const rows = [];
    const measured = [], predicted = [];
    for (const e of entries)
      for (const p of e.evaluation.points) {
        rows.push([`${e.level === 'application' ? 'application: ' : ''}${e.name}`, pointText(p.point), fmt(p.measured),
                   fmt(p.predicted), `${fmt(p.error_pct, 3)}%`]);
        measured.push(p.measured);
        predicted.push(p.predicted);
      }
    page.append(table(['name', 'held-out point', 'measured (s)', 'predicted (s)', 'error'], rows,
      { id: 'accuracy-table', num: [2, 3, 4] }));
    // predicted against measured: on the diagonal when the model holds
    const order = measured.map((m, i) => i).sort((x, y) => measured[x] - measured[y]);
    const box = el('div', { class: 'chart', id: 'chart-accuracy' }, el('h3', {}, 'Predicted against measured on the held-out points (s per epoch)'));
    page.append(box);
    lineChart(box, 'accuracy', { xs: order.map(i => measured[i]), xlabel: 'measured (s)', ylabel: 'predicted (s)', yZero: true,
      series: [{ label: 'predicted', values: order.map(i => predicted[i]), color: '#2f6fdf', noLine: true, points: true, size: 8 },
               { label: 'exact (y = x)', values: order.map(i => measured[i]), color: '#667085', dash: [5, 5], width: 1 }] });
  }
  page.append(el('h2', {}, 'On the modeling points'),
    table(['name', 'function', 'median error (modeling)', 'median error (held out)'],
      entries.map(e => [`${e.level === 'application' ? 'application: ' : ''}${e.name}`, e.function ?? 'not modeled',
        e.modeling.median_error_pct === null ? '–' : `${fmt(e.modeling.median_error_pct, 3)}%`,
        e.evaluation.median_error_pct === null ? '–' : `${fmt(e.evaluation.median_error_pct, 3)}%`]),
      { id: 'accuracy-models', num: [2, 3] }));
}
