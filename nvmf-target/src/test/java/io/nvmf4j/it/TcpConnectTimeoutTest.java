package io.nvmf4j.it;

import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.TcpHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code tcp.connectTimeoutMs}: a socket that has not sent ICReq and completed a Connect in time is
 * closed, logged once and counted; a connected controller is not affected.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class TcpConnectTimeoutTest {
    /** tcp.connectTimeoutMs: what a controller's queues need to connect on a loaded machine fits in it. */
    private static final int TIMEOUT_MS = 3000;
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(10);
    private static final String QUEUE_LOGGER = "io.nvmf4j.transport.tcp.TcpQueue";

    static final CountingObserver observer = new CountingObserver();
    static TestTarget target;

    @BeforeAll
    static void start() throws Exception {
        target = TestTarget.start(c -> c.tcp.connectTimeoutMs = TIMEOUT_MS, observer);
    }

    @AfterAll
    static void stop() {
        if (target != null) {
            target.close();
        }
    }

    /** A connection opened by {@code open}: the target closes it, logs that once, and counts it once. */
    private static void assertClosedForTimeout(Opener open, String missing) throws Exception {
        int before = observer.connectTimeouts();
        try (LogCapture log = new LogCapture(QUEUE_LOGGER); TcpHost h = open.open()) {
            assertThat(h.awaitClosed(CLOSE_WAIT)).as("connection closed by the target").isTrue();
            Thread.sleep(100);
            List<String> lines = log.lines(":" + h.localPort());
            assertThat(lines).as("logged").hasSize(1);
            assertThat(lines.get(0)).contains("no " + missing + " within " + TIMEOUT_MS + " ms");
        }
        assertThat(observer.connectTimeouts() - before).as("connect timeouts counted").isEqualTo(1);
    }

    @FunctionalInterface
    private interface Opener {
        TcpHost open() throws Exception;
    }

    @Test
    void socketThatSendsNothingIsClosed() throws Exception {
        assertClosedForTimeout(target::rawTcp, "ICReq");
    }

    @Test
    void icReqWithoutConnectIsClosed() throws Exception {
        assertClosedForTimeout(() -> target.tcp(TcpHostOptions.DEFAULT), "Connect");
    }

    /**
     * The positive control is a socket that sends nothing, opened once the controller is connected: when its timer
     * has closed it, the timers of the controller's connections, armed before, have had their chance too.
     */
    @Test
    void connectedControllerOutlivesTheLimit() throws Exception {
        int before = observer.connectTimeouts();
        try (NvmeController c = target.controller(1, TcpHostOptions.DEFAULT)) {
            try (TcpHost silent = target.rawTcp()) {
                assertThat(silent.awaitClosed(CLOSE_WAIT)).as("a socket opened after them, closed by its timer").isTrue();
            }
            assertThat(c.admin().keepAlive().ok()).as("admin queue after the limit").isTrue();
            TestTarget.assertWriteReadBack(c.io(0), 0, 8192, 5);
        }
        assertThat(observer.connectTimeouts() - before).as("timeouts counted: the silent socket's only").isEqualTo(1);
    }
}
