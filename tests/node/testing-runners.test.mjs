// The testing entry under the test runners users run (tests/testing-runners, installed by scripts/setup.mjs
// --browser): Vitest 4 with jsdom, beside MSW 2's handlers, and Jest 30 with jsdom (CommonJS), each on the
// built package (pkg/). Each runner is a process of its own, killed past a time limit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = join(root, 'tests', 'testing-runners');
const modules = join(dir, 'node_modules');
const skip = !existsSync(join(root, 'pkg', 'testing.js'))
  ? 'pkg/testing.js is not built (`npm test` builds it before this step)'
  : !existsSync(modules)
    ? 'tests/testing-runners is not installed (node scripts/setup.mjs --browser installs it)'
    : false;

/** Runs a runner's script in tests/testing-runners; its exit code and output. */
function runner(script, args) {
  const env = { ...process.env, CI: '1', FORCE_COLOR: '0', NO_COLOR: '1' };
  delete env.NODE_TEST_CONTEXT;
  const r = spawnSync(process.execPath, [join(modules, script), ...args], { cwd: dir, encoding: 'utf8', timeout: 120_000, env });
  return { status: r.status, output: `${r.stdout}\n${r.stderr}` };
}

test('Vitest with jsdom: the outage story on the scripted fetch and behind an MSW handler, and the same waits for the same seed', { skip }, () => {
  const { status, output } = runner('vitest/vitest.mjs', ['run']);
  assert.equal(status, 0, output);
  assert.match(output, /Tests\s+3 passed \(3\)/, output);
});

test('Jest with jsdom (CommonJS): the outage story, and a client closed from its own callback leaves nothing behind', { skip }, () => {
  const { status, output } = runner('jest/bin/jest.js', ['--ci']);
  assert.equal(status, 0, output);
  assert.match(output, /Tests:\s+2 passed, 2 total/, output);
});
