// dashboard.test.mjs — the dashboard in a real browser: Debian's chromium
// driven by puppeteer-core. The fixture (tests/browser/fixture.c) starts a
// private PostgreSQL and `perfcast serve` with the example experiment
// uploaded as three commits; every page is opened, and what it plots is
// compared with what the API answers: the number of measured points, the
// model curves' values at two x positions (also against /predict), the
// scaling, cost, bottleneck and imbalance views (each ranked callpath's
// warnings as badges in its row), the history's regression mark; on an
// experiment whose ranks are not alike, the epoch's imbalance part stacked
// on the parts and listed at two points against /predict, the stack adding up
// to the epoch, and epoch_imbalance's share on its badges. No console errors, the Content-Security-Policy header present, the
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
    const m = /PORT (\d+) EXPERIMENT (\d+) TRACES (\d+) SIMULATION (\d+) RUN (\d+) SWEEP (\d+) IMBALANCE (\d+)/.exec(out);
    if (m) resolve({ port: Number(m[1]), exp: Number(m[2]), traces: Number(m[3]), sim: Number(m[4]),
                     run: Number(m[5]), sweep: Number(m[6]), imb: Number(m[7]) });
  });
  fixture.on('exit', code => reject(new Error(`fixture exited ${code}`)));
  setTimeout(() => reject(new Error('fixture: no server after 180 s')), 180000);
});
const base = `http://127.0.0.1:${ready.port}`;
const exp = ready.exp;
const get = async path => (await fetch(base + path)).json();
const post = async (path, body) => (await fetch(base + path, {
  method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })).json();
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
// a table's rows: the callpath, and the code and tooltip of each badge in it
const rowBadges = table => page.$$eval(`${table} tbody tr`, trs => trs.map(t => ({
  callpath: t.dataset.callpath,
  codes: [...t.querySelectorAll('.badge')].map(b => b.dataset.code),
  titles: [...t.querySelectorAll('.badge')].map(b => b.title) })));
