// The benchmarks' statistics (scripts/bench-dispatch.mjs): the interval printed beside each paired median.
import test from 'node:test';
import assert from 'node:assert/strict';
import { interval } from '../../scripts/bench-dispatch.mjs';

test('the interval for 21 rounds spans the 6th to the 16th value, sorted', () => {
  const xs = Array.from({ length: 21 }, (_, i) => (i * 5) % 21); // 0..20, shuffled
  assert.deepEqual(interval(xs), [5, 15]);
});

test("the interval holds a distribution's median about 95 % of the time, whatever its shape", () => {
  // A fixed generator, so that the test gives the same answer on every run.
  let seed = 12345;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (const [shape, draw, median] of [
    ['uniform', () => random(), 0.5],
    ['exponential (skewed, as slow rounds are)', () => -Math.log(1 - random()), Math.LN2],
  ]) {
    for (const n of [9, 21, 61]) {
      let held = 0;
      const trials = 2000;
      for (let t = 0; t < trials; t++) {
        const [lo, hi] = interval(Array.from({ length: n }, draw));
        if (lo <= median && median <= hi) held++;
      }
      const share = held / trials;
      // Never too narrow; from 21 rounds on, not needlessly wide either (with 9 it is nearly their range).
      assert.ok(share >= 0.93, `${shape}, ${n} rounds: held only ${share}`);
      if (n >= 21) assert.ok(share <= 0.985, `${shape}, ${n} rounds: held ${share}, wider than it needs`);
    }
  }
});

test('a few values give their whole range', () => {
  assert.deepEqual(interval([3, 1, 2]), [1, 3]);
});
