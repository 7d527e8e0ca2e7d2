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

/** The keep-alive timer: an idle controller is torn down within KATO (plus slack), keep-alives hold it. */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class KeepAliveTest {
    private static final int KATO_MS = 1000;
    private static final long LIMIT_NANOS = TimeUnit.SECONDS.toNanos(4);

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

    @Test
    void idleControllerIsClosedAndANewOneWorks() throws Exception {
        try (NvmeController idle = target.controller(1, TcpHostOptions.DEFAULT, KATO_MS)) {
            long deadline = System.nanoTime() + LIMIT_NANOS;
            assertThat(idle.admin().queue().awaitClosed(Duration.ofNanos(deadline - System.nanoTime())))
                    .as("admin queue closed by the target within 4 s").isTrue();
            long left = Math.max(0, deadline - System.nanoTime());
            assertThat(idle.io(0).queue().awaitClosed(Duration.ofNanos(left)))
                    .as("I/O queue closed by the target within 4 s").isTrue();
        }
        try (NvmeController fresh = target.controller(1, TcpHostOptions.DEFAULT, KATO_MS)) {
            TestTarget.assertWriteReadBack(fresh.io(0), 100, 4096, 21);
            assertThat(fresh.admin().keepAlive().ok()).isTrue();
        }
    }

    /**
     * Keep Alives every 250 ms for twice KATO, with KATO 2 s: a host stalled for a while (its core busy, a GC
     * pause) still sends its next one well within KATO.
     */
    @Test
    void keepAlivesKeepTheControllerAlive() throws Exception {
        int kato = 2 * KATO_MS;
        try (NvmeController c = target.controller(1, TcpHostOptions.DEFAULT, kato)) {
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2L * kato);
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
