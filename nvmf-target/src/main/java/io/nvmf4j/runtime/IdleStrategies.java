package io.nvmf4j.runtime;

import io.netty.channel.SelectStrategy;
import io.netty.channel.SelectStrategyFactory;

import java.util.Locale;
import java.util.concurrent.locks.LockSupport;

/**
 * Idle strategies of a poll group, expressed as Netty {@link SelectStrategy}s: the poll group is a
 * Netty event loop and the strategy decides, on each pass, between a non-blocking poll (spin) and a
 * blocking wait in epoll.
 *
 * <ul>
 *   <li>{@code busy}: always poll without blocking; lowest latency, one core at 100% per poll group.</li>
 *   <li>{@code backoff} (default): after work, spin {@value #SPINS} empty polls, then yield
 *       {@value #YIELDS} times, then park briefly {@value #PARKS} times, then block in epoll until
 *       the next event: low latency under load, no CPU burned when idle.</li>
 *   <li>{@code interrupt}: block in epoll whenever there is nothing to do.</li>
 * </ul>
 */
public final class IdleStrategies {
    public static final String BUSY = "busy";
    public static final String BACKOFF = "backoff";
    public static final String INTERRUPT = "interrupt";

    static final int SPINS = 200;
    static final int YIELDS = 20;
    static final int PARKS = 10;
    static final long PARK_NANOS = 20_000;

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

    /** Spin, yield, park, then block; any ready event or task resets it. One instance per event loop. */
    private static final class Backoff implements SelectStrategy {
        private int idlePasses;

        @Override
        public int calculateStrategy(io.netty.util.IntSupplier selectNow, boolean hasTasks) throws Exception {
            int ready = selectNow.get();
            if (ready > 0 || hasTasks) {
                idlePasses = 0;
                return ready;
            }
            int n = ++idlePasses;
            if (n <= SPINS) {
                Thread.onSpinWait();
                return ready;
            }
            if (n <= SPINS + YIELDS) {
                Thread.yield();
                return ready;
            }
            if (n <= SPINS + YIELDS + PARKS) {
                LockSupport.parkNanos(PARK_NANOS);
                return ready;
            }
            idlePasses = 0;
            return SelectStrategy.SELECT;
        }
    }
}