// rows against the API's items, in order: the same callpath, the item's
// warning codes as badges (none where it has none), each message in its tooltip
function checkRowBadges(rows, items, what) {
  check(rows.length === items.length, `${what}: ${rows.length} rows, the API has ${items.length} items`);
  items.forEach((c, k) => {
    const r = rows[k] || { codes: [], titles: [] };
    const codes = (c.warnings || []).map(w => w.code);
    check(r.callpath === c.callpath && r.codes.join() === codes.join() &&
          (c.warnings || []).every((w, j) => (r.titles[j] || '').includes(w.message)),
          `${what} row ${k} (${c.callpath}): badges [${r.codes.join()}], the API's item [${codes.join()}]`);
  });
}
const chart = id => page.evaluate(i => {
  const c = window.perfcastCharts[i];
  if (!c) return null;
  const { u, ...rest } = c; // the uPlot instance does not serialize
  return { ...rest, series: rest.series, drawnSeries: u ? u.series.length : 0, yMin: u ? u.scales.y.min : null };
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
  const exRow = rows.find(r => r.includes('cifar10-resnet50'));
  check(rows.length === 4 && exRow && exRow.includes('done'), `experiments list: ${rows.join(' | ')}`);

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
    check(pr.imbalance === undefined && pr.epoch.composed_from.join() === 'comp,comm,mem',
          `ranks alike at ranks=${x}: predict has no imbalance part (${pr.epoch.composed_from})`);
  }
  // no imbalance part: three parts stacked, no parts table, no such badge
  check(Object.keys(app.parts).join() === 'comp,comm,mem' && !(app.legend || []).includes('imbalance') &&
        await page.$('#application-parts') === null && await page.$('.badge[data-code="epoch_imbalance"]') === null,
        `without imbalance nothing about it is shown (parts ${Object.keys(app.parts).join()})`);
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
  // weak scaling: one efficiency chart (speedup T1/Tk is the same ratio), said so
  check(await chart('speedup') === null && await page.$('#weak-note') !== null,
        'weak scaling: no second, identical speedup chart, and a note saying why');
  const sp = await chart('efficiency');
  const xs2 = [sp.xs[2], sp.xs[sp.xs.length - 3]];
  const sc = await get(`/v1/experiments/${exp}/scaling?values=${xs2.join(',')}`);
  check(close(sp.series.predicted[2], sc.points[0].efficiency.value) &&
        close(sp.series.predicted[sp.xs.length - 3], sc.points[1].efficiency.value), 'efficiency equals the API');
  check(sp.yMin === 0, `efficiency axis starts at 0 (${sp.yMin})`);
  const cost = await chart('cost');
  check(cost && cost.series.recommended.filter(v => v !== null).length === 1, 'one recommended point');
  check(cost && cost.series['Pareto front'].some(v => v !== null), 'a Pareto front');
  check(cost && cost.yMin === 0, `cost axis starts at 0 (${cost && cost.yMin})`);
  const costTitle = await page.$eval('#chart-cost h3', e => e.textContent);
  check(/price units/.test(costTitle), `the cost names its unit of money: "${costTitle}"`);
  const paretoRows = await page.$$eval('#pareto tr', trs => trs.length - 1);
  check(paretoRows >= 1 && paretoRows === cost.series['Pareto front'].filter(v => v !== null).length,
        `the Pareto front listed point by point (${paretoRows})`);
  const extrap = await page.$eval('#bottlenecks-extrapolated', e => e.textContent).catch(() => '');
  check(/8× the largest measured/.test(extrap), `bottlenecks at 8x marked as extrapolated: "${extrap}"`);
  const bn = await page.$$eval('#bottlenecks tbody tr', trs => trs.map(t => t.children[1].textContent));
  const apiBn = await get(`/v1/experiments/${exp}/bottlenecks?at=ranks:80&limit=15`);
  // the answer's warnings as badges: 80 ranks is 8x the largest measured, so extrapolation_far
  const bnBadges = await page.$$eval('#warnings-bottlenecks .badge', bs => bs.map(b => b.dataset.code));
  check(bnBadges.includes('extrapolation_far') && bnBadges.length === apiBn.warnings.length,
        `bottleneck warnings shown as badges: ${bnBadges.join()}`);
  check(bn.join() === apiBn.callpaths.map(c => c.callpath).join(), `bottleneck order: ${bn.join()}`);
  // each ranked callpath's own warnings as badges in its row: the codes of
  // the API's item, its messages as tooltips, none in a row whose item has none
  const bnRows = await rowBadges('#bottlenecks');
  check(apiBn.callpaths.some(c => c.warnings.length > 0), 'a bottleneck item carries warnings (the check below can fail)');
  checkRowBadges(bnRows, apiBn.callpaths, 'bottleneck');
  const hm = await chart('imbalance');
  const m10 = (await get(`/v1/experiments/${exp}/measurements?level=callpath&metric=time&phase=epoch&name=relu_kernel`))
    .measurements.find(m => m.point.ranks === 10);
  const row = hm ? hm.rows.indexOf('relu_kernel') : -1;
  check(row >= 0 && m10 && hm.values[row].every((v, j) => v === m10.ranks[j].value), 'heatmap values are the API\'s per-rank values');
  check(hm && hm.rows.length === 4 && hm.cols.length === 2, `heatmap 4 callpaths x 2 ranks (${hm && hm.rows.length}x${hm && hm.cols.length})`);
  // the LIF table: the answer's warnings above it, each callpath's in its row
  const apiLif = await get(`/v1/experiments/${exp}/imbalance?limit=50`);
  const lifTop = await page.$$eval('#warnings-imbalance .badge', bs => bs.map(b => b.dataset.code));
  check(lifTop.join() === apiLif.warnings.map(w => w.code).join(), `imbalance warnings shown as badges: ${lifTop.join()}`);
  checkRowBadges(await rowBadges('#lif'), apiLif.callpaths, 'imbalance');
  check([...apiBn.callpaths, ...apiLif.callpaths].some(c => c.warnings.length === 0),
        'an item without warnings (its row must show none)');

  // load imbalance: one rank's comm 1.3x the others', so the epoch (the
  // slowest rank's) is comp + comm + mem + imbalance (tests/test_api_epoch.c)
  await open(`#/e/${ready.imb}`, 'experiment-imbalance');
  const ai = await chart('application');
  check(ai && ai.parts.imbalance && (ai.legend || []).includes('imbalance'), `the imbalance part stacked with its legend entry (${ai && ai.legend})`);
  const title = await page.$eval('#chart-application h3', e => e.textContent);
  check(/comp \+ comm \+ mem \+ imbalance/.test(title), `the title names the imbalance part: "${title}"`);
  // the stack adds up to the epoch drawn at every x, and the epoch is predict's
  const sums = ai && ai.parts.imbalance ? ai.xs.map((_, k) => ai.parts.comp[k] + ai.parts.comm[k] + ai.parts.mem[k] + ai.parts.imbalance[k]) : [];
  const bad = sums.length ? ai.xs.filter((_, k) => !close(sums[k], ai.curve[k], 1e-12)) : [null];
  check(ai && ai.xs.length > 10 && bad.length === 0, `comp + comm + mem + imbalance is the epoch drawn (not at ${bad.join()})`);
  const at32 = ai ? ai.xs.indexOf(32) : -1;
  check(at32 > 0, 'the largest measured value is on the x axis');
  for (const k of ai ? [1, at32, ai.xs.length - 1] : []) {
    const x = ai.xs[k];
    const pr = await get(`/v1/experiments/${ready.imb}/predict?ranks=${x}`);
    check(pr.imbalance && pr.epoch.composed_from.includes('imbalance'), `predict at ranks=${x} has an imbalance part`);
    check(ai.parts.imbalance && close(ai.parts.imbalance[k], pr.imbalance.time) && close(ai.curve[k], pr.epoch.time),
          `at ranks=${x}: imbalance ${(ai.parts.imbalance || [])[k]} and epoch ${ai.curve[k]} plotted, predict ${pr.imbalance.time} and ${pr.epoch.time}`);
    check(ai.intervals && ai.intervals.imbalance[k] && close(ai.intervals.imbalance[k][0], pr.imbalance.interval[0]) &&
          close(ai.intervals.imbalance[k][1], pr.imbalance.interval[1]), `the imbalance part's interval at ranks=${x} is predict's`);
  }
  // the parts at the largest measured value and 4x it: predict's numbers
  const cells = await page.$$eval('#parts tbody tr', trs => Object.fromEntries(trs.map(t => [t.dataset.part,
    [...t.querySelectorAll('td[data-value]')].map((c, j) => ({ value: Number(c.dataset.value), lo: Number(c.dataset.lo),
      hi: Number(c.dataset.hi), share: Number(t.querySelectorAll('td[data-share]')[j].dataset.share), text: c.textContent })) ])));
  const shareText = v => `${Number((100 * v).toPrecision(3))}%`;
  const prs = [await get(`/v1/experiments/${ready.imb}/predict?ranks=32`), await get(`/v1/experiments/${ready.imb}/predict?ranks=128`)];
  prs.forEach((pr, j) => {
    const c = part => (cells[part] || [])[j] || {};
    const im = c('imbalance');
    check(close(im.value, pr.imbalance.time) && close(im.lo, pr.imbalance.interval[0]) && close(im.hi, pr.imbalance.interval[1]) &&
          close(im.share, pr.imbalance.share), `parts table at ranks=${pr.point.ranks}: imbalance ${JSON.stringify(im)}, predict ${JSON.stringify(pr.imbalance)}`);
    check(close(c('comp').value, pr.comp.time) && close(c('comm').value, pr.comm.time) && close(c('mem').value, pr.mem.time) &&
          close(c('epoch').value, pr.epoch.time) && close(c('parts_sum').value, pr.imbalance.parts_sum.value),
          `parts table at ranks=${pr.point.ranks}: comp, comm, mem, their sum and the epoch are predict's`);
    check(close(c('comp').value + c('comm').value + c('mem').value + im.value, c('epoch').value, 1e-12),
          `parts table at ranks=${pr.point.ranks}: the parts shown add up to the epoch shown`);
    check(close(pr.imbalance.share, pr.imbalance.time / pr.epoch.time) && pr.imbalance.share > 0.15,
          `the imbalance part's share at ranks=${pr.point.ranks} is large (${pr.imbalance.share})`);
  });
  // epoch_imbalance as badges with its share: on the models page (predict's
  // at both points) and on the scaling page (the scaling answer's)
  const eiBadges = await page.$$eval('#warnings-epoch-imbalance .badge', bs => bs.map(b => ({ code: b.dataset.code, share: Number(b.dataset.share), text: b.textContent })));
  const eiApi = prs.map(pr => pr.warnings.find(w => w.code === 'epoch_imbalance'));
  check(eiApi.every(w => w) && eiBadges.length === 2 && eiBadges.every((b, j) => b.code === 'epoch_imbalance' &&
        close(b.share, eiApi[j].share) && b.text.includes(shareText(eiApi[j].share))),
        `epoch_imbalance badges with their shares: ${JSON.stringify(eiBadges)}`);
  await open(`#/e/${ready.imb}/scaling`, 'scaling-imbalance');
  const scI = await get(`/v1/experiments/${ready.imb}/scaling?values=${(await chart('efficiency')).xs.join(',')}`);
  const scW = scI.warnings.find(w => w.code === 'epoch_imbalance');
  const scB = await page.$$eval('#warnings-scaling .badge[data-code="epoch_imbalance"]', bs => bs.map(b => ({ share: Number(b.dataset.share), text: b.textContent })));
  check(scW && scB.length === 1 && close(scB[0].share, scW.share) && scB[0].text.includes(shareText(scW.share)),
        `scaling: epoch_imbalance badge with its share ${JSON.stringify(scB)}, the API ${scW && scW.share}`);

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
  check(hc && hc.yMin === 0, `history axis starts at 0 (${hc && hc.yMin})`);
  // the parts beside the epoch, each commit's from its comparison (the first
  // commit's from the base side of the first), in the chart and the table
  const reg0 = await get(`/v1/experiments/${exp}/regressions?base=ex-base&head=ex-same`);
  const histCells = await page.$$eval('#history tbody tr', trs => trs.map(t =>
    Object.fromEntries([...t.querySelectorAll('td[data-part]')].map(td => [td.dataset.part, td.textContent]))));
  for (const part of ['comp', 'comm', 'mem']) {
    const want = [reg0.application.find(a => a.name === part).at.base.value,
                  reg0.application.find(a => a.name === part).at.head.value,
                  reg.application.find(a => a.name === part).at.head.value];
    const got = hc && hc.series[`${part} at target`];
    check(got && want.every((v, i) => close(got[i], v)),
          `history ${part} at target per commit equals /regressions: ${JSON.stringify(got)} vs ${JSON.stringify(want)}`);
    check(histCells.length === 4 && histCells.every(c => c[part] && c[part] !== '–'),
          `history table: a ${part} value in every row ${JSON.stringify(histCells.map(c => c[part]))}`);
  }
  const slowUp = ['comp', 'comm', 'mem'].filter(p => {
    const a = reg.application.find(x => x.name === p);
    return a.at.head.value > a.at.base.value * 1.05;
  });
  check(slowUp.length >= 1, `ex-slow: at least one part rose by more than 5% (${slowUp})`);

  // traces: the list, the steps measured and predicted, the critical path,
  // the breakdown and a what-if, each against the API
  await open(`#/e/${ready.traces}/traces`, 'traces');
  const listing = await get(`/v1/experiments/${ready.traces}/profiles`);
  const kineto = listing.profiles.filter(p => p.format === 'kineto');
  const options = await page.$$eval('#trace option', os => os.map(o => Number(o.value)));
  check(kineto.length === 2 && options.join() === kineto.map(p => p.id).join(), `trace choices: ${options.join()}`);
  const it = await post(`/v1/experiments/${ready.traces}/profiles/${options[0]}/iteration`, { top: 10 });
  const stepRows = await page.$$eval('#steps-table tr', trs => trs.length - 1);
  const stc = await chart('steps');
  check(stepRows === it.steps.length && stepRows >= 1, `steps: ${stepRows} rows, the API has ${it.steps.length}`);
  check(stc && it.steps.every((st, k) => close(stc.series.measured[k], st.measured) && close(stc.series.predicted[k], st.predicted)),
        'steps chart: measured and predicted are the API\'s');
  check(stc && it.steps.every((st, k) => st.interval ? close(stc.series['interval low'][k], st.interval[0]) &&
                                                       close(stc.series['interval high'][k], st.interval[1])
                                                     : stc.series['interval low'][k] === null),
        'steps chart: the interval ends are the API\'s');
  const ivCells = await page.$$eval('#steps-table tr', trs => trs.slice(1).map(t => t.children[3].textContent));
  check(ivCells.length === it.steps.length && ivCells.every((c, k) => it.steps[k].interval ? c.includes('–') && c !== '–' : c === '–'),
        `steps table: an interval per step where the API has one (${ivCells.join(' | ')})`);
  const stepBadges = await page.$$eval('#steps-warnings .badge', bs => bs.map(b => b.dataset.code));
  check(stepBadges.join() === (it.summary.warnings || []).map(w => w.code).join(),
        `the analysis's coded warnings as badges (${stepBadges.join()})`);
  const ops = await page.$$eval('#ops-table tr', trs => trs.slice(1).map(t => t.children[0].textContent));
  check(ops.join('|') === it.steps[0].top_ops.map(o => o.name).join('|'), `critical path operators: ${ops.length}`);
  const bd = await page.$$eval('#breakdown-table tr', trs => trs.slice(1).map(t => t.children[0].textContent));
  check(bd.join() === 'computation,communication,memory,other,idle', `breakdown parts: ${bd.join()}`);
  await page.evaluate(() => { document.getElementById('whatif-scale').value = '0.5'; });
  await page.click('#whatif-run');
  await page.waitForSelector('#whatif-answer', { timeout: 60000 });
  const after = Number(await page.$eval('#whatif-answer', e => e.dataset.after));
  const apiAfter = await post(`/v1/experiments/${ready.traces}/profiles/${options[0]}/iteration`,
    { top: 10, kernel_times: { [it.steps[0].top_ops[0].name]: { scale: 0.5 } } });
  check(close(after, apiAfter.summary.mean_predicted),
        `what-if: ${after} predicted, the API ${apiAfter.summary.mean_predicted}, before ${it.summary.mean_predicted}`);
  await open(`#/e/${exp}/traces`, 'traces-empty');
  check(await page.$('#traces-empty') !== null, 'an experiment without traces says why its trace page is empty');

  // sweep: statistics, S/N, SE, advice against the API
  await open(`#/e/${ready.sweep}/sweep`, 'sweep');
  const st = await get(`/v1/experiments/${ready.sweep}/statistics?level=application&name=epoch&metric=time&limit=1000`);
  const statRows = await page.$$eval('#stats-table tr', trs => trs.length - 1);
  const stChart = await chart('stats');
  check(statRows === st.items.length && statRows === 5, `statistics rows ${statRows}, the API ${st.items.length}`);
  check(stChart && st.items.every((i, k) => close(stChart.series.mean[k], i.mean) && close(stChart.series['CI low'][k], i.mean_ci[0])),
        'statistics chart: means and interval ends are the API\'s');
  const sn = await get(`/v1/experiments/${ready.sweep}/sensitivity`);
  check(await page.$$eval('#sn-table tr', trs => trs.length - 1) === sn.factors.length, 'one S/N row per factor');
  const se = await get(`/v1/experiments/${ready.sweep}/efficiency`);
  const seRows = await page.$$eval('#se-table tr', trs => trs.slice(1).map(t => t.children[4].textContent));
  const seApi = se.groups.flatMap(g => g.points.map(p => p.se.value));
  check(seRows.length === seApi.length && seRows.every((v, k) => close(Number(v), Number(seApi[k].toPrecision(4)))),
        `SE table: ${seRows.join()} against ${seApi.join()}`);
  const adv = await post(`/v1/experiments/${ready.sweep}/advice`, { target: { ranks: 40 }, budget_core_hours: 50 });
  check(await page.$$eval('#advice-table tr', trs => trs.length - 1) === adv.recommendations.length,
        'advice: one row per recommended point');
  const advBadges = await page.$$eval('#advice-warnings .badge', bs => bs.length);
  check(advBadges === (adv.warnings || []).length + (adv.extrapolation && adv.extrapolation.beyond_4x ? 1 : 0),
        `the advice's warnings as badges (${advBadges})`);

  // accuracy: the held-out point against the predictions
  await open(`#/e/${ready.sweep}/accuracy`, 'accuracy');
  const acc = await get(`/v1/experiments/${ready.sweep}/accuracy?metric=time`);
  const accPoints = [...acc.application, ...acc.callpaths].flatMap(e => e.evaluation.points);
  const accRows = await page.$$eval('#accuracy-table tr', trs => trs.length - 1);
  check(accRows === accPoints.length && accRows === 8, `accuracy rows ${accRows}, the API ${accPoints.length}`);
  const accChart = await chart('accuracy');
  const sortedPred = accPoints.slice().sort((a, b) => a.measured - b.measured).map(p => p.predicted);
  check(accChart && sortedPred.every((v, k) => close(accChart.series.predicted[k], v)), 'accuracy chart: the API\'s predictions');
  await open(`#/e/${exp}/accuracy`, 'accuracy-empty');
  check(await page.$('#accuracy-empty') !== null, 'no held-out point: the accuracy page says how to get one');

  // simulations: the list, one simulation, its run's throughput
  await open('#/s', 'simulations');
  check(await page.$$eval('#simulations tr', trs => trs.length - 1) === 1, 'one simulation listed');
  await open(`#/s/${ready.sim}`, 'simulation');
  const run = await get(`/v1/simulations/${ready.sim}/runs/${ready.run}`);
  const tp = await chart('throughput');
  for (const r of run.result.results) {
    const drawn = tp && tp.series[`${r.servers} server(s)`];
    check(drawn && r.points.every((p, k) => close(drawn[k], p.samples_per_s.mean)), `throughput with ${r.servers} server(s)`);
  }
  const sat = await page.$$eval('#saturation li', ls => ls.map(l => l.textContent));
  const maxW = Math.max(...run.result.results[0].points.map(p => p.workers));
  check(sat.length === run.result.results.length && run.result.results.every((r, k) =>
    (r.saturation_workers !== null && r.saturation_workers < maxW) ? sat[k].includes(`saturates at ${r.saturation_workers}`)
      : sat[k].includes(`no saturation up to ${maxW}`)), `saturation: ${sat.join(' | ')}`);

  check(consoleErrors.length === 0, `console errors: ${consoleErrors.join(' | ')}`);
  check(!requested.some(u => u.includes('pcf_')), 'no token in any URL');

  // unknown ids: "not found" with a way back (the 404s log console errors)
  await open('#/e/999999/traces', 'not-found');
  check(await page.$eval('h1', e => e.textContent) === 'Not found' &&
        await page.$eval('#back', e => e.getAttribute('href')) === '#/', 'an unknown experiment: not found, link back');
  await open('#/s/999999', 'not-found-sim');
  check(await page.$eval('#back', e => e.getAttribute('href')) === '#/s', 'an unknown simulation: not found, link back');

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
