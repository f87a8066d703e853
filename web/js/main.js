// main.js — the dashboard's entry: the token form and a hash router.
//   #/                       experiments
//   #/e/ID                   one experiment's models
//   #/e/ID/scaling           scaling, cost, bottlenecks, imbalance
//   #/e/ID/history           model sets per commit, regressions marked
import { getToken, setToken } from './api.js';
import { el, clear, errorBox } from './dom.js';
import { experimentsPage } from './pages/experiments.js';
import { experimentPage } from './pages/experiment.js';
import { scalingPage } from './pages/scaling.js';
import { historyPage } from './pages/history.js';

const main = document.getElementById('main');
const nav = document.getElementById('nav');

function navFor(id, active) {
  clear(nav);
  nav.append(el('a', { href: '#/', class: active === 'list' ? 'active' : null }, 'Experiments'));
  if (!id) return;
  const links = [['models', `#/e/${id}`, 'Models'], ['scaling', `#/e/${id}/scaling`, 'Scaling & cost'],
                 ['history', `#/e/${id}/history`, 'History']];
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
    if (parts[0] === 'e' && /^\d+$/.test(parts[1] || '')) {
      const id = parts[1], sub = parts[2] || 'models';
      navFor(id, sub);
      if (sub === 'scaling') await scalingPage(page, id);
      else if (sub === 'history') await historyPage(page, id);
      else await experimentPage(page, id);
    } else {
      navFor(null, 'list');
      await experimentsPage(page);
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
