// The Studio's shell: sign-in, the mode shown in the header, and the routes (#/runs, #/new, #/runs/<id>).
import { ApiError, auth, get } from './api.js';
import { clear, h } from './dom.js';
import { newRunView } from './newrun.js';
import { runView } from './run.js';
import { runsView } from './runs.js';

const view = document.getElementById('view');
const who = document.getElementById('who');
const signOut = document.getElementById('sign-out');
const notice = document.getElementById('notice');
let mode = null; // 'local' (no API keys configured) | 'tenant'
let current = null; // the mounted view's cleanup

export function showNotice(text) {
  notice.textContent = text || '';
  notice.hidden = !text;
}

// which mode the service runs in: a call without a key succeeds only in local mode
async function probe() {
  try {
    await get('/v1/runs?limit=1', { key: '' });
    return 'local';
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return 'tenant';
    throw err;
  }
}

function signInView() {
  const input = h('input', { id: 'api-key', type: 'password', autocomplete: 'off', placeholder: 'API key',
    required: true, size: 40 });
  const error = h('p', { id: 'sign-in-error', class: 'error', role: 'alert', hidden: true });
  const form = h('form', { id: 'sign-in', class: 'card narrow' },
    h('h2', {}, 'Sign in'),
    h('p', { class: 'muted' }, 'This service has API keys: enter your tenant key. It is kept in this tab only ',
      '(sessionStorage) and sent as Authorization: Bearer.'),
    input, ' ', h('button', { type: 'submit' }, 'Sign in'), error);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    error.hidden = true;
    const key = input.value.trim();
    try {
      await get('/v1/runs?limit=1', { key });
      auth.set(key);
      header();
      location.hash = '#/runs';
      route();
    } catch (err) {
      error.textContent = err.status === 401
        ? 'That API key was not accepted (401 unauthorized). Check the key and try again.'
        : `Could not sign in: ${err.message}`;
      error.hidden = false;
    }
  });
  return form;
}

function header() {
  if (mode === 'local') {
    who.textContent = 'local mode (no API keys configured)';
    signOut.hidden = true;
  } else {
    who.textContent = auth.key() ? 'signed in with a tenant key' : '';
    signOut.hidden = !auth.key();
  }
}

signOut.addEventListener('click', () => {
  auth.clear();
  header();
  route();
});

function route() {
  if (current) current();
  current = null;
  showNotice('');
  if (mode === 'tenant' && !auth.key()) {
    clear(view, signInView());
    document.getElementById('api-key').focus();
    return;
  }
  const path = location.hash.replace(/^#/, '') || '/runs';
  const onAuthLost = () => { auth.clear(); header(); route(); };
  const ctx = { view, onAuthLost, showNotice };
  const run = path.match(/^\/runs\/([^/?]+)$/);
  if (run) current = runView(ctx, decodeURIComponent(run[1]));
  else if (path.startsWith('/new')) current = newRunView(ctx, new URLSearchParams(path.split('?')[1] || ''));
  else current = runsView(ctx, new URLSearchParams(path.split('?')[1] || ''));
}

window.addEventListener('hashchange', route);

(async () => {
  try {
    mode = await probe();
  } catch (err) {
    clear(view, h('p', { class: 'error' }, `The service does not answer: ${err.message}`));
    return;
  }
  document.body.dataset.mode = mode;
  header();
  route();
})();
