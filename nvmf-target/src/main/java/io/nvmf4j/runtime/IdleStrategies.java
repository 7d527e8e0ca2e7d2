package io.nvmf4j.runtime;

import io.netty.channel.SelectStrategy;
import io.netty.channel.SelectStrategyFactory;

import java.util.Locale;

/**
 * Idle strategies of a poll group, expressed as Netty {@link SelectStrategy}s: the poll group is a
 * Netty event loop and the strategy decides, on each pass, between a non-blocking poll (spin) and a
 * blocking wait in epoll.
 *
 * <ul>
 *   <li>{@code busy}: always poll without blocking; lowest latency, one core at 100% per poll group.</li>
 *   <li>{@code backoff} (default): after the last work, keep polling without blocking for
 *       {@value #SPIN_NANOS} ns, then poll and yield the CPU until {@value #YIELD_NANOS} ns, then block
 *       in epoll until the next event. Low latency under load, no CPU burned when idle, and never a
 *       timed sleep: a sleeping thread would not see a capsule until its timer fired, and timer
 *       granularity in virtual machines can be milliseconds.</li>
 *   <li>{@code interrupt}: block in epoll whenever there is nothing to do.</li>
 * </ul>
 */
public final class IdleStrategies {
    public static final String BUSY = "busy";
    public static final String BACKOFF = "backoff";
    public static final String INTERRUPT = "interrupt";

    static final long SPIN_NANOS = 50_000;
    static final long YIELD_NANOS = 200_000;

    private IdleStrategies() {
    }

    public static boolean isValid(String name) {
        return BUSY.equals(name) || BACKOFF.equals(name) || INTERRUPT.equals(name);
    }

    public static SelectStrategyFactory factory(String name) {
        return switch (name.toLowerCase(Locale.ROOT)) {
            case BUSY -> () -> (selectNow, hasTasks) -> selectNow.get();
            case BACKOFF -> Backoff::new;
            case INTERRUPT -> () -> (selectNow, hasTasks) -> hasTasks ? selectNow.get() : SelectStrategy.SELECT;
            default -> throw new IllegalArgumentException("unknown idle strategy '" + name
                + "' (expected busy, backoff or interrupt)");
        };
    }

    /** Spin, then yield, then block; any ready event or task resets it. One instance per event loop. */
    private static final class Backoff implements SelectStrategy {
        private long idleSince = -1;

        @Override
        public int calculateStrategy(io.netty.util.IntSupplier selectNow, boolean hasTasks) throws Exception {
            int ready = selectNow.get();
            if (ready > 0 || hasTasks) {
                idleSince = -1;
                return ready;
            }
            long now = System.nanoTime();
            if (idleSince < 0) {
                idleSince = now;
            }
            long idle = now - idleSince;
            if (idle < SPIN_NANOS) {
                Thread.onSpinWait();
                return ready;
            }
            if (idle < YIELD_NANOS) {
                Thread.yield();
                return ready;
            }
            idleSince = -1;
            return SelectStrategy.SELECT;
        }
    }
}
