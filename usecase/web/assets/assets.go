// Package assets holds the page of `labctl ui` as built by `make web` from
// web/: index.html, app.js (the page's code with xterm.js and its addons),
// app.css and LICENSES.txt (the licences of the bundled packages). The files
// are committed, so building labctl needs no Node.js; hack/web-check.sh
// proves that they are what web/ and its lockfile build.
package assets

import "embed"

// FS holds the built files at its top: index.html, app.js, app.css and
// LICENSES.txt.
//
//go:embed index.html app.js app.css LICENSES.txt
var FS embed.FS
