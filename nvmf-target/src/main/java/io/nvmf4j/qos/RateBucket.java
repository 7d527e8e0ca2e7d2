package io.nvmf4j.qos;

import java.util.concurrent.atomic.AtomicLong;

/**
 * One rate limit shared by every poll group: a virtual clock ({@link #tat}, the time at which the budget taken so far
 * is earned) moved by a compare-and-set per I/O, so the limit is exact across threads and I/Os take their budget in
 * the order they arrive. An I/O may start once the budget before it is earned ({@link #reserve} returns that time);
 * a bucket idle for longer than {@link #BURST_NANOS} forgets the budget it did not use, so an idle tenant cannot
 * save up a burst. Pacing is in whole nanoseconds per I/O, rounded up: a limit never overshoots and undershoots by
 * less than 1 ns per I/O (0.1 % at a million I/Os per second).
 */
public final class RateBucket {
    /** Budget an idle bucket keeps: what a late timer on a poll group would otherwise lose. */
    static final long BURST_NANOS = 1_000_000;
    private static final long NANOS_PER_SECOND = 1_000_000_000L;

    private final long unitsPerSecond;
    private final AtomicLong tat;

    /** A bucket of {@code unitsPerSecond} (positive) that starts full at {@code now}. */
    public RateBucket(long unitsPerSecond, long now) {
        if (unitsPerSecond <= 0) {
            throw new IllegalArgumentException("rate must be positive, got " + unitsPerSecond);
        }
        this.unitsPerSecond = unitsPerSecond;
        this.tat = new AtomicLong(now - BURST_NANOS);
    }

    public long unitsPerSecond() {
        return unitsPerSecond;
    }

    /**
     * Takes {@code units} (at most 2^32) of budget at {@code now} ({@link System#nanoTime}); returns the time from
     * which the I/O may start (at or before {@code now}: at once).
     */
    public long reserve(long units, long now) {
        long cost = costNanos(units);
        long floor = now - BURST_NANOS;
        while (true) {
            long t = tat.get();
            long start = t - floor < 0 ? floor : t;
            if (tat.compareAndSet(t, start + cost)) {
                return start;
            }
        }
    }

    /** Nanoseconds of budget {@code units} take, rounded up (units <= 2^32, so the product fits). */
    long costNanos(long units) {
        long n = units * NANOS_PER_SECOND;
        long cost = n / unitsPerSecond;
        return n % unitsPerSecond == 0 ? cost : cost + 1;
    }
}
