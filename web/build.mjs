// Builds the page of `labctl ui` into usecase/web/assets: index.html,
// app.js, app.css and LICENSES.txt. The output depends only on src/, the
// lockfile's packages and this file, so two builds give the same bytes
// (hack/web-check.sh proves it).

import { build } from 'esbuild';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, '..', 'usecase', 'web', 'assets');
const require = createRequire(import.meta.url);

// The packages bundled into app.js and app.css, whose licences ship with it.
const bundled = ['@xterm/xterm', '@xterm/addon-fit', '@xterm/addon-web-links'];

const banner = '/*! labctl ui. Bundles xterm.js and its addons (MIT licence): see /assets/LICENSES.txt */';

mkdirSync(out, { recursive: true });

// xterm.js sets CSS the page's Content-Security-Policy refuses: <style>
// elements it fills at run time, and a style attribute for 24-bit colours.
// This plugin makes it create src/xterm-style.js's elements instead (their
// CSS becomes constructed style sheets) and set the colours through the
// CSSOM, which the policy allows. Each edit must match exactly as often as
// written here: a new xterm.js that no longer does fails the build instead
// of shipping a page with broken styles.
const xtermEdits = [
  {
    what: 'createElement("style")',
    re: /([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\.createElement\("style"\)/g,
    to: '__labctlCreateStyle($1)',
    count: 3,
  },
  {
    what: '_addStyle through setAttribute("style")',
    re: /_addStyle\(([A-Za-z_$][\w$]*),([A-Za-z_$][\w$]*)\)\{\1\.setAttribute\("style",`\$\{\1\.getAttribute\("style"\)\|\|""\}\$\{\2\};`\)\}/g,
    to: '_addStyle($1,$2){$1.style.cssText+=$2+";"}',
    count: 1,
  },
];

const xtermForCSP = {
  name: 'xterm-csp',
  setup(b) {
    b.onLoad({ filter: /[\\/]@xterm[\\/]xterm[\\/]lib[\\/]xterm\.mjs$/ }, (args) => {
      let code = readFileSync(args.path, 'utf8');
      for (const e of xtermEdits) {
        const n = (code.match(e.re) || []).length;
        if (n !== e.count) {
          throw new Error(`xterm.js: expected ${e.count} × ${e.what}, found ${n}; review build.mjs's xtermEdits for this xterm.js version`);
        }
        code = code.replace(e.re, e.to);
      }
      code = `import { createStyleElement as __labctlCreateStyle } from ${JSON.stringify(join(here, 'src', 'xterm-style.js'))};\n${code}`;
      return { contents: code, loader: 'js' };
    });
  },
};

await build({
  absWorkingDir: here,
  // main.js imports app.css, so esbuild writes app.js and app.css.
  entryPoints: { app: 'src/main.js' },
  bundle: true,
  minify: true,
  format: 'iife',
  // Constructed style sheets (see src/xterm-style.js) need these browsers.
  target: ['es2020', 'chrome100', 'firefox101', 'safari16.4'],
  platform: 'browser',
  sourcemap: false,
  legalComments: 'eof',
  charset: 'utf8',
  banner: { js: banner, css: banner },
  entryNames: '[name]',
  outdir: out,
  logLevel: 'warning',
  plugins: [xtermForCSP],
});

// index.html: indentation and blank lines go; nothing else changes.
const html = readFileSync(join(here, 'src', 'index.html'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l !== '')
  .join('\n');
writeFileSync(join(out, 'index.html'), html + '\n');

let licences = 'The page of labctl ui bundles these packages from the npm registry.\n';
for (const name of bundled) {
  const pkg = JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8'));
  const text = readFileSync(join(dirname(require.resolve(`${name}/package.json`)), 'LICENSE'), 'utf8');
  licences += `\n==== ${pkg.name} ${pkg.version} (${pkg.license})\n\n${text.trim()}\n`;
}
writeFileSync(join(out, 'LICENSES.txt'), licences);
