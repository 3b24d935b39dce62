// `npm test`: every suite in turn, each also runnable alone (`npm run test:server`, ...). Prints
// each suite's counts and ends with one line, "N passed, N failed", over all of them.
import { spawn } from 'node:child_process';

const pg = /^postgres(ql)?:\/\//.test(process.env.TEST_DATABASE_URL ?? '');
const suites = [
  { name: 'type checks', script: 'typecheck' },
  { name: 'service on SQLite', script: 'test:server', env: { TEST_DATABASE_URL: '' } },
  pg
    ? { name: 'service on PostgreSQL', script: 'test:server:pg' }
    : { name: 'service on PostgreSQL', skip: 'TEST_DATABASE_URL is not set (scripts/ci-postgres.sh prints one)' },
  { name: 'elements in Chromium', script: 'test:components' },
  // Builds dist/ (the e2e suite's example pages load it), then checks the package, manifest and size budgets.
  { name: 'package: build, exports, types, manifest, size', script: 'test:build' },
  { name: 'end to end', script: 'test:e2e' },
];

function run(script, env = {}) {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const tee = (stream, to) =>
      stream.on('data', (chunk) => {
        output += chunk;
        to.write(chunk);
      });
    tee(child.stdout, process.stdout);
    tee(child.stderr, process.stderr);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** Counts from node:test (tap or spec reporter) or web-test-runner summaries. */
function counts(output) {
  const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
  const node = (word) => [...plain.matchAll(new RegExp(`^(?:#|ℹ) ${word} (\\d+)$`, 'gm'))].reduce((n, m) => n + Number(m[1]), 0);
  const wtr = [...plain.matchAll(/(\d+) passed, (\d+) failed/g)].at(-1);
  if (wtr) return { passed: Number(wtr[1]), failed: Number(wtr[2]) };
  return { passed: node('pass'), failed: node('fail') };
}

/** Lines of a node:test failure's YAML block worth repeating: its error and where it was thrown. */
const MAX_ERROR_LINES = 8;
/** Diagnostics a failed test printed (node:test puts them after its block), repeated with it. */
const MAX_DIAGNOSTIC_LINES = 4;

/**
 * The failing tests, each with why, repeated at the end where a log's tail shows them: node:test's
 * "not ok" lines (not the TODOs') with their error message and diagnostics, and web-test-runner's
 * ❌ lines with the error under each. A CI log may keep only its tail, so the reason has to be there too.
 */
function failingTests(output) {
  const lines = output.replace(/\x1b\[[0-9;]*m/g, '').split('\n');
  const failing = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/❌/.test(line)) {
      failing.push(line.trim());
      // web-test-runner prints the error and its stack under the test's name, indented, until a blank line.
      const indent = line.search(/\S/);
      const details = [];
      for (let next = i + 1; next < lines.length && lines[next].trim() !== '' && lines[next].search(/\S/) > indent; next++) details.push(lines[next].trim());
      for (const l of details.slice(0, MAX_ERROR_LINES)) failing.push(`    ${l}`);
    }
    if (!/^\s*not ok \d+ - /.test(line) || /# (TODO|SKIP)/.test(line)) continue;
    failing.push(line.trim());
    // The YAML block: from "---" to "...", indented deeper than the "not ok" line.
    let end = i + 1;
    if (lines[end]?.trim() !== '---') continue;
    while (end < lines.length && lines[end].trim() !== '...') end++;
    const block = lines.slice(i + 2, end);
    const errorAt = block.findIndex((l) => /^\s*error:/.test(l));
    // A suite's own block only says how many of its tests failed: they are listed on their own.
    if (errorAt >= 0 && !/subtests? failed/.test(block[errorAt])) {
      const errorIndent = block[errorAt].search(/\S/);
      const errorLines = [block[errorAt]];
      for (const next of block.slice(errorAt + 1)) {
        // (An assertion's message has blank lines: "Expected values to be strictly equal:", "", "453 !== 1000".)
        if (next.trim() === '') continue;
        if (next.search(/\S/) <= errorIndent) break;
        errorLines.push(next);
      }
      const location = block.find((l) => /^\s*location:/.test(l));
      for (const l of [...errorLines.slice(0, MAX_ERROR_LINES), ...(location ? [location] : [])]) failing.push(`    ${l.trim()}`);
    }
    const diagnostics = [];
    for (let next = end + 1; next < lines.length && /^\s*# (?!Subtest:)/.test(lines[next]); next++) diagnostics.push(lines[next].trim());
    for (const l of diagnostics.slice(0, MAX_DIAGNOSTIC_LINES)) failing.push(`    ${l}`);
  }
  return failing;
}

/** Lines of failures a suite's summary repeats. */
const MAX_SUMMARY_LINES = 60;
const rows = [];
let failed = false;
for (const suite of suites) {
  if (suite.skip) {
    rows.push(`${suite.name}: skipped, ${suite.skip}`);
    continue;
  }
  console.log(`\n=== ${suite.name} (npm run ${suite.script})`);
  const started = Date.now();
  const { code, output } = await run(suite.script, suite.env);
  const c = counts(output);
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  const failing = failingTests(output);
  rows.push({ name: suite.name, code, seconds, ...c, failing });
  // A failed test fails the run even when its runner exits 0 (web-test-runner did once, with 3 failed).
  if (code !== 0 || c.failed > 0) failed = true;
}

console.log('\n=== summary');
let passed = 0;
let failures = 0;
for (const r of rows) {
  if (typeof r === 'string') {
    console.log(r);
    continue;
  }
  passed += r.passed;
  failures += r.failed;
  const status = r.code !== 0 ? `FAILED (exit ${r.code})` : r.failed > 0 ? 'FAILED' : 'ok';
  console.log(`${r.name}: ${status}, ${r.passed} passed, ${r.failed} failed, ${r.seconds} s`);
  for (const line of r.failing.slice(0, MAX_SUMMARY_LINES)) console.log(`  ${line}`);
}
// A suite that failed without a failing test (a crash, a type error) still counts as a failure.
const crashed = rows.filter((r) => typeof r !== 'string' && r.code !== 0 && r.failed === 0).length;
console.log(`${passed} passed, ${failures + crashed} failed`);
process.exit(failed ? 1 : 0);
