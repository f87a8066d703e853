// experiments.js — the experiments list: name, parameters, scaling, the
// newest upload, the newest refit's state and the newest model set.
import { api } from '../api.js';
import { el } from '../dom.js';

export async function experimentsPage(page) {
  page.append(el('h1', {}, 'Experiments'));
  const list = await api('/v1/experiments?limit=1000');
  if (!list.experiments.length) {
    page.append(el('p', { class: 'muted' }, 'No experiments yet: POST /v1/experiments, then upload profiles.'));
    return;
  }
  const body = el('tbody');
  page.append(el('table', { id: 'experiments' },
    el('thead', {}, el('tr', {}, ['Experiment', 'Parameters', 'Scaling', 'Last upload',
                                 'Newest refit', 'Model set', 'Commit'].map(t => el('th', {}, t)))),
    body));
  const sets = await Promise.all(list.experiments.map(e =>
    api(`/v1/experiments/${e.id}/model_sets?limit=1`).catch(() => null)));
  list.experiments.forEach((e, i) => {
    const s = sets[i];
    const newest = s && s.model_sets[0];
    const job = s && s.newest_job;
    body.append(el('tr', { 'data-id': e.id },
      el('td', {}, el('a', { href: `#/e/${e.id}` }, e.name)),
      el('td', {}, e.parameters.join(', ')),
      el('td', {}, e.scaling),
      el('td', {}, s && s.last_upload ? s.last_upload : '–'),
      el('td', { class: job && job.state === 'failed' ? 'regression' : null },
         job ? `${job.state} (job ${job.id})` : 'none'),
      el('td', { class: 'num' }, newest ? `#${newest.model_set}` : 'none yet'),
      el('td', {}, newest && newest.commit ? newest.commit : '–')));
  });
}
