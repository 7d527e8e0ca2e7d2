package io.nvmf4j.service.metrics;

import io.micrometer.core.instrument.Clock;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The metrics registry's clock: wall time read from a field that a daemon thread refreshes every
 * {@value #TICK_MILLIS} ms, monotonic time from {@link System#nanoTime()}.
 *
 * <p>Why: every latency a poll group records asks the clock for the wall time twice, once in the timer's
 * {@code TimeWindowMax} and once in its bucket histogram, to see whether their time windows must rotate (every
 * 20 s with the defaults). Each ask is a {@code clock_gettime}, about 30 ns here: 60 ns of a poll group's core per
 * I/O for a decision that changes three times a minute. A field read costs next to nothing, and
 * {@value #TICK_MILLIS} ms late is nothing against windows of seconds. Nothing that measures a duration reads the
 * wall time ({@link #monotonicTime()} is the system's), so no latency is coarser for it.
 */
final class CoarseClock implements Clock, AutoCloseable {
    /** How often the wall time is refreshed, and so how stale {@link #wallTime()} can be (plus scheduling delays). */
    static final long TICK_MILLIS = 10;

    private volatile long wallTime = System.currentTimeMillis();
    private volatile boolean closed;
    private final Thread ticker;

    CoarseClock() {
        ticker = new Thread(this::tick, "nvmf4j-metrics-clock");
        ticker.setDaemon(true);
        ticker.start();
    }

    private void tick() {
        long nanos = TimeUnit.MILLISECONDS.toNanos(TICK_MILLIS);
        while (!closed) {
            wallTime = System.currentTimeMillis();
            LockSupport.parkNanos(this, nanos);
        }
    }

    @Override
    public long wallTime() {
        return wallTime;
    }

    @Override
    public long monotonicTime() {
        return System.nanoTime();
    }

    /** Stops the refreshing thread; {@link #wallTime()} then keeps the last value. */
    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(ticker);
    }

    /** For tests: the refreshing thread has ended. */
    boolean awaitStopped(long millis) throws InterruptedException {
        ticker.join(millis);
        return !ticker.isAlive();
    }
}
