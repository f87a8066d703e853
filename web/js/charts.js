// charts.js — the dashboard's plots on uPlot (web/vendor/uplot, pinned):
// a model with its measured points, repetition spread, 95% band and the
// extrapolation region; the application parts stacked (with the imbalance
// part when the epoch has one); plain line and
// scatter charts; and a heatmap on a canvas. Every chart is registered in
// window.perfcastCharts under its id with the data it plots, so that a
// browser test can compare what is drawn with what the API answers.
import uPlot from '../vendor/uplot/uPlot.esm.js';
import { el, fmt } from './dom.js';

const COLORS = { comp: '#2f6fdf', comm: '#e8833a', mem: '#3aa26b', imbalance: '#8a4fc7', epoch: '#1d2430',
                 model: '#2f6fdf', band: 'rgba(47,111,223,0.16)', measured: '#1d2430',
                 spread: '#667085', extrap: 'rgba(120,120,120,0.12)', bad: '#c0262d' };
// opaque fills: each stacked part paints over the one above it
const FILLS = { comp: '#b9cff7', comm: '#f7d3b3', mem: '#b7e3c9', imbalance: '#dccbf0' };

window.perfcastCharts = window.perfcastCharts || {};

function register(id, info) {
  window.perfcastCharts[id] = info;
}

function width(container) {
  return Math.max(320, Math.min(container.clientWidth || 540, 1100) - 16);
}

// log scales cannot show values <= 0: those are left out of the drawing
function forLog(values, log) {
  return log ? values.map(v => (v !== null && v > 0 ? v : null)) : values;
}

function scale(log) {
  return log ? { distr: 3, log: 10 } : { distr: 1 };
}

// Shades x >= from (the region beyond 4x the largest measured value).
function shadeFrom(from) {
  return u => {
    if (!(from > 0)) return;
    const { ctx, bbox } = u;
    const x0 = Math.max(bbox.left, u.valToPos(from, 'x', true));
    if (x0 >= bbox.left + bbox.width) return;
    ctx.save();
    ctx.fillStyle = COLORS.extrap;
    ctx.fillRect(x0, bbox.top, bbox.left + bbox.width - x0, bbox.height);
    ctx.fillStyle = '#667085';
    ctx.font = `${Math.round(11 * devicePixelRatio)}px sans-serif`;
    ctx.fillText('extrapolation (> 4× measured)', x0 + 4 * devicePixelRatio,
                 bbox.top + 12 * devicePixelRatio);
    ctx.restore();
  };
}

// Vertical whiskers from min to max at every measured point.
function whiskers(xs, mins, maxs) {
  return u => {
    const { ctx } = u;
    ctx.save();
    ctx.strokeStyle = COLORS.spread;
    ctx.lineWidth = 1.5 * devicePixelRatio;
    for (let i = 0; i < xs.length; i++) {
      if (mins[i] === null || maxs[i] === null) continue;
      const x = u.valToPos(xs[i], 'x', true);
      const y0 = u.valToPos(mins[i], 'y', true), y1 = u.valToPos(maxs[i], 'y', true);
      if (!Number.isFinite(y0) || !Number.isFinite(y1)) continue;
      ctx.beginPath();
      ctx.moveTo(x, y0);
      ctx.lineTo(x, y1);
      ctx.moveTo(x - 4 * devicePixelRatio, y0);
      ctx.lineTo(x + 4 * devicePixelRatio, y0);
      ctx.moveTo(x - 4 * devicePixelRatio, y1);
      ctx.lineTo(x + 4 * devicePixelRatio, y1);
      ctx.stroke();
    }
    ctx.restore();
  };
}

const noLine = () => null;

