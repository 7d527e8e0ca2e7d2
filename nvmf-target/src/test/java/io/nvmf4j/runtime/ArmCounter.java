package io.nvmf4j.runtime;

import io.netty.util.concurrent.EventExecutor;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A poller that finds nothing and counts how often its poll group armed it: a blocking idle strategy arms its pollers
 * just before it blocks, so a count above zero shows the group went idle and is (about to be) blocked, whatever the
 * machine's speed, where a fixed pause only makes it likely.
 */
public final class ArmCounter implements IdleStrategies.Poller {
    private final AtomicInteger arms = new AtomicInteger();

    /** A counter polled on every pass of {@code loop} from now on (added on the loop's own thread). */
    public static ArmCounter on(EventExecutor loop) throws Exception {
        ArmCounter c = new ArmCounter();
        loop.submit(() -> IdleStrategies.current().addPoller(c)).get(10, TimeUnit.SECONDS);
        return c;
    }

    public int arms() {
        return arms.get();
    }

    /** Waits (up to 20 s) until the group has armed this counter at least once; whether it did. */
    public boolean awaitArmed() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (arms.get() == 0 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        return arms.get() > 0;
    }

    @Override
    public int poll() {
        return 0;
    }

    @Override
    public int beforeBlocking() {
        arms.incrementAndGet();
        return 0;
    }
}
