package io.nvmf4j.bdev;

import io.nvmf4j.engine.ErrorInjection;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Keeps an error bdev's timer thread busy until closed: the thread that ends the commands a {@code timeout} injection
 * holds is itself held (it completes a flush of this class's own, which blocks it), so every command held meanwhile
 * stays on the device until the test lets them all go, however slowly a loaded machine runs the checks in between.
 * Its flush takes the bdev's {@code flush} injection (one command), so a test injects its own afterwards.
 */
public final class HeldErrorTimer implements AutoCloseable {
    private final CountDownLatch release = new CountDownLatch(1);
    private final StuckIo flush = new StuckIo(release);

    private HeldErrorTimer() {
    }

    /** Holds {@code d}'s timer thread; returns once it is held. */
    public static HeldErrorTimer of(ErrorBdev d) throws InterruptedException {
        HeldErrorTimer h = new HeldErrorTimer();
        d.inject(new ErrorInjection("flush", "timeout", 1, 1));
        d.flush(h.flush);
        if (!h.flush.entered.await(10, TimeUnit.SECONDS)) {
            h.close();
            throw new AssertionError("error bdev " + d.name() + ": its timer thread did not take the held flush");
        }
        return h;
    }

    /** Lets the timer thread go: the commands held meanwhile end as their holds say (at once when overdue). */
    @Override
    public void close() {
        release.countDown();
    }
}