// A model: curve = /curve's answer (points with value and interval; its xs
// include the measured ones), measured = [{x, value, min, max}].
export function modelChart(container, id, { curve, measured, log, xlabel, ylabel }) {
  const xs = curve.points.map(p => p.x);
  const at = new Map(measured.map(m => [m.x, m]));
  const meas = xs.map(x => (at.has(x) ? at.get(x).value : null));
  const mins = xs.map(x => (at.has(x) ? at.get(x).min : null));
  const maxs = xs.map(x => (at.has(x) ? at.get(x).max : null));
  const ys = curve.points.map(p => p.value);
  const lo = curve.points.map(p => (p.interval ? p.interval[0] : p.value));
  const hi = curve.points.map(p => (p.interval ? p.interval[1] : p.value));
  const opts = {
    width: width(container), height: 280,
    scales: { x: { time: false, ...scale(log) }, y: scale(log) },
    axes: [{ label: xlabel }, { label: ylabel, size: 60 }],
    series: [
      { label: xlabel, value: (u, v) => fmt(v) },
      { label: 'measured (median)', stroke: COLORS.measured, paths: noLine,
        points: { show: true, size: 7, fill: COLORS.measured }, value: (u, v) => fmt(v) },
      { label: 'model', stroke: COLORS.model, width: 2, points: { show: false },
        value: (u, v) => fmt(v) },
      { label: '95% low', stroke: 'rgba(47,111,223,0.35)', width: 1, dash: [4, 4],
        points: { show: false }, value: (u, v) => fmt(v) },
      { label: '95% high', stroke: 'rgba(47,111,223,0.35)', width: 1, dash: [4, 4],
        points: { show: false }, value: (u, v) => fmt(v) },
      { label: 'repetitions min', show: true, stroke: COLORS.spread, paths: noLine,
        points: { show: true, size: 3, fill: COLORS.spread }, value: (u, v) => fmt(v) },
      { label: 'repetitions max', show: true, stroke: COLORS.spread, paths: noLine,
        points: { show: true, size: 3, fill: COLORS.spread }, value: (u, v) => fmt(v) },
    ],
    bands: [{ series: [4, 3], fill: COLORS.band }],
    hooks: { drawClear: [shadeFrom(curve.extrapolation_from)], draw: [whiskers(xs, forLog(mins, log), forLog(maxs, log))] },
  };
  const data = [xs, forLog(meas, log), forLog(ys, log), forLog(lo, log), forLog(hi, log),
                forLog(mins, log), forLog(maxs, log)];
  const u = new uPlot(opts, data, container);
  register(id, { kind: 'model', u, xs, measuredCount: meas.filter(v => v !== null).length,
                 curve: ys, lo, hi, extrapolationFrom: curve.extrapolation_from });
  return u;
}

// The application parts stacked (comp, comm, mem; each a /curve answer on
// the same xs) under the composed epoch with its band. parts.imbalance, when
// given (points with value and interval on the same xs), is stacked on top:
// what the slowest rank adds to the parts, so that the stack is the epoch.
export function stackedChart(container, id, { parts, epoch, log, xlabel, ylabel }) {
  const xs = epoch.points.map(p => p.x);
  const names = ['comp', 'comm', 'mem', ...(parts.imbalance ? ['imbalance'] : [])];
  const raw = names.map(n => parts[n].points.map(p => p.value));
  const cum = [];
  let run = xs.map(() => 0);
  for (const r of raw) {
    run = run.map((v, i) => v + (r[i] ?? 0));
    cum.push(run.slice());
  }
  const ys = epoch.points.map(p => p.value);
  const lo = epoch.points.map(p => (p.interval ? p.interval[0] : p.value));
  const hi = epoch.points.map(p => (p.interval ? p.interval[1] : p.value));
  // drawn top-down so that each part paints over the one above it
  const order = names.map((_, k) => k).reverse();
  const series = [{ label: xlabel, value: (u, v) => fmt(v) }];
  const data = [xs];
  for (const k of order) {
    // the imbalance part's legend value also says its share of the epoch
    const share = i => (names[k] === 'imbalance' && raw[k][i] !== null && ys[i] > 0
      ? ` (${fmt(100 * raw[k][i] / ys[i], 3)}%)` : '');
    series.push({ label: names[k], stroke: COLORS[names[k]], fill: FILLS[names[k]],
                  width: 1, points: { show: false },
                  value: (u, v, si, i) => (i === null ? '–' : fmt(raw[k][i]) + share(i)) });
    data.push(forLog(cum[k], log));
  }
  series.push({ label: 'epoch (composed)', stroke: COLORS.epoch, width: 2, dash: [6, 3],
                points: { show: false }, value: (u, v) => fmt(v) });
  data.push(forLog(ys, log));
  series.push({ label: '95% low', stroke: 'rgba(0,0,0,0.3)', width: 1, points: { show: false },
                value: (u, v) => fmt(v) });
  series.push({ label: '95% high', stroke: 'rgba(0,0,0,0.3)', width: 1, points: { show: false },
                value: (u, v) => fmt(v) });
  data.push(forLog(lo, log), forLog(hi, log));
  // stacked areas are read from zero: the linear y axis starts there
  const yScale = log ? scale(log) : { distr: 1, range: (u, min, max) => [0, max * 1.05] };
  const band = names.length + 1; // the epoch's series; its low and high follow
  const u = new uPlot({
    width: width(container), height: 300,
    scales: { x: { time: false, ...scale(log) }, y: yScale },
    axes: [{ label: xlabel }, { label: ylabel, size: 60 }],
    series, bands: [{ series: [band + 2, band + 1], fill: 'rgba(0,0,0,0.08)' }],
    hooks: { drawClear: [shadeFrom(epoch.extrapolation_from)] },
  }, data, container);
  register(id, { kind: 'stacked', u, xs, curve: ys, legend: series.slice(1).map(s => s.label),
                 parts: Object.fromEntries(names.map((n, k) => [n, raw[k]])),
                 intervals: Object.fromEntries(names.map(n => [n, parts[n].points.map(p => p.interval ?? null)])) });
  return u;
}

