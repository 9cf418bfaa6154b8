// Calls to labctl ui's JSON API. Every error is an Error whose message can be
// shown to the learner as it is.

import { t } from './i18n.js';

// The language the learner chose for the lab's texts (one of the lab's
// languages), sent with every request as ?lang=; '' leaves labctl ui's own.
let textLanguage = '';

export function setTextLanguage(tag) {
  textLanguage = tag || '';
}

// withLanguage adds the chosen language to a path of labctl ui.
export function withLanguage(path) {
  if (!textLanguage) return path;
  return `${path}${path.includes('?') ? '&' : '?'}lang=${encodeURIComponent(textLanguage)}`;
}

async function call(method, path, body) {
  const init = { method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(withLanguage(path), init);
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
