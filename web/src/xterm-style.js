// xterm.js writes part of its CSS (theme colours, cell sizes, scrollbar
// colours) into <style> elements it creates at run time. The page's
// Content-Security-Policy (style-src 'self', no 'unsafe-inline') rightly
// refuses those. The build (build.mjs) makes xterm.js create a
// <labctl-xterm-style> element instead: it holds the same CSS text, and
// while it is in the document that text is a constructed style sheet in
// document.adoptedStyleSheets, which the policy allows because no markup
// can create one. Only xterm.js's own code creates these elements.

const textContent = Object.getOwnPropertyDescriptor(Node.prototype, 'textContent');

class XtermStyle extends HTMLElement {
  constructor() {
    super();
    this.sheet = new CSSStyleSheet();
  }

  get textContent() {
    return textContent.get.call(this);
  }

  set textContent(css) {
    textContent.set.call(this, css);
    this.sheet.replaceSync(String(css ?? ''));
  }

  connectedCallback() {
    if (!document.adoptedStyleSheets.includes(this.sheet)) {
      document.adoptedStyleSheets = [...document.adoptedStyleSheets, this.sheet];
    }
  }

  disconnectedCallback() {
    document.adoptedStyleSheets = document.adoptedStyleSheets.filter((s) => s !== this.sheet);
  }
}

const tag = 'labctl-xterm-style';

// createStyleElement stands in for doc.createElement("style") in xterm.js.
export function createStyleElement(doc) {
  if (!customElements.get(tag)) customElements.define(tag, XtermStyle);
  const el = doc.createElement(tag);
  el.hidden = true; // its text is CSS, never content
  return el;
}
