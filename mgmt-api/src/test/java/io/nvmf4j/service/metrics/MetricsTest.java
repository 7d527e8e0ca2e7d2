package io.nvmf4j.service.metrics;

import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.PduCodec;
import io.nvmf4j.testhost.TcpHost;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static io.nvmf4j.service.metrics.MetricsTarget.SUBNQN;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The scrape after real NVMe/TCP traffic from the Java initiator: counters move by exactly the commands and
 * bytes sent, the latency histogram counts every read and write, errors land under their status, and the
 * transport, keep-alive and engine gauges follow connections.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class MetricsTest {
    private static final String SUB = "subsystem";
    private static final String NSID = "nsid";
    private static final String OP = "op";

    static MetricsTarget target;

    @BeforeAll
    static void start() throws Exception {
        target = MetricsTarget.start();
    }

    @AfterAll
    static void stop() {
        if (target != null) {
            target.close();
        }
    }

    private static Scrape scrape() {
        return new Scrape(target.metrics.scrape());
    }

    /** Scrapes until {@code condition} holds or 5 s pass; returns the last scrape. */
    private static Scrape awaitScrape(Predicate<Scrape> condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        Scrape s = scrape();
        while (!condition.test(s) && System.nanoTime() < deadline) {
            Thread.sleep(20);
            s = scrape();
        }
        return s;
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static double commands(Scrape s, int nsid, String op) {
        return s.value("nvmf_io_commands_total", SUB, SUBNQN, NSID, Integer.toString(nsid), OP, op);
    }

    private static double bytes(Scrape s, int nsid, String op) {
        return s.value("nvmf_io_bytes_total", SUB, SUBNQN, NSID, Integer.toString(nsid), OP, op);
    }

    private static double latencyCount(Scrape s, int nsid, String op) {
        return s.value("nvmf_io_latency_seconds_count", SUB, SUBNQN, NSID, Integer.toString(nsid), OP, op);
    }

    private static double latencyInfBucket(Scrape s, int nsid, String op) {
        return s.value("nvmf_io_latency_seconds_bucket", SUB, SUBNQN, NSID, Integer.toString(nsid), OP, op,
            "le", "+Inf");
    }

    @Test
    void countersMoveByExactlyTheCommandsAndBytesSent() throws Exception {
        try (NvmeController c = target.controller(1, 0)) {
            NvmeHost io = c.io(0);
            Scrape before = scrape();
            byte[] data = random(4096, 1);
            for (int i = 0; i < 10; i++) {
                assertThat(io.write(1, i * 8L, data).ok()).isTrue();
            }
            for (int i = 0; i < 5; i++) {
                Completion r = io.read(1, i * 8L, 16);
                assertThat(r.ok()).isTrue();
            }
            assertThat(io.flush(1).ok()).isTrue();
            assertThat(io.flush(1).ok()).isTrue();
            for (int i = 0; i < 3; i++) {
                assertThat(io.write(2, i, random(512, i)).ok()).isTrue();
            }
            // a command is recorded when its batch's responses are flushed, just after the host can have its
            // completion: wait until the last ones are in (then every count must be exact). A scrape reads one
            // meter after another while the poll group records, so each of the last commands' meters is awaited.
            Scrape after = awaitScrape(s -> commands(s, 2, "write") - commands(before, 2, "write") >= 3
                && bytes(s, 2, "write") - bytes(before, 2, "write") >= 3 * 512
                && latencyCount(s, 2, "write") - latencyCount(before, 2, "write") >= 3
                && commands(s, 1, "other") - commands(before, 1, "other") >= 2);

            assertThat(commands(after, 1, "write") - commands(before, 1, "write")).isEqualTo(10);
            assertThat(commands(after, 1, "read") - commands(before, 1, "read")).isEqualTo(5);
            assertThat(commands(after, 1, "other") - commands(before, 1, "other")).isEqualTo(2);
            assertThat(bytes(after, 1, "write") - bytes(before, 1, "write")).isEqualTo(10 * 4096);
            assertThat(bytes(after, 1, "read") - bytes(before, 1, "read")).isEqualTo(5 * 8192);
            assertThat(commands(after, 2, "write") - commands(before, 2, "write")).isEqualTo(3);
            assertThat(bytes(after, 2, "write") - bytes(before, 2, "write")).isEqualTo(3 * 512);
            assertThat(commands(after, 2, "read") - commands(before, 2, "read")).isZero();

            assertThat(latencyCount(after, 1, "write") - latencyCount(before, 1, "write")).isEqualTo(10);
            assertThat(latencyCount(after, 1, "read") - latencyCount(before, 1, "read")).isEqualTo(5);
            assertThat(latencyCount(after, 2, "write") - latencyCount(before, 2, "write")).isEqualTo(3);
            assertThat(latencyInfBucket(after, 1, "write")).isEqualTo(latencyCount(after, 1, "write"));
            assertThat(latencyInfBucket(after, 1, "read")).isEqualTo(latencyCount(after, 1, "read"));
            assertThat(after.value("nvmf_io_latency_seconds_sum", SUB, SUBNQN, NSID, "1", OP, "write"))
                .isGreaterThan(before.value("nvmf_io_latency_seconds_sum", SUB, SUBNQN, NSID, "1", OP, "write"));
            assertThat(after.value("nvmf_io_latency_seconds_max", SUB, SUBNQN, NSID, "1", OP, "write"))
                .isPositive().isLessThan(10);
            assertThat(after.seriesContaining("nvmf_io_latency_seconds_bucket{le=\"1.0E-6\","))
                .as("bucket ladder starts at 1 µs").isNotEmpty();
        }
    }

    @Test
    void errorsAreCountedUnderTheirStatus() throws Exception {
        try (NvmeController c = target.controller(1, 0)) {
            NvmeHost io = c.io(0);
            Scrape before = scrape();
            Completion outOfRange = io.read(2, MetricsTarget.NS2_BLOCKS, 1);
            assertThat(outOfRange.sc()).isEqualTo(0x80);
            Completion badNsid = io.read(9, 0, 1);
            assertThat(badNsid.sc()).isEqualTo(0x0B);
            Completion badLog = c.admin().getLogPage(0x55, 0, 0, 512);
            assertThat(badLog.sct()).isEqualTo(1);
            // each command is recorded when its response is flushed (see countersMove...): wait for the three
            String lid = StatusCounters.statusTag(badLog.status() >>> 1);
            Scrape after = awaitScrape(s -> commands(s, 2, "read") - commands(before, 2, "read") >= 1
                && s.value("nvmf_io_errors_total", SUB, "unknown", NSID, "0", "status", "0/0x0b")
                    - before.value("nvmf_io_errors_total", SUB, "unknown", NSID, "0", "status", "0/0x0b") >= 1
                && s.value("nvmf_admin_errors_total", SUB, SUBNQN, "status", lid)
                    - before.value("nvmf_admin_errors_total", SUB, SUBNQN, "status", lid) >= 1);

            String lbaOutOfRange = "0/0x80";
            assertThat(after.value("nvmf_io_errors_total", SUB, SUBNQN, NSID, "2", "status", lbaOutOfRange)
                - before.value("nvmf_io_errors_total", SUB, SUBNQN, NSID, "2", "status", lbaOutOfRange)).isEqualTo(1);
            assertThat(commands(after, 2, "read") - commands(before, 2, "read")).as("failed reads are commands").isEqualTo(1);
            assertThat(bytes(after, 2, "read") - bytes(before, 2, "read")).as("but move no bytes").isZero();
            assertThat(after.value("nvmf_io_errors_total", SUB, "unknown", NSID, "0", "status", "0/0x0b")
                - before.value("nvmf_io_errors_total", SUB, "unknown", NSID, "0", "status", "0/0x0b")).isEqualTo(1);
            assertThat(after.value("nvmf_admin_errors_total", SUB, SUBNQN, "status", lid)
                - before.value("nvmf_admin_errors_total", SUB, SUBNQN, "status", lid)).isEqualTo(1);
            assertThat(lid).isEqualTo("1/0x09");
        }
    }

    @Test
    void connectionsQueuesAndControllersFollowTheHost() throws Exception {
        // other tests' connections close asynchronously: start from none
        Scrape before = awaitScrape(s -> s.value("nvmf_transport_connections", "transport", "tcp") == 0
            && s.value("nvmf_subsystem_controllers", SUB, SUBNQN) == 0);
        double open = before.value("nvmf_transport_connections", "transport", "tcp");
        double controllers = before.value("nvmf_subsystem_controllers", SUB, SUBNQN);
        double queues = before.value("nvmf_subsystem_queues", SUB, SUBNQN);
        assertThat(open).isZero();
        assertThat(controllers).isZero();
        assertThat(queues).isZero();
        try (NvmeController c = target.controller(2, 0)) {
            Scrape during = scrape();
            assertThat(during.value("nvmf_transport_connections", "transport", "tcp") - open).isEqualTo(3);
            assertThat(during.value("nvmf_transport_queues_connected_total", "transport", "tcp", "queue", "admin")
                - before.value("nvmf_transport_queues_connected_total", "transport", "tcp", "queue", "admin"))
                .isEqualTo(1);
            assertThat(during.value("nvmf_transport_queues_connected_total", "transport", "tcp", "queue", "io")
                - before.value("nvmf_transport_queues_connected_total", "transport", "tcp", "queue", "io"))
                .isEqualTo(2);
            assertThat(during.value("nvmf_subsystem_controllers", SUB, SUBNQN) - controllers).isEqualTo(1);
            assertThat(during.value("nvmf_subsystem_queues", SUB, SUBNQN) - queues).isEqualTo(3);
            assertThat(during.value("nvmf_subsystem_namespaces", SUB, SUBNQN)).isEqualTo(2);
            assertThat(during.has("nvmf_subsystem_controllers", SUB, "nqn.2014-08.org.nvmexpress.discovery")).isTrue();
            assertThat(during.value("nvmf_pollgroup_busy_seconds_total")).as("busy seconds after a Connect")
                .isPositive();
        }
        // teardown is asynchronous and one scrape reads the gauges one after another: wait for all three
        Scrape after = awaitScrape(s -> s.value("nvmf_transport_connections", "transport", "tcp") == open
            && s.value("nvmf_subsystem_controllers", SUB, SUBNQN) == controllers
            && s.value("nvmf_subsystem_queues", SUB, SUBNQN) == queues);
        assertThat(after.value("nvmf_transport_connections", "transport", "tcp")).isEqualTo(open);
        assertThat(after.value("nvmf_subsystem_controllers", SUB, SUBNQN)).isEqualTo(controllers);
        assertThat(after.value("nvmf_subsystem_queues", SUB, SUBNQN)).isEqualTo(queues);
    }

    @Test
    void malformedPduIsATransportErrorByFes() throws Exception {
        String[] fes1 = {"transport", "tcp", "fes", "0x01"};
        double before = scrape().value("nvmf_transport_errors_total", fes1);
        try (TcpHost h = target.tcp()) {
            h.sendRaw(PduCodec.encode(0x0F, 0, new byte[16], null, false, false)); // unknown PDU type
            assertThat(h.awaitClosed(Duration.ofSeconds(5))).isTrue();
        }
        Scrape after = awaitScrape(s -> s.value("nvmf_transport_errors_total", fes1) > before);
        assertThat(after.value("nvmf_transport_errors_total", fes1) - before).isEqualTo(1);
    }

    @Test
    void connectTimeoutIsCounted() throws Exception {
        String[] tcp = {"transport", "tcp"};
        double before = scrape().value("nvmf_transport_connect_timeouts_total", tcp);
        try (TcpHost h = target.rawTcp()) {
            assertThat(h.awaitClosed(Duration.ofMillis(MetricsTarget.CONNECT_TIMEOUT_MS + 10_000)))
                .as("idle socket closed").isTrue();
        }
        Scrape after = awaitScrape(s -> s.value("nvmf_transport_connect_timeouts_total", tcp) > before);
        assertThat(after.value("nvmf_transport_connect_timeouts_total", tcp) - before).isEqualTo(1);
    }

    @Test
    void keepAliveExpiryIsCounted() throws Exception {
        double before = scrape().value("nvmf_keepalive_expired_total", SUB, SUBNQN);
        try (NvmeController c = target.controller(1, 1000)) {
            // KATO 1 s, checked every 250 ms: the 20 s are only a bound for a timer that never fires
            assertThat(c.admin().queue().awaitClosed(Duration.ofSeconds(20))).as("closed by keep-alive").isTrue();
        }
        Scrape after = awaitScrape(s -> s.value("nvmf_keepalive_expired_total", SUB, SUBNQN) > before);
        assertThat(after.value("nvmf_keepalive_expired_total", SUB, SUBNQN) - before).isEqualTo(1);
    }

    @Test
    void metersOfARemovedNamespaceAreUnregistered() throws Exception {
        target.nvmf.addBdev(new BdevConfig("m9", "malloc", 512, 2048));
        target.nvmf.addNamespace(SUBNQN, new NamespaceConfig(9, "m9"));
        try (NvmeController c = target.controller(1, 0)) {
            assertThat(c.io(0).write(9, 0, random(512, 9)).ok()).isTrue();
            Scrape with = awaitScrape(s -> commands(s, 9, "write") >= 1); // recorded at the flush, see above
            assertThat(commands(with, 9, "write")).isEqualTo(1);
            assertThat(with.value("nvmf_subsystem_namespaces", SUB, SUBNQN)).isEqualTo(3);
            target.nvmf.removeNamespace(SUBNQN, 9);
            target.nvmf.removeBdev("m9");
            Scrape without = scrape();
            assertThat(without.seriesContaining("nsid=\"9\"")).isEmpty();
            assertThat(without.value("nvmf_subsystem_namespaces", SUB, SUBNQN)).isEqualTo(2);
        }
    }

    @Test
    void anIdleTargetIsNotBusy() throws Exception {
        awaitScrape(s -> s.value("nvmf_transport_connections", "transport", "tcp") == 0);
        // The poll group (one) blocks in epoll, so a window of 300 ms shows it (almost) never busy. A window can
        // still catch it finishing a timer task while its thread waits for a core; a poll group that counted its
        // idling as busy shows a share near 1 in every window. So: windows until one is quiet, for up to 10 s.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        double share;
        do {
            double before = scrape().value("nvmf_pollgroup_busy_seconds_total");
            long start = System.nanoTime();
            Thread.sleep(300);
            double after = scrape().value("nvmf_pollgroup_busy_seconds_total");
            double wall = (System.nanoTime() - start) / 1e9;
            assertThat(after).as("a counter").isGreaterThanOrEqualTo(before);
            share = (after - before) / wall;
        } while (share >= 0.2 && System.nanoTime() < deadline);
        assertThat(share).as("busy share of an idle poll group, the last of its 300 ms windows in 10 s")
            .isLessThan(0.2);
    }

    @Test
    void fabricsCommandsOnIoQueuesAreNotIo() throws Exception {
        Scrape before = scrape();
        try (NvmeController c = target.controller(2, 0)) {
            assertThat(c.io(1).flush(1).ok()).isTrue();
        }
        // the count comes after the response (the observer runs once it went out): wait for it and the closes
        Scrape after = awaitScrape(s -> s.value("nvmf_transport_connections", "transport", "tcp") == 0
            && commands(s, 1, "other") - commands(before, 1, "other") >= 1);
        assertThat(commands(after, 1, "other") - commands(before, 1, "other")).isEqualTo(1);
        assertThat(after.value("nvmf_io_commands_total", SUB, "unknown", NSID, "0", OP, "other"))
            .as("the Connect commands of the I/O queues").isEqualTo(before.value("nvmf_io_commands_total", SUB, "unknown", NSID, "0", OP, "other"));
    }

    @Test
    void jvmMetricsArePublished() {
        Scrape s = scrape();
        assertThat(s.names()).contains("jvm_memory_used_bytes", "jvm_threads_live_threads", "process_cpu_usage",
            "jvm_gc_memory_allocated_bytes_total", "process_uptime_seconds");
    }
}
