package io.nvmf4j.service.metrics;

import io.nvmf4j.ControlException;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.EngineCapabilities;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.PoolConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.engine.Engine;
import io.nvmf4j.engine.Engines;
import io.nvmf4j.engine.VolumeRequest;
import io.nvmf4j.spdk.Spdk;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The spdk engine's meters: the per-namespace counters under the java engine's names move by exactly the
 * commands and bytes sent (read from SPDK's bdev statistics), SPDK's poll-group counts appear, the meters
 * that only the java engine's observer feeds are absent, and a removed namespace's meters go. Runs in a JVM of
 * its own (the surefire execution "spdk"): SPDK starts once per process.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SpdkMetricsTest {
    private static final String NQN = "nqn.2024-01.io.nvmf4j:spdk-metrics";
    private static final String HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:6d0e5d1c-4a8b-4f3e-9c11-000000000009";

    static Metrics metrics;
    static ConfigController<Engine> engine;
    static int port;

    @BeforeAll
    static void start() throws Exception {
        Assumptions.assumeFalse(Spdk.builtWithoutSpdk(), () -> "this build found no SPDK: "
            + Spdk.unavailabilityCause());
        assertThat(Spdk.unavailabilityCause()).as("the spdk engine was built and must load").isNull();
        TargetConfig c = new TargetConfig();
        c.engine = "spdk";
        c.spdk.hugepages = false;
        c.spdk.memSizeMb = 512;
        c.spdk.coreLocks = false; // other suites on this machine may run SPDK on core 0 too
        c.bdevs.add(new BdevConfig("m1", "malloc", 512, 32768));
        c.bdevs.add(new BdevConfig("m2", "malloc", 512, 16384));
        SubsystemConfig s = new SubsystemConfig();
        s.nqn = NQN;
        s.allowAnyHost = true;
        s.namespaces.add(new NamespaceConfig(1, "m1"));
        s.namespaces.add(new NamespaceConfig(2, "m2"));
        s.listeners.add(new ListenerConfig("tcp", "127.0.0.1", 0));
        c.subsystems.add(s);
        metrics = new Metrics();
        engine = Engines.start(c, metrics.observer());
        metrics.bind(engine);
        port = engine.listeners().values().iterator().next().getPort();
    }

    @AfterAll
    static void stop() {
        if (engine != null) {
            engine.close();
        }
        if (metrics != null) {
            metrics.close();
        }
    }

    private static Scrape scrape() {
        return new Scrape(metrics.scrape());
    }

    private static double io(Scrape s, String name, int nsid, String op) {
        return s.value(name, "subsystem", NQN, "nsid", Integer.toString(nsid), "op", op);
    }

    @Test
    void namespaceCountersMoveByExactlyTheCommandsAndBytesSent() throws Exception {
        try (NvmeController c = NvmeController.open("127.0.0.1", port, NQN, HOSTNQN, 0, 1, TcpHostOptions.DEFAULT)) {
            NvmeHost io = c.io(0);
            Scrape before = scrape();
            byte[] data = new byte[4096];
            for (int i = 0; i < 10; i++) {
                data[0] = (byte) i;
                assertThat(io.write(1, i * 8L, data).ok()).isTrue();
            }
            for (int i = 0; i < 5; i++) {
                Completion r = io.read(1, i * 8L, 16);
                assertThat(r.ok()).isTrue();
            }
            for (int i = 0; i < 3; i++) {
                assertThat(io.write(2, i, new byte[512]).ok()).isTrue();
            }
            Scrape after = scrape();
            assertThat(io(after, "nvmf_io_commands_total", 1, "write") - io(before, "nvmf_io_commands_total", 1, "write"))
                .isEqualTo(10);
            assertThat(io(after, "nvmf_io_commands_total", 1, "read") - io(before, "nvmf_io_commands_total", 1, "read"))
                .isEqualTo(5);
            assertThat(io(after, "nvmf_io_bytes_total", 1, "write") - io(before, "nvmf_io_bytes_total", 1, "write"))
                .isEqualTo(10 * 4096);
            assertThat(io(after, "nvmf_io_bytes_total", 1, "read") - io(before, "nvmf_io_bytes_total", 1, "read"))
                .isEqualTo(5 * 8192);
            assertThat(io(after, "nvmf_io_commands_total", 2, "write") - io(before, "nvmf_io_commands_total", 2, "write"))
                .isEqualTo(3);
            assertThat(io(after, "nvmf_spdk_io_latency_seconds_total", 1, "read")
                - io(before, "nvmf_spdk_io_latency_seconds_total", 1, "read")).isPositive();
            assertThat(after.value("nvmf_spdk_pollgroup_completed_io_total")
                - before.value("nvmf_spdk_pollgroup_completed_io_total")).isGreaterThanOrEqualTo(18);
            assertThat(after.value("nvmf_spdk_pollgroup_queues", "queue", "io")).isEqualTo(1);
            assertThat(after.value("nvmf_spdk_pollgroups")).isEqualTo(1);
            assertThat(after.value("nvmf_subsystem_controllers", "subsystem", NQN)).isEqualTo(1);
            assertThat(after.value("nvmf_subsystem_queues", "subsystem", NQN)).isEqualTo(2);
            assertThat(after.value("nvmf_transport_queues_connected_total", "transport", "all", "queue", "io"))
                .isGreaterThanOrEqualTo(1);
            assertThat(after.value("nvmf_pollgroup_busy_seconds_total")).as("SPDK's reactors poll: busy")
                .isGreaterThan(before.value("nvmf_pollgroup_busy_seconds_total"));
        }
    }

    @Test
    void everyMeterOfTheSpdkEngineIsDocumentedAndEveryDocumentedOneIsPublished() throws Exception {
        MetricsDoc doc = MetricsDoc.load();
        assertThat(doc.count("spdk")).as("spdk meters in " + MetricsDoc.FILE).isGreaterThan(10);
        Set<String> families = MetricsDoc.families(metrics.scrape());
        assertThat(doc.undocumented("spdk", families)).as("published but not in " + MetricsDoc.FILE).isEmpty();
        assertThat(doc.unpublished("spdk", families)).as("in " + MetricsDoc.FILE + " but not published").isEmpty();
        assertThat(metrics.scrape()).containsPattern("(?m)^nvmf4j_build_info\\{engine=\"spdk\",.*} 1(\\.0)?$");
    }

    /**
     * Per host and per controller, and the slowest I/Os: refused, each with its capability's reason; no per-host or
     * per-controller meters.
     */
    @Test
    void perHostPerControllerAndSlowestAreRefusedByName() {
        String perHost = EngineCapabilities.SPDK.refusal(EngineCapabilities.Feature.IO_PER_HOST);
        assertThat(perHost).startsWith("I/O per host and per controller is java engine only: SPDK's NVMe-oF target"
            + " keeps no I/O counts, bytes or latency per controller or host");
        for (Runnable view : new Runnable[] {metrics::hosts, () -> metrics.controllers(null, null)}) {
            assertThatThrownBy(view::run).isInstanceOf(ControlException.class).hasMessage(perHost);
        }
        assertThatThrownBy(() -> metrics.slowest(64)).isInstanceOf(ControlException.class)
            .hasMessage(EngineCapabilities.SPDK.refusal(EngineCapabilities.Feature.IO_SLOWEST))
            .hasMessageStartingWith("the slowest recent I/Os are java engine only: SPDK's target reports no single I/O");
        assertThat(metrics.scrape()).doesNotContain("nvmf_host_io_").doesNotContain("nvmf_controller_io_");
    }

    /**
     * A namespace's latency percentiles from SPDK's histogram of its bdev: one entry (op all) that counts the reads
     * and writes sent, ordered p50 <= p90 <= p99 <= p99.9 <= max, and the same percentiles as gauges in the scrape.
     */
    @Test
    void namespacePercentilesComeFromSpdksHistogram() throws Exception {
        LatencyPercentiles before = metrics.latency(NQN, 2).get(0);
        try (NvmeController c = NvmeController.open("127.0.0.1", port, NQN, HOSTNQN, 0, 1, TcpHostOptions.DEFAULT)) {
            NvmeHost io = c.io(0);
            for (int i = 0; i < 40; i++) {
                assertThat(io.write(2, i, new byte[512]).ok()).isTrue();
            }
            for (int i = 0; i < 20; i++) {
                assertThat(io.read(2, i, 1).ok()).isTrue();
            }
        }
        assertThat(metrics.latency(NQN, 2)).hasSize(1);
        LatencyPercentiles after = metrics.latency(NQN, 2).get(0);
        assertThat(after.op()).isEqualTo("all");
        assertThat(after.count() - before.count()).as("the reads and writes sent").isEqualTo(60);
        assertThat(after.p50Micros()).isPositive();
        assertThat(after.p50Micros()).isLessThanOrEqualTo(after.p90Micros());
        assertThat(after.p90Micros()).isLessThanOrEqualTo(after.p99Micros());
        assertThat(after.p99Micros()).isLessThanOrEqualTo(after.p999Micros());
        assertThat(after.p999Micros()).isLessThanOrEqualTo(after.maxMicros());
        Scrape s = scrape();
        double p50 = s.value("nvmf_spdk_io_latency_percentile_seconds", "subsystem", NQN, "nsid", "2",
            "percentile", "50");
        double p999 = s.value("nvmf_spdk_io_latency_percentile_seconds", "subsystem", NQN, "nsid", "2",
            "percentile", "99.9");
        assertThat(p50).isPositive().isLessThanOrEqualTo(p999);
        assertThat(metrics.latency(NQN, 9)).as("no such namespace").extracting(LatencyPercentiles::count)
            .containsExactly(0L);
    }

    /**
     * A namespace on a volume of an lvol pool names its bdev by the lvol's alias ({@code <pool>/<volume>}; SPDK's
     * own name is a UUID): its counters and percentiles read that bdev's statistics, not 0.
     */
    @Test
    void aNamespaceOnAnLvolVolumeHasItsCountersAndPercentiles() throws Exception {
        engine.addBdev(new BdevConfig("lvsbase", "malloc", 512, 32768));
        PoolConfig p = new PoolConfig("p0", PoolConfig.KIND_LVOL, null);
        p.baseBdev = "lvsbase";
        p.clusterSize = 1L << 20;
        engine.addPool(p);
        engine.createVolume("p0", VolumeRequest.thin("v1", 4L << 20));
        engine.addNamespace(NQN, new NamespaceConfig(4, "p0/v1"));
        try {
            Scrape before = scrape();
            try (NvmeController c = NvmeController.open("127.0.0.1", port, NQN, HOSTNQN, 0, 1,
                TcpHostOptions.DEFAULT)) {
                for (int i = 0; i < 6; i++) {
                    assertThat(c.io(0).write(4, i * 8L, new byte[4096]).ok()).isTrue();
                }
            }
            Scrape after = scrape();
            assertThat(io(after, "nvmf_io_commands_total", 4, "write") - io(before, "nvmf_io_commands_total", 4, "write"))
                .as("writes to the volume's namespace").isEqualTo(6);
            assertThat(io(after, "nvmf_io_bytes_total", 4, "write") - io(before, "nvmf_io_bytes_total", 4, "write"))
                .isEqualTo(6 * 4096);
            assertThat(after.value("nvmf_spdk_io_latency_percentile_seconds", "subsystem", NQN, "nsid", "4",
                "percentile", "99")).as("p99 of the volume's namespace").isPositive();
            assertThat(metrics.latency(NQN, 4).get(0).count()).as("REST view, by the alias").isGreaterThanOrEqualTo(6);
        } finally {
            engine.removeNamespace(NQN, 4);
            engine.deleteVolume("p0", "v1");
            engine.removePool("p0");
            engine.removeBdev("lvsbase");
        }
    }

    @Test
    void observerOnlyMetersAreAbsentAndRemovedNamespacesLoseTheirMeters() throws Exception {
        String text = metrics.scrape();
        assertThat(text).as("the java engine's transport and latency-histogram meters")
            .doesNotContain("nvmf_transport_connections").doesNotContain("nvmf_io_latency_seconds_bucket")
            .doesNotContain("subsystem=\"unknown\"").doesNotContain("nvmf_pollgroup_allocated_bytes");
        engine.addBdev(new BdevConfig("m3", "malloc", 512, 8192));
        engine.addNamespace(NQN, new NamespaceConfig(3, "m3"));
        // SPDK's own reads when it examines a new bdev count too, so only presence is checked here
        assertThat(scrape().has("nvmf_io_commands_total", "subsystem", NQN, "nsid", "3", "op", "read")).isTrue();
        engine.removeNamespace(NQN, 3);
        assertThat(metrics.scrape()).doesNotContain("nsid=\"3\"");
        engine.removeBdev("m3");
    }
}
