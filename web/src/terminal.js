// One terminal tab: an xterm.js screen attached to /ws/terminal?id=ID.
// Binary frames carry the terminal's bytes both ways; the page sends its size
// as a JSON text frame and the server says {"type":"exit"} when the shell
// ends. After a dropped connection the page reconnects with the same id,
// waiting longer each time, and the server replays the recent output.

import { Terminal } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import { WebLinksAddon } from '@xterm/addon-web-links';
import { withLanguage } from './api.js';
import { t } from './i18n.js';

// The terminal's colours. Every colour but black passes WCAG AA (4.5:1) as
// text on the background #14161a; see app.css for the ratios.
const theme = {
  background: '#14161a',
  foreground: '#e8e8e8',
  cursor: '#e8e8e8',
  cursorAccent: '#14161a',
  selectionBackground: '#3d5a80',
  selectionForeground: '#ffffff',
  black: '#14161a',
  red: '#ff7b72',
  green: '#56d364',
  yellow: '#e3b341',
  blue: '#79b8ff',
  magenta: '#d2a8ff',
  cyan: '#56d4dd',
  white: '#d0d0d0',
  brightBlack: '#8b949e',
  brightRed: '#ffa198',
  brightGreen: '#7ee787',
  brightYellow: '#f2cc60',
  brightBlue: '#a5d6ff',
  brightMagenta: '#e2c5ff',
  brightCyan: '#b3f0ff',
  brightWhite: '#ffffff',
};

const minDelay = 250;
const maxDelay = 8000;

export class TerminalSession {
  constructor(id, panel, { onStatus } = {}) {
    this.id = id;
    this.panel = panel;
    this.onStatus = onStatus || (() => {});
    this.delay = minDelay;
    this.ended = false;
    this.closed = false;
    this.encoder = new TextEncoder();

    this.screen = document.createElement('div');
    this.screen.className = 'screen';
    this.status = document.createElement('p');
    this.status.className = 'terminal-status';
    this.status.setAttribute('aria-live', 'polite');
    panel.append(this.status, this.screen);

    this.term = new Terminal({
      theme,
      fontFamily: 'ui-monospace, "DejaVu Sans Mono", "Noto Sans Mono", Menlo, Consolas, monospace',
      fontSize: 14,
      cursorBlink: true,
      scrollback: 5000,
      screenReaderMode: false,
      allowProposedApi: false,
    });
    this.fit = new FitAddon();
    this.term.loadAddon(this.fit);
    this.term.loadAddon(new WebLinksAddon((event, uri) => {
      const w = window.open(uri, '_blank', 'noopener,noreferrer');
      if (w) w.opener = null;
    }));
    this.term.attachCustomKeyEventHandler((e) => this.key(e));
    this.term.onData((d) => this.send(this.encoder.encode(d)));
    this.term.onBinary((d) => {
      const b = new Uint8Array(d.length);
      for (let i = 0; i < d.length; i++) b[i] = d.charCodeAt(i) & 0xff;
      this.send(b);
    });
    this.term.onResize(({ rows, cols }) => this.sendSize(rows, cols));
    this.term.open(this.screen);
    this.term.textarea?.setAttribute('aria-describedby', 'terminal-help');

    this.resizer = new ResizeObserver(() => this.refit());
    this.resizer.observe(this.screen);
    this.connect();
  }

  // key handles the page's own keys before xterm.js; false means xterm.js
  // must not send the key to the shell.
  key(e) {
    if (e.key === 'Tab' && e.type === 'keyup' && this.leaving) {
      // Leave the terminal backwards, to its tab: no keyboard trap. This
      // happens on keyup so that xterm.js sees the key end; the keydown
      // only kept Shift+Tab from the shell.
      this.leaving = false;
      document.querySelector(`button[role=tab][data-terminal="${this.id}"]`)?.focus();
      return false;
    }
    if (e.type !== 'keydown') return true;
    if (e.key === 'Tab' && e.shiftKey && !e.ctrlKey && !e.altKey && !e.metaKey) {
      e.preventDefault();
      this.leaving = true;
      return false;
    }
    if (e.ctrlKey && e.shiftKey && (e.code === 'KeyC' || e.key === 'C')) {
      const sel = this.term.getSelection();
      if (sel) navigator.clipboard?.writeText(sel).catch(() => {});
      e.preventDefault();
      return false;
    }
    if (e.ctrlKey && e.shiftKey && (e.code === 'KeyV' || e.key === 'V')) {
      navigator.clipboard?.readText().then((text) => this.term.paste(text)).catch(() => {});
      e.preventDefault();
      return false;
    }
    if (this.ended && e.key === 'Enter') {
      this.ended = false;
      this.delay = minDelay;
      this.connect();
      return false;
    }
    return !this.ended;
  }

  url() {
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    return `${scheme}//${location.host}${withLanguage(`/ws/terminal?id=${encodeURIComponent(this.id)}`)}`;
  }

  connect() {
    if (this.closed) return;
    clearTimeout(this.timer);
    const ws = new WebSocket(this.url());
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    let fresh = true;
    ws.onopen = () => {
      this.delay = minDelay;
      this.setStatus('');
      this.refit();
      this.sendSize(this.term.rows, this.term.cols);
    };
    ws.onmessage = (ev) => {
      if (fresh) {
        // The server starts every attach with the recent output: draw it
        // on a clean screen, not under what is already there.
        fresh = false;
        this.term.reset();
      }
      if (typeof ev.data === 'string') {
        this.control(ev.data);
      } else {
        this.term.write(new Uint8Array(ev.data));
      }
    };
    ws.onclose = () => {
      if (this.ws !== ws || this.closed || this.ended) return;
      const wait = this.delay;
      this.delay = Math.min(this.delay * 2, maxDelay);
      this.setStatus(t('reconnecting', Math.max(1, Math.round(wait / 1000))));
      this.timer = setTimeout(() => this.connect(), wait);
    };
  }

  control(text) {
    let msg;
    try {
      msg = JSON.parse(text);
    } catch {
      return;
    }
    if (msg && msg.type === 'exit') {
      this.ended = true;
      const words = t('shellEnded', Number(msg.code) || 0);
      this.term.write(`\r\n\x1b[1m${words}\x1b[0m\r\n`);
      this.setStatus(words);
      this.ws?.close();
    }
  }

  send(bytes) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN && !this.ended) this.ws.send(bytes);
  }

  sendSize(rows, cols) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify({ type: 'resize', rows, cols }));
    }
  }

  setStatus(text) {
    this.status.textContent = text;
    this.status.hidden = text === '';
    this.onStatus(this, text);
  }

  refit() {
    if (this.panel.hidden || this.screen.clientWidth === 0) return;
    try {
      this.fit.fit();
    } catch {
      // not laid out yet; the next resize fits it
    }
  }

  focus() {
    this.refit();
    this.term.focus();
  }

  dispose() {
    this.closed = true;
    clearTimeout(this.timer);
    this.resizer.disconnect();
    this.ws?.close();
    this.term.dispose();
  }
}
