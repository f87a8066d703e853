// main.js — the dashboard's entry: the token form and a hash router.
//   #/                       experiments
//   #/e/ID                   one experiment's models
//   #/e/ID/scaling           scaling, cost, bottlenecks, imbalance
//   #/e/ID/history           model sets per commit, regressions marked
//   #/e/ID/traces[/PID]      profiler traces, per-iteration analysis, what-if
//   #/e/ID/sweep             repetition statistics, S/N, SE table, advice
//   #/e/ID/accuracy          held-out points against the predictions
//   #/s                      simulations
//   #/s/ID[/runs/RUN]        one simulation, its runs, a run's throughput
// An unknown id shows "not found" with a link back, never a blank page.
import { getToken, setToken } from './api.js';
import { el, clear, errorBox } from './dom.js';
import { experimentsPage } from './pages/experiments.js';
import { experimentPage } from './pages/experiment.js';
import { scalingPage } from './pages/scaling.js';
import { historyPage } from './pages/history.js';
import { tracesPage } from './pages/traces.js';
import { sweepPage } from './pages/sweep.js';
import { accuracyPage } from './pages/accuracy.js';
import { simulationsPage, simulationPage } from './pages/simulations.js';
import { notFound, isNotFound } from './widgets.js';

const main = document.getElementById('main');
const nav = document.getElementById('nav');

function navFor(id, active) {
  clear(nav);
  nav.append(el('a', { href: '#/', class: active === 'list' ? 'active' : null }, 'Experiments'));
  nav.append(el('a', { href: '#/s', class: active === 'simulations' ? 'active' : null }, 'Simulations'));
  if (!id) return;
  const links = [['models', `#/e/${id}`, 'Models'], ['scaling', `#/e/${id}/scaling`, 'Scaling & cost'],
                 ['history', `#/e/${id}/history`, 'History'], ['traces', `#/e/${id}/traces`, 'Traces'],
                 ['sweep', `#/e/${id}/sweep`, 'Sweep & statistics'], ['accuracy', `#/e/${id}/accuracy`, 'Accuracy']];
  for (const [key, href, text] of links)
    nav.append(el('a', { href, class: active === key ? 'active' : null }, text));
}

let generation = 0;

async function route() {
  const mine = ++generation;
  const parts = location.hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  const page = el('div');
  clear(main).append(page);
  document.body.dataset.ready = 'no';
  try {
    try {
      if (parts[0] === 'e' && /^\d+$/.test(parts[1] || '')) {
        const id = parts[1], sub = parts[2] || 'models';
        navFor(id, sub);
        if (sub === 'scaling') await scalingPage(page, id);
        else if (sub === 'history') await historyPage(page, id);
        else if (sub === 'traces') await tracesPage(page, id, { profile: parts[3] });
        else if (sub === 'sweep') await sweepPage(page, id);
        else if (sub === 'accuracy') await accuracyPage(page, id);
        else await experimentPage(page, id);
      } else if (parts[0] === 's' && /^\d+$/.test(parts[1] || '')) {
        navFor(null, 'simulations');
        await simulationPage(page, parts[1], parts[2] === 'runs' ? parts[3] : undefined);
      } else if (parts[0] === 's') {
        navFor(null, 'simulations');
        await simulationsPage(page);
      } else {
        navFor(null, 'list');
        await experimentsPage(page);
      }
    } catch (err) {
      if (!isNotFound(err)) throw err;
      if (mine === generation) {
        page.replaceChildren();
        const sim = parts[0] === 's';
        notFound(page, `${sim ? 'Simulation' : 'Experiment'} ${parts[1]}${parts[3] ? ` (or its item ${parts[3]})` : ''}`,
          sim ? '#/s' : '#/', sim ? 'Back to the simulations' : 'Back to the experiments');
      }
    }
  } catch (err) {
    if (mine === generation) page.append(errorBox(err));
    console.warn(err && err.message ? err.message : err);
  }
  if (mine === generation) document.body.dataset.ready = 'yes';
}

const form = document.getElementById('token-form');
const input = document.getElementById('token');
input.value = getToken() ? '••••••••' : '';
form.addEventListener('submit', ev => {
  ev.preventDefault();
  if (input.value && !/^•+$/.test(input.value)) setToken(input.value.trim());
  input.value = getToken() ? '••••••••' : '';
  route();
});
document.getElementById('token-forget').addEventListener('click', () => {
  setToken('');
  input.value = '';
  route();
});
window.addEventListener('hashchange', route);
route();
