package io.nvmf4j.runtime;

import io.netty.channel.SelectStrategy;
import io.netty.channel.SelectStrategyFactory;
import io.netty.util.IntSupplier;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

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
 *
 * <p>{@link Poller}s (an RDMA completion queue) are polled on every pass, before the sockets; only when
 * the strategy is about to block are they asked to arm their notification (and polled once more), so a
 * {@code busy} or spinning poll group reaps completions without interrupts or system calls.
 */
public final class IdleStrategies {
    static final long SPIN_NANOS = 50_000;
    static final long YIELD_NANOS = 200_000;

    private IdleStrategies() {
    }

    /** A factory for the named strategy; throws IllegalArgumentException for an unknown name. */
    /** Something polled on every pass of a poll group (its thread only), such as a completion queue. */
    public interface Poller {
        /** Takes what completed; returns how much (0: nothing). */
        int poll();

        /**
         * The poll group is about to block in epoll: arm the notification that wakes it (an fd in its
         * epoll), then poll once more, since completions that arrived before arming raise nothing; returns
         * what that poll found (the poll group then does not block).
         */
        int beforeBlocking();
    }

    private static final ThreadLocal<Accounting> CURRENT = new ThreadLocal<>();

    /** The strategy of the poll group whose thread calls this, or null on any other thread. */
    public static Accounting current() {
        return CURRENT.get();
    }

    public static SelectStrategyFactory factory(String name) {
        return factory(name, new java.util.ArrayList<>());
    }

    /**
     * A factory for the named strategy; every strategy it creates is added to {@code created} so that its
     * idle time can be read (one strategy per event loop).
     */
    public static SelectStrategyFactory factory(String name, List<Accounting> created) {
        Supplier<Accounting> make = switch (name.toLowerCase(Locale.ROOT)) {
            case IdleStrategyNames.BUSY -> Busy::new;
            case IdleStrategyNames.BACKOFF -> Backoff::new;
            case IdleStrategyNames.INTERRUPT -> Interrupt::new;
            default -> throw new IllegalArgumentException("unknown idle strategy '" + name
                + "' (expected busy, backoff or interrupt)");
        };
        return () -> {
            Accounting a = make.get();
            created.add(a);
            return a;
        };
    }

    /**
     * Base of the strategies: polls once without blocking, lets the subclass decide, and counts the time
     * between passes that found nothing to do as idle (busy ratio = 1 - idle / wall time).
     */
    public abstract static class Accounting implements SelectStrategy {
        private static final VarHandle VERSION;
        private static final VarHandle IDLE;
        private static final VarHandle IDLE_SINCE;
        private static final long NOT_IDLE = Long.MIN_VALUE;

