// dashboard.test.mjs — the dashboard in a real browser: Debian's chromium
// driven by puppeteer-core. The fixture (tests/browser/fixture.c) starts a
// private PostgreSQL and `perfcast serve` with the example experiment
// uploaded as three commits; every page is opened, and what it plots is
// compared with what the API answers: the number of measured points, the
// model curves' values at two x positions (also against /predict), the
// scaling, cost, bottleneck and imbalance views, the history's regression
// mark. No console errors, the Content-Security-Policy header present, the
// token kept out of URLs, static paths confined.
//
//   node tests/browser/dashboard.test.mjs BUILD   (make test-browser)
// SCREENSHOTS=docs also writes docs/dashboard-<page>.png.
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';

const build = process.argv[2] || 'build';
let passed = 0, failed = 0;
function check(ok, what) {
  if (ok) passed++;
  else { failed++; console.error('FAIL', what); }
}
const close = (a, b, rel = 1e-9) => Number.isFinite(a) && Number.isFinite(b) &&
  Math.abs(a - b) <= rel * Math.max(Math.abs(a), Math.abs(b), 1e-300);

// the fixture: "PORT n EXPERIMENT id" on stdout once everything is fitted
const fixture = spawn(join(build, 'tests/browser_fixture'), [], {
  stdio: ['pipe', 'pipe', 'inherit'],
  env: { ...process.env, PERFCAST_BIN: process.env.PERFCAST_BIN || join(build, 'perfcast') },
});
const ready = await new Promise((resolve, reject) => {
  let out = '';
  fixture.stdout.on('data', d => {
    out += d;
    const m = /PORT (\d+) EXPERIMENT (\d+)/.exec(out);
    if (m) resolve({ port: Number(m[1]), exp: Number(m[2]) });
  });
  fixture.on('exit', code => reject(new Error(`fixture exited ${code}`)));
  setTimeout(() => reject(new Error('fixture: no server after 180 s')), 180000);
});
const base = `http://127.0.0.1:${ready.port}`;
const exp = ready.exp;
const get = async path => (await fetch(base + path)).json();
// one request with the path exactly as given (fetch would resolve "..")
const raw = path => new Promise((resolve, reject) => {
  const s = connect(ready.port, '127.0.0.1', () =>
    s.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`));
  let out = '';
  s.on('data', d => { out += d; });
  s.on('end', () => resolve({ status: Number(out.split(' ')[1]), text: out }));
  s.on('error', reject);
});

const profile = mkdtempSync(join(tmpdir(), 'perfcast-chromium-'));
const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync',
         `--user-data-dir=${profile}`, '--window-size=1280,900'],
});

const consoleErrors = [];
const requested = [];
const page = await browser.newPage();
await page.setViewport({ width: 1280, height: 900 });
page.on('console', m => { if (m.type() === 'error') consoleErrors.push(m.text()); });
page.on('pageerror', e => consoleErrors.push(String(e)));
page.on('request', r => requested.push(r.url()));

async function open(hash, shot) {
  await page.goto(`${base}/${hash}`, { waitUntil: 'load' });
  await page.waitForSelector('body[data-ready="yes"]', { timeout: 60000 });
  const errors = await page.$$eval('.error', es => es.map(e => e.textContent));
  check(errors.length === 0, `${hash}: no error boxes (${errors.join(' | ')})`);
  if (process.env.SCREENSHOTS)
    await page.screenshot({ path: join(process.env.SCREENSHOTS, `dashboard-${shot}.png`), fullPage: true });
}
const chart = id => page.evaluate(i => {
  const c = window.perfcastCharts[i];
  if (!c) return null;
  const { u, ...rest } = c; // the uPlot instance does not serialize
  return { ...rest, series: rest.series, drawnSeries: u ? u.series.length : 0 };
}, id);

try {
  // the page, its headers, the token form
  const resp = await page.goto(`${base}/`, { waitUntil: 'load' });
  const csp = resp.headers()['content-security-policy'] || '';
  check(csp.includes("default-src 'none'") && csp.includes("script-src 'self'") &&
        csp.includes("frame-ancestors 'none'"), `CSP header: "${csp}"`);
  check(resp.headers()['x-content-type-options'] === 'nosniff', 'nosniff');
  await page.waitForSelector('body[data-ready="yes"]');
  await page.type('#token', 'pcf_1_not-a-real-token');
  await page.click('#token-form button[type=submit]');
  await page.waitForSelector('body[data-ready="yes"]');
  const stored = await page.evaluate(() => sessionStorage.getItem('perfcast.token'));
  check(stored === 'pcf_1_not-a-real-token', 'token kept in sessionStorage');
  const refused = await page.$$eval('.error', es => es.map(e => e.textContent).join(' '));
  check(/token/i.test(refused), `an unknown token is refused and said so: "${refused}"`);
  // open mode: no token exists, so a token sent is checked and refused; forget it
  await page.click('#token-forget');
  await page.waitForSelector('body[data-ready="yes"]');
  check(await page.evaluate(() => sessionStorage.getItem('perfcast.token')) === null, 'token forgotten');
  consoleErrors.length = 0; // the refused token's 401 was expected

  // experiments list
  await open('#/', 'experiments');
  const rows = await page.$$eval('#experiments tbody tr', trs => trs.map(t => t.textContent));
  check(rows.length === 1 && rows[0].includes('cifar10-resnet50') && rows[0].includes('done'),
        `experiments list: ${rows.join(' | ')}`);

  // experiment: application stacked, one chart per callpath
  await open(`#/e/${exp}`, 'experiment');
  const models = await get(`/v1/experiments/${exp}/models?level=callpath&phase=epoch&metric=time`);
  const modeled = models.models.filter(m => m.function);
  const app = await chart('application');
  check(app && app.xs.length > 10, 'application chart drawn');
  for (const k of [3, app.xs.length - 5]) {
    const x = app.xs[k];
    const pr = await get(`/v1/experiments/${exp}/predict?ranks=${x}`);
    check(close(app.curve[k], pr.epoch.time), `epoch at ranks=${x}: plotted ${app.curve[k]}, predict ${pr.epoch.time}`);
    check(close(app.parts.comm[k], pr.comm.time), `comm at ranks=${x}: plotted ${app.parts.comm[k]}, predict ${pr.comm.time}`);
  }
  for (let n = 0; n < modeled.length; n++) {
    const c = await chart(`callpath-${n}`);
    const name = await page.$eval(`#chart-callpath-${n}`, e => e.dataset.callpath);
    const meas = await get(`/v1/experiments/${exp}/measurements?level=callpath&metric=time&phase=epoch&name=${encodeURIComponent(name)}`);
    check(c && c.measuredCount === meas.measurements.length && c.measuredCount === 5,
          `${name}: ${c && c.measuredCount} points plotted, the API has ${meas.measurements.length}`);
    for (const k of [1, c.xs.length - 2]) {
      const x = c.xs[k];
      const api = await get(`/v1/experiments/${exp}/curve?name=${encodeURIComponent(name)}&values=${x}`);
      check(close(c.curve[k], api.points[0].value), `${name} at ${x}: plotted ${c.curve[k]}, API ${api.points[0].value}`);
      check(close(c.hi[k], api.points[0].interval[1]), `${name} band at ${x}`);
    }
    check(c.extrapolationFrom === 40, `${name}: extrapolation from 4 x 10 ranks (${c.extrapolationFrom})`);
    // the model's diagnostics and its coded warnings, a badge per code
    const m = modeled.find(x => x.callpath === name);
    const diag = await page.$eval(`#chart-callpath-${n} .diag`, e => e.textContent).catch(() => '');
    check(m && /SMAPE/.test(diag) && diag.includes(`${m.diagnostics.parameters.ranks.distinct} values`),
          `${name}: diagnostics shown: "${diag}"`);
    const badges = await page.$$eval(`#warnings-callpath-${n} .badge`, bs => bs.map(b => b.dataset.code));
    check(m && badges.join() === m.warnings.map(w => w.code).join(), `${name}: badges ${badges.join()} are the API's warnings`);
  }
  check(modeled.length === 4, `4 callpath charts (${modeled.length})`);
  // the log-axes toggle redraws
  await page.click('#log');
  await page.waitForFunction(() => document.querySelectorAll('.chart').length >= 5);
  await page.waitForFunction(() => window.perfcastCharts['callpath-3'] && window.perfcastCharts['callpath-3'].u.scales.x.distr === 3);
  check(true, 'log axes');

  // scaling and cost
  await open(`#/e/${exp}/scaling`, 'scaling');
  const sp = await chart('speedup');
  const xs2 = [sp.xs[2], sp.xs[sp.xs.length - 3]];
  const sc = await get(`/v1/experiments/${exp}/scaling?values=${xs2.join(',')}`);
  check(close(sp.series.predicted[2], sc.points[0].speedup.value) &&
        close(sp.series.predicted[sp.xs.length - 3], sc.points[1].speedup.value), 'speedup equals the API');
  const cost = await chart('cost');
  check(cost && cost.series.recommended.filter(v => v !== null).length === 1, 'one recommended point');
  check(cost && cost.series['Pareto front'].some(v => v !== null), 'a Pareto front');
  const bn = await page.$$eval('#bottlenecks tbody tr', trs => trs.map(t => t.children[1].textContent));
  const apiBn = await get(`/v1/experiments/${exp}/bottlenecks?at=ranks:80&limit=15`);
  // the answer's warnings as badges: 80 ranks is 8x the largest measured, so extrapolation_far
  const bnBadges = await page.$$eval('#warnings-bottlenecks .badge', bs => bs.map(b => b.dataset.code));
  check(bnBadges.includes('extrapolation_far') && bnBadges.length === apiBn.warnings.length,
        `bottleneck warnings shown as badges: ${bnBadges.join()}`);
  check(bn.join() === apiBn.callpaths.map(c => c.callpath).join(), `bottleneck order: ${bn.join()}`);
  const hm = await chart('imbalance');
  const m10 = (await get(`/v1/experiments/${exp}/measurements?level=callpath&metric=time&phase=epoch&name=relu_kernel`))
    .measurements.find(m => m.point.ranks === 10);
  const row = hm ? hm.rows.indexOf('relu_kernel') : -1;
  check(row >= 0 && m10 && hm.values[row].every((v, j) => v === m10.ranks[j].value), 'heatmap values are the API\'s per-rank values');
  check(hm && hm.rows.length === 4 && hm.cols.length === 2, `heatmap 4 callpaths x 2 ranks (${hm && hm.rows.length}x${hm && hm.cols.length})`);

  // history: four commits, the third a regression, the fourth its fix
  await open(`#/e/${exp}/history`, 'history');
  const hist = await page.$$eval('#history tbody tr', trs => trs.map(t => ({ commit: t.dataset.commit, bad: t.classList.contains('regression'), text: t.textContent })));
  check(hist.map(h => h.commit).join() === 'ex-base,ex-same,ex-slow,ex-fix', `history commits: ${JSON.stringify(hist)}`);
  check(hist.length === 4 && !hist[1].bad && hist[2].bad && !hist[3].bad && /improvement/.test(hist[3].text),
        'ex-slow marked as a regression, ex-same not, ex-fix an improvement');
  const reg = await get(`/v1/experiments/${exp}/regressions?base=ex-same&head=ex-slow`);
  const regEpoch = reg.application.find(a => a.name === 'epoch').at.head.value;
  const histChart = await chart('history');
  check(close(histChart.series['epoch at target'][2], regEpoch), `history epoch at target equals /regressions (${regEpoch})`);
  const hc = await chart('history');
  check(hc && hc.series.regression.filter(v => v !== null).length === 1, 'one regression point in the chart');

  check(consoleErrors.length === 0, `console errors: ${consoleErrors.join(' | ')}`);
  check(!requested.some(u => u.includes('pcf_')), 'no token in any URL');

  // static paths stay in the web folder
  for (const p of ['/../Makefile', '/%2e%2e/Makefile', '/js%2f..%2f..%2fMakefile', '/index.html%00.png', '/.git/config', '/js/../../Makefile']) {
    const r = await raw(p);
    check(r.status === 400 && !r.text.includes('LIB_SRC'), `${p}: ${r.status}`);
  }
} catch (err) {
  check(false, `unexpected: ${err && err.stack ? err.stack : err}`);
} finally {
  await browser.close();
  rmSync(profile, { recursive: true, force: true });
  fixture.stdin.end();
  await new Promise(r => fixture.on('exit', r));
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
