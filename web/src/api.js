// Calls to labctl ui's JSON API. Every error is an Error whose message can be
// shown to the learner as it is.

import { t } from './i18n.js';

async function call(method, path, body) {
  const init = { method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch {
    throw new Error(t('serverGone'));
  }
  if (res.status === 403) throw new Error(t('forbidden'));
  if (!res.ok) {
    const text = (await res.text().catch(() => '')).trim();
    throw new Error(t('requestFailed', text || `${res.status} ${res.statusText}`));
  }
  return res.json();
}

export const api = {
  lab: () => call('GET', '/api/lab'),
  state: () => call('GET', '/api/state'),
  check: (step) => call('POST', '/api/check', { step }),
  solution: (step) => call('POST', '/api/solution', { step }),
  grade: () => call('POST', '/api/grade', {}),
  previews: () => call('GET', '/api/previews'),
};