        static {
            try {
                MethodHandles.Lookup l = MethodHandles.lookup();
                VERSION = l.findVarHandle(Accounting.class, "version", long.class);
                IDLE = l.findVarHandle(Accounting.class, "idleNanos", long.class);
                IDLE_SINCE = l.findVarHandle(Accounting.class, "idleSinceNanos", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        // Written by the event loop only, at the transitions between work and idle; read by any thread
        // through idleNanos() as a seqlock (odd version = update in progress).
        @SuppressWarnings("unused") // through VERSION
        private long version;
        @SuppressWarnings("unused") // through IDLE
        private long idleNanos;
        /** Start of the idle stretch in progress (the loop may be blocked in epoll), or NOT_IDLE. */
        @SuppressWarnings("unused") // through IDLE_SINCE
        private long idleSinceNanos = NOT_IDLE;
        private boolean idle;
        private Poller[] pollers = new Poller[0];
        /** The event loop's first pass (its thread starts with its first task, not when the group is made). */
        private volatile long startNanos = NOT_IDLE;

        @Override
        public final int calculateStrategy(IntSupplier selectNow, boolean hasTasks) throws Exception {
            if (startNanos == NOT_IDLE) {
                startNanos = System.nanoTime();
                CURRENT.set(this);
            }
            int polled = 0;
            for (Poller p : pollers) {
                polled += p.poll();
            }
            int ready = selectNow.get();
            boolean work = ready > 0 || hasTasks || polled > 0;
            // The clock is read only where work and idle change places, and on idle passes of a strategy that
            // times its idling (backoff): a pass that continues what the last one did needs no reading (26 ns
            // each here, and a busy poll group under load makes about one pass per I/O).
            if (work) {
                if (idle) {
                    long now = System.nanoTime();
                    publish((long) IDLE.getOpaque(this) + (now - (long) IDLE_SINCE.getOpaque(this)), NOT_IDLE);
                    idle = false;
                }
                workDone();
                return ready;
            }
            long now = 0;
            if (!idle) {
                now = System.nanoTime();
                publish((long) IDLE.getOpaque(this), now);
                idle = true;
            } else if (timesIdling()) {
                now = System.nanoTime();
            }
            int next = whenIdle(now);
            if (next == SelectStrategy.SELECT && pollers.length > 0) {
                int late = 0;
                for (Poller p : pollers) {
                    late += p.beforeBlocking();
                }
                if (late > 0) {
                    return 0; // completions came in while arming: another pass instead of blocking
                }
            }
            return next;
        }

        /** Polls {@code p} on every pass from now on; call on this poll group's thread. */
        public final void addPoller(Poller p) {
            Poller[] a = java.util.Arrays.copyOf(pollers, pollers.length + 1);
            a[a.length - 1] = p;
            pollers = a;
        }

        /** Stops polling {@code p}; call on this poll group's thread. */
        public final void removePoller(Poller p) {
            pollers = java.util.Arrays.stream(pollers).filter(x -> x != p).toArray(Poller[]::new);
        }

        private void publish(long idleTotal, long idleSince) {
            long v = (long) VERSION.getOpaque(this);
            VERSION.setOpaque(this, v + 1);
            VarHandle.storeStoreFence();
            IDLE.setOpaque(this, idleTotal);
            IDLE_SINCE.setOpaque(this, idleSince);
            VERSION.setRelease(this, v + 2);
        }

        /**
         * Nanoseconds this event loop has spent without work, readable from any thread. Includes the idle
         * stretch in progress, so a loop blocked in epoll for a whole sampling interval counts as idle.
         */
        public final long idleNanos() {
            return idleNanos(System.nanoTime());
        }

        /** {@link #idleNanos()} with the idle stretch in progress counted up to {@code now}. */
        private long idleNanos(long now) {
            while (true) {
                long v = (long) VERSION.getAcquire(this);
                long total = (long) IDLE.getOpaque(this);
                long since = (long) IDLE_SINCE.getOpaque(this);
                VarHandle.loadLoadFence();
                if ((v & 1) == 0 && v == (long) VERSION.getOpaque(this)) {
                    return since == NOT_IDLE ? total : total + Math.max(0, now - since);
                }
                Thread.onSpinWait();
            }
        }

        /** Nanoseconds this event loop has spent working since it started (wall time less idle time). */
        public final long busyNanos() {
            long start = startNanos;
            if (start == NOT_IDLE) {
                return 0; // not run yet
            }
            long now = System.nanoTime(); // one clock reading for both terms: constant while idle, never back
            return Math.max(0, now - start - idleNanos(now));
        }

        /** A pass found work. */
        void workDone() {
        }

        /**
         * What to do after a pass that found nothing: 0 to poll again, or {@link SelectStrategy#SELECT}; {@code now}
         * is the clock on the first idle pass and, when {@link #timesIdling()}, on every one (otherwise 0).
         */
        abstract int whenIdle(long now);

        /** Whether {@link #whenIdle} needs the clock on every idle pass. */
        boolean timesIdling() {
            return false;
        }
    }

    private static final class Busy extends Accounting {
        @Override
        int whenIdle(long now) {
            Thread.onSpinWait();
            return 0;
        }
    }

    private static final class Interrupt extends Accounting {
        @Override
        int whenIdle(long now) {
            return SelectStrategy.SELECT;
        }
    }

    /** Spin, then yield, then block; any ready event or task resets it. */
    private static final class Backoff extends Accounting {
        private long idleSince = -1;

        @Override
        boolean timesIdling() {
            return true;
        }

        @Override
        int whenIdle(long now) {
            if (idleSince < 0) {
                idleSince = now;
            }
            long idle = now - idleSince;
            if (idle < SPIN_NANOS) {
                Thread.onSpinWait();
                return 0;
            }
            if (idle < YIELD_NANOS) {
                Thread.yield();
                return 0;
            }
            idleSince = -1;
            return SelectStrategy.SELECT;
        }

        @Override
        void workDone() {
            idleSince = -1;
        }
    }
}
