import { sampleTimes } from '../benchmark/profile-place';

/**
 * The time a CPU profile's samples stand for (test/benchmark/profile-place.ts): a server paused by
 * the bench stops its sampler too, and the pause must not land on the function sampled before it.
 */
describe('profile summary: the time of each sample', () => {
  it('gives each sample its distance to the next, the last sample none', () => {
    expect(sampleTimes([0, 1_000, 1_100, 900, 1_000])).toEqual({ us: [1_000, 1_100, 900, 1_000, 0], gapsUs: 0, intervalUs: 1_000 });
  });

  it('counts a pause as one sampling interval and tells how much it left out', () => {
    // Samples every 1 ms, then the process stopped for 5 s before the fifth sample.
    const { us, gapsUs, intervalUs } = sampleTimes([0, 1_000, 1_000, 1_000, 5_000_000, 1_000, 1_000]);
    expect(intervalUs).toBe(1_000);
    expect(us).toEqual([1_000, 1_000, 1_000, 1_000, 1_000, 1_000, 0]);
    expect(gapsUs).toBe(5_000_000 - 1_000);
  });

  it('keeps a late sample of a busy process (a few intervals) as it is', () => {
    expect(sampleTimes([0, 1_000, 1_000, 4_000, 1_000]).us).toEqual([1_000, 1_000, 4_000, 1_000, 0]);
  });

  it('answers an empty profile with nothing', () => {
    expect(sampleTimes([])).toEqual({ us: [], gapsUs: 0, intervalUs: 0 });
  });
});
