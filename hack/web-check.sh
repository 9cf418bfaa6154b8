#!/usr/bin/env bash
# Rebuilds the page of `labctl ui` twice from web/ and its lockfile (make web)
# and fails when the two builds differ (the build is not reproducible) or when
# they differ from the files in usecase/web/assets (the committed page is
# stale). Needs Node.js, npm and the npm registry (or npm's cache).
set -euo pipefail
cd "$(dirname "$0")/.."

files=(index.html app.js app.css LICENSES.txt)
sums() { (cd usecase/web/assets && sha256sum "${files[@]}"); }

before=$(sums)
make --no-print-directory web >&2
first=$(sums)
make --no-print-directory web >&2
second=$(sums)

if [ "$first" != "$second" ]; then
	echo "web-check: two builds of web/ differ; the bundle is not reproducible:" >&2
	diff <(echo "$first") <(echo "$second") >&2 || true
	exit 1
fi
if [ "$before" != "$first" ]; then
	echo "web-check: usecase/web/assets is stale; rebuilt now from web/, review and commit:" >&2
	diff <(echo "$before") <(echo "$first") >&2 || true
	exit 1
fi
echo "web-check: usecase/web/assets is what web/ builds, byte for byte:"
echo "$first"
