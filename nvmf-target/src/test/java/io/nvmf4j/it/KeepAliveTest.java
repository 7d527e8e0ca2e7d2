package io.nvmf4j.it;

import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The keep-alive timer: an idle controller is torn down once KATO has passed without a command (not before, and
 * within ten times KATO: how soon after KATO depends on the machine's load), keep-alives hold it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class KeepAliveTest {
    private static final int KATO_MS = 1000;
    private static final long LIMIT_NANOS = TimeUnit.MILLISECONDS.toNanos(10L * KATO_MS);

    static TestTarget target;

    @BeforeAll
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void start() throws Exception {
        target = TestTarget.start();
    }

    @AfterAll
    static void stop() {
        if (target != null) {
            target.close();
        }
    }

    /**
     * The controller's last command is no earlier than the start of its Connect, so the target may close it no
     * earlier than KATO after that; it must close it within ten times KATO (it checks every KATO / 4).
     */
    @Test
    void idleControllerIsClosedAndANewOneWorks() throws Exception {
        long t0 = System.nanoTime();
        long deadline = t0 + LIMIT_NANOS;
        try (NvmeController idle = target.controller(1, TcpHostOptions.DEFAULT, KATO_MS)) {
            assertThat(idle.admin().queue().awaitClosed(Duration.ofNanos(Math.max(0, deadline - System.nanoTime()))))
                .as("admin queue closed by the target within 10 s of the Connect").isTrue();
            long closedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertThat(closedMs).as("ms from the Connect to the close: not before KATO").isGreaterThanOrEqualTo(KATO_MS);
            assertThat(idle.io(0).queue().awaitClosed(Duration.ofNanos(Math.max(0, deadline - System.nanoTime()))))
                .as("I/O queue closed by the target within 10 s of the Connect").isTrue();
        }
        try (NvmeController fresh = target.controller(1, TcpHostOptions.DEFAULT, KATO_MS)) {
            TestTarget.assertWriteReadBack(fresh.io(0), 100, 4096, 21);
            assertThat(fresh.admin().keepAlive().ok()).isTrue();
        }
    }

    /**
     * Keep Alives every 250 ms, with KATO 5 s, for 1.5 times KATO (without them the target, checking every KATO / 4,
     * closes the controller by 1.25 times KATO): a host stalled for a while (its core busy, a GC pause, a loaded
     * machine) still sends its next one well within KATO.
     */
    @Test
    void keepAlivesKeepTheControllerAlive() throws Exception {
        int kato = 5 * KATO_MS;
        try (NvmeController c = target.controller(1, TcpHostOptions.DEFAULT, kato)) {
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(kato * 3L / 2);
            while (System.nanoTime() < end) {
                assertThat(c.admin().keepAlive().ok()).as("Keep Alive").isTrue();
                Thread.sleep(250);
            }
            assertThat(c.admin().queue().isClosed()).as("admin queue open").isFalse();
            assertThat(c.io(0).queue().isClosed()).as("I/O queue open").isFalse();
            TestTarget.assertWriteReadBack(c.io(0), 200, 4096, 22);
        }
    }
}
