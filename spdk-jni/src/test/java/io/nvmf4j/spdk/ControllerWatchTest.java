package io.nvmf4j.spdk;

import ch.qos.logback.classic.spi.ILoggingEvent;
import io.nvmf4j.it.LogCapture;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The spdk engine's controller log from successive controller lists (no SPDK needed). */
class ControllerWatchTest {
    private static final String NQN = "nqn.2026-12.io.nvmf4j:watch";
    private static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-0000000000d1";

    @Test
    void newControllersAreConnectedAndVanishedOnesDisconnectedWithTheirMostIoQueues() {
        ControllerWatch w = new ControllerWatch();
        ControllerWatch.Live a0 = new ControllerWatch.Live(NQN, 1, HOST, "10.0.0.1:40000", "tcp", 30000, 0);
        ControllerWatch.Live a2 = new ControllerWatch.Live(NQN, 1, HOST, "10.0.0.1:40000", "tcp", 30000, 2);
        ControllerWatch.Live b = new ControllerWatch.Live(NQN, 2, HOST, "[fe80::1]:40002", "rdma", 0, 1);
        try (LogCapture log = new LogCapture("io.nvmf4j.engine.ControllerLog")) {
            w.poll(List.of(a0), 0);
            w.poll(List.of(a2, b), 1_000_000_000L);
            w.poll(List.of(a0, b), 2_000_000_000L);
            w.poll(List.of(b), 5_000_000_000L);
            w.closeAll("target shutting down", 7_000_000_000L);
            assertThat(log.lines("controller")).containsExactly(
                "controller 1 of " + NQN + " connected: host " + HOST + " at 10.0.0.1:40000 over tcp, kato 30000 ms",
                "controller 2 of " + NQN + " connected: host " + HOST + " at [fe80::1]:40002 over rdma, kato 0 ms",
                "controller 1 of " + NQN + " disconnected: host " + HOST + " at 10.0.0.1:40000 over tcp, 2 I/O queue(s), "
                    + "up 5 s: gone from SPDK's controller list",
                "controller 2 of " + NQN + " disconnected: host " + HOST + " at [fe80::1]:40002 over rdma, 1 I/O queue(s), "
                    + "up 6 s: target shutting down");
            ILoggingEvent first = log.events("connected").get(0);
            assertThat(LogCapture.keyValues(first)).doesNotContainKey("admin_queue_size").containsEntry("cntlid", 1);
        }
    }

    @Test
    void spdkTransportIdsBecomeIpColonPort() {
        assertThat(SpdkEngine.hostAddress("TCP:10.0.0.1:45678")).isEqualTo("10.0.0.1:45678");
        assertThat(SpdkEngine.hostAddress("TCP:::1:45678")).isEqualTo("[::1]:45678");
        assertThat(SpdkEngine.hostAddress("RDMA:fe80::1:4420")).isEqualTo("[fe80::1]:4420");
        assertThat(SpdkEngine.hostAddress("-")).isEqualTo("-");
    }
}
