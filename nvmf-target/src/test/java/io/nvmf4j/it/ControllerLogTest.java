package io.nvmf4j.it;

import ch.qos.logback.classic.spi.ILoggingEvent;
import io.nvmf4j.engine.ControllerLog;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
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
 * Controllers coming and going and refused Connects are logged at INFO with subsystem NQN, host NQN, the host's
 * ip:port and the transport (and cntlid, kato, queue count, reason), as text and as key/value pairs; a flood of
 * refusals is rate-limited.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ControllerLogTest {
    private static final String LOGGER = "io.nvmf4j.engine.ControllerLog";
    private static final String STRANGER = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-0000000000ff";
    private static TestTarget target;

    @BeforeAll
    static void start() throws Exception {
        target = TestTarget.start();
    }

    @AfterAll
    static void stop() {
        target.close();
    }

    @Test
    void connectAndDisconnectAreLoggedWithHostAddressAndTransport() throws Exception {
        try (LogCapture log = new LogCapture(LOGGER)) {
            int cntlid;
            String local;
            try (NvmeController c = NvmeController.open(TestTarget.ADDRESS, target.port, TestTarget.SUBNQN,
                TestTarget.HOSTNQN, 15000, 2, TcpHostOptions.DEFAULT)) {
                cntlid = c.cntlid();
                local = TestTarget.ADDRESS + ":" + c.admin().queue().localPort();
            }
            String connected = "controller " + cntlid + " of " + TestTarget.SUBNQN + " connected";
            ILoggingEvent in = await(log, connected);
            assertThat(in.getFormattedMessage()).isEqualTo(connected + ": host " + TestTarget.HOSTNQN + " at " + local
                + " over tcp, kato 15000 ms, admin queue of 32");
            assertThat(LogCapture.keyValues(in)).containsEntry("subnqn", TestTarget.SUBNQN)
                .containsEntry("hostnqn", TestTarget.HOSTNQN).containsEntry("host", local).containsEntry("transport", "tcp")
                .containsEntry("cntlid", cntlid).containsEntry("kato_ms", 15000);
            String disconnected = "controller " + cntlid + " of " + TestTarget.SUBNQN + " disconnected";
            ILoggingEvent out = await(log, disconnected);
            assertThat(out.getFormattedMessage()).startsWith(disconnected + ": host " + TestTarget.HOSTNQN + " at " + local
                + " over tcp, 2 I/O queue(s), up ").endsWith(": admin queue disconnected");
            assertThat(LogCapture.keyValues(out)).containsEntry("io_queues", 2).containsEntry("cntlid", cntlid)
                .containsEntry("reason", "admin queue disconnected").containsEntry("host", local);
        }
    }

    @Test
    void refusedHostsAreLoggedWithTheirAddressAndTheReason() throws Exception {
        ControllerLog.resetRefusalWindow(); // other tests in this JVM refuse Connects too
        try (LogCapture log = new LogCapture(LOGGER)) {
            String notAllowed = refuse(TestTarget.RESTRICTED_NQN, STRANGER, 0xFFFF);
            String unknown = refuse("nqn.2024-01.io.nvmf4j:nothing-here", TestTarget.HOSTNQN, 0xFFFF);
            String staticCntlid = refuse(TestTarget.SUBNQN, TestTarget.HOSTNQN, 5);
            ILoggingEvent a = await(log, "over tcp to " + TestTarget.RESTRICTED_NQN);
            assertThat(a.getFormattedMessage()).isEqualTo("connect refused: host " + STRANGER + " at " + notAllowed
                + " over tcp to " + TestTarget.RESTRICTED_NQN + " (qid 0): host not allowed");
            assertThat(LogCapture.keyValues(a)).containsEntry("hostnqn", STRANGER).containsEntry("host", notAllowed)
                .containsEntry("subnqn", TestTarget.RESTRICTED_NQN).containsEntry("reason", "host not allowed");
            assertThat(await(log, " at " + unknown + " ").getFormattedMessage()).endsWith(": unknown subsystem");
            assertThat(await(log, " at " + staticCntlid + " ").getFormattedMessage())
                .endsWith(": cntlid 5 asked (dynamic controllers only: 0xffff)");
        }
    }

    @Test
    void aFloodOfRefusalsIsRateLimited() throws Exception {
        ControllerLog.resetRefusalWindow();
        // and the real path: more than a window's worth of refusals writes at most that many lines
        try (LogCapture log = new LogCapture(LOGGER)) {
            for (int i = 0; i < 30; i++) {
                refuse(TestTarget.RESTRICTED_NQN, STRANGER, 0xFFFF);
            }
            List<String> lines = log.lines("connect refused");
            assertThat(lines).as("refusal lines of 30 refused Connects within one window").hasSize(20);
        }
    }

    /**
     * A hostnqn that holds a line break and a fake "connected" entry: the Connect is refused as an invalid parameter
     * pointing at the hostnqn in the Connect data, and the refusal is one line with the break escaped.
     */
    @Test
    void aHostnqnWithALineBreakIsRefusedAndCannotForgeALine() throws Exception {
        ControllerLog.resetRefusalWindow();
        String marker = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-0000000000aa";
        String forged = marker + "\n2026-12-06 07:00:00.000 INFO  ControllerLog - controller 7 of "
            + TestTarget.SUBNQN + " connected: host " + TestTarget.HOSTNQN + " at 10.0.0.9:4000 over tcp, kato 0 ms";
        try (LogCapture log = new LogCapture(LOGGER);
             TcpHost q = TcpHost.connect(TestTarget.ADDRESS, target.port, TcpHostOptions.DEFAULT)) {
            NvmeHost h = new NvmeHost(q, 512);
            var r = h.fabricsConnect(0, NvmeController.ADMIN_SQSIZE, 0xFFFF, 0, forged, TestTarget.SUBNQN,
                NvmeController.hostIdFor(marker));
            ILoggingEvent line = await(log, marker);
            assertThat(log.events(marker)).as("lines about that host").hasSize(1);
            assertThat(line.getFormattedMessage()).as("one line").doesNotContain("\n").doesNotContain("\r")
                .startsWith("connect refused: host " + marker + "\\n2026-12-06 07:00:00.000 INFO")
                .endsWith(": hostnqn holds a control character (U+000A at 68)");
            assertThat((String) LogCapture.keyValues(line).get("hostnqn")).doesNotContain("\n");
            assertThat(r.completion().sct()).as("status code type").isEqualTo(1);
            assertThat(r.completion().sc()).as("Connect Invalid Parameters").isEqualTo(0x82);
            assertThat(r.completion().dw0()).as("IATTR 1 (Connect data), IPO = hostnqn")
                .isEqualTo(1 << 16 | 512);
            assertThat(log.lines("")).as("no controller was made, none forged")
                .noneMatch(m -> m.startsWith("controller ") && m.contains(" connected: "));
        }
    }

    /**
     * A C1 character (NEL, U+0085, at which some viewers break lines) in the hostnqn, on a subsystem that allows any
     * host: refused, IPO at the hostnqn; the same in the subnqn points at the subnqn.
     */
    @Test
    void nqnsWithAC1CharacterAreRefused() throws Exception {
        String host = TestTarget.HOSTNQN + "\u0085";
        for (String[] c : new String[][] {{host, TestTarget.SUBNQN, "512"}, {TestTarget.HOSTNQN, TestTarget.SUBNQN
            + "\u0085", "256"}}) {
            try (TcpHost q = TcpHost.connect(TestTarget.ADDRESS, target.port, TcpHostOptions.DEFAULT)) {
                var r = new NvmeHost(q, 512).fabricsConnect(0, NvmeController.ADMIN_SQSIZE, 0xFFFF, 0, c[0], c[1],
                    NvmeController.hostIdFor(TestTarget.HOSTNQN));
                assertThat(r.completion().sc()).as("Connect Invalid Parameters for %s", c[2]).isEqualTo(0x82);
                assertThat(r.completion().dw0()).as("IATTR 1, IPO").isEqualTo(1 << 16 | Integer.parseInt(c[2]));
            }
        }
    }

    /** A Connect that the target refuses; answers the client's ip:port. */
    private static String refuse(String subnqn, String hostnqn, int cntlid) throws Exception {
        try (TcpHost q = TcpHost.connect(TestTarget.ADDRESS, target.port, TcpHostOptions.DEFAULT)) {
            NvmeHost h = new NvmeHost(q, 512);
            var r = h.fabricsConnect(0, NvmeController.ADMIN_SQSIZE, cntlid, 0, hostnqn, subnqn,
                NvmeController.hostIdFor(hostnqn));
            assertThat(r.completion().ok()).as("Connect to " + subnqn + " as " + hostnqn).isFalse();
            return TestTarget.ADDRESS + ":" + q.localPort();
        }
    }

    private static ILoggingEvent await(LogCapture log, String text) throws InterruptedException {
        return log.await(text, Duration.ofSeconds(5));
    }

}