// Lines over one x: series = [{label, values, color, dash, points}].
// xLabels: names of x = 1, 2, ... (an axis of categories such as commits).
// yZero: the y axis starts at 0 (values that are amounts: times, money).
export function lineChart(container, id, { xs, series, log, xlabel, ylabel, shade, xLabels, yZero }) {
  const s = [{ label: xlabel, value: (u, v) => fmt(v) }];
  const data = [xs];
  for (const c of series) {
    s.push({ label: c.label, stroke: c.color, width: c.width ?? 2, dash: c.dash,
             paths: c.noLine ? noLine : undefined, spanGaps: !!c.spanGaps,
             points: c.points ? { show: true, size: c.size ?? 7, fill: c.color } : { show: false },
             value: (u, v) => fmt(v) });
    data.push(forLog(c.values, log));
  }
  const u = new uPlot({
    width: width(container), height: 280,
    scales: { x: { time: false, ...scale(log) },
              y: !log && yZero ? { distr: 1, range: (u, min, max) => [0, (max > 0 ? max : 1) * 1.05] } : scale(log) },
    axes: [xLabels ? { label: xlabel, incrs: [1], values: (u, splits) =>
      splits.map(v => (Number.isInteger(v) && xLabels[v - 1] !== undefined ? xLabels[v - 1] : '')) }
      : { label: xlabel }, { label: ylabel, size: 60 }],
    series: s, hooks: shade ? { drawClear: [shadeFrom(shade)] } : {},
  }, data, container);
  register(id, { kind: 'line', u, xs, series: Object.fromEntries(series.map(c => [c.label, c.values])) });
  return u;
}

// A heatmap: rows x cols of values, colored by value / mean of the row.
export function heatmap(container, id, { rows, cols, values, title }) {
  const cell = 64, rowh = 26, left = 300, top = 24;
  const canvas = el('canvas');
  const w = left + cols.length * cell + 10, h = top + rows.length * rowh + 10;
  canvas.width = w * devicePixelRatio;
  canvas.height = h * devicePixelRatio;
  canvas.style.width = w + 'px';
  canvas.style.height = h + 'px';
  const ctx = canvas.getContext('2d');
  ctx.scale(devicePixelRatio, devicePixelRatio);
  ctx.font = '11px sans-serif';
  ctx.fillStyle = '#1d2430';
  cols.forEach((c, j) => ctx.fillText(`rank ${c}`, left + j * cell + 8, top - 8));
  const rel = values.map(r => {
    const xs = r.filter(v => v !== null);
    const mean = xs.reduce((a, b) => a + b, 0) / (xs.length || 1);
    return r.map(v => (v === null || !(mean > 0) ? null : v / mean));
  });
  rows.forEach((name, i) => {
    ctx.fillStyle = '#1d2430';
    const label = name.length > 44 ? name.slice(0, 43) + '…' : name;
    ctx.fillText(label, 4, top + i * rowh + 17);
    rel[i].forEach((r, j) => {
      // 1 = the row's mean (white); above: red, below: blue, full at ±10%
      let color = '#eeeeee';
      if (r !== null) {
        const d = Math.max(-1, Math.min(1, (r - 1) / 0.1));
        const a = Math.round(Math.abs(d) * 200);
        color = d >= 0 ? `rgb(255,${255 - a},${255 - a})` : `rgb(${255 - a},${255 - a},255)`;
      }
      ctx.fillStyle = color;
      ctx.fillRect(left + j * cell, top + i * rowh, cell - 2, rowh - 2);
      ctx.strokeStyle = '#d0d5dd';
      ctx.strokeRect(left + j * cell + 0.5, top + i * rowh + 0.5, cell - 3, rowh - 3);
      if (r !== null) {
        const pct = (r - 1) * 100;
        ctx.fillStyle = '#1d2430';
        ctx.fillText(`${pct >= 0 ? '+' : ''}${pct.toFixed(2)}%`, left + j * cell + 6, top + i * rowh + 17);
      }
    });
  });
  container.append(el('div', { class: 'legend-note' }, title), canvas);
  register(id, { kind: 'heatmap', rows, cols, values, relative: rel });
  return canvas;
}
