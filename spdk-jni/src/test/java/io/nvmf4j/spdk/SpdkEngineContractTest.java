package io.nvmf4j.spdk;

import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.engine.BdevIoStat;
import io.nvmf4j.engine.BdevLatency;
import io.nvmf4j.engine.EngineUnavailableException;
import io.nvmf4j.engine.Engines;
import io.nvmf4j.engine.PollGroupStat;
import io.nvmf4j.it.TestTarget;
import io.nvmf4j.testhost.NvmeController;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The engine contract against the spdk engine (SPDK's NVMe-oF target in this JVM). */
class SpdkEngineContractTest extends EngineContract {
    @BeforeAll
    static void start() throws Exception {
        SpdkTools.assumeBuilt();
        target = EngineTarget.start(Engines.SPDK);
    }

    @Override
    boolean listsTheDiscoverySubsystemOnEveryListener() {
        return true;
    }

    @Override
    boolean servesFirstNumBlocksOfALongerFile() {
        return false;
    }

    /**
     * SPDK takes any bytes in a Connect's hostnqn (the java engine refuses control characters): a host NQN with a
     * tab and a newline, as a field separator and a record separator of the controller list, is listed as it is,
     * and the other host's controller beside it too.
     */
    @Test
    void aHostnqnWithATabAndANewlineIsListedAsItIs() throws Exception {
        String odd = "nqn.2014-08.org.nvmexpress:uuid:7c0e2b1a-44d3-4f6e-9b1c-0000000000d4\t9\n1\tforged";
        try (NvmeController c = target.controller(io.nvmf4j.it.TestTarget.SUBNQN, odd, 1);
             NvmeController other = target.controller(1)) {
            assertThat(engine().controllers(io.nvmf4j.it.TestTarget.SUBNQN))
                .extracting(io.nvmf4j.engine.ControllerInfo::hostnqn)
                .contains(odd, io.nvmf4j.it.TestTarget.HOSTNQN);
        }
    }

    /**
     * spdk.isolateCores (on by default): once SPDK runs, the JVM's threads (this test's among them) may not
     * run on the reactor's core 0; the reactor keeps it. Only meaningful with another CPU to move them to.
     */
    @Test
    void theJvmsThreadsStayOffTheReactorsCore() throws Exception {
        // (availableProcessors() and /proc/self/status already show the JVM's threads' reduced set)
        String online = java.nio.file.Files.readString(java.nio.file.Path.of("/sys/devices/system/cpu/online")).trim();
        org.junit.jupiter.api.Assumptions.assumeTrue(io.nvmf4j.config.SpdkCores.parse("[" + online + "]").cardinality() > 1,
            "one CPU online: nothing to move the JVM's threads to");
        assertThat(allowed("/proc/thread-self/status").get(0)).as("this JVM thread may run on core 0").isFalse();
        java.util.concurrent.atomic.AtomicReference<java.util.BitSet> seen = new java.util.concurrent.atomic.AtomicReference<>();
        Thread t = new Thread(() -> seen.set(allowed("/proc/thread-self/status")));
        t.start();
        t.join();
        assertThat(seen.get().get(0)).as("a thread created after SPDK started inherits it").isFalse();
        assertThat(seen.get().isEmpty()).isFalse();
    }

    private static java.util.BitSet allowed(String status) {
        try {
            for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of(status))) {
                if (line.startsWith("Cpus_allowed_list:")) {
                    return io.nvmf4j.config.SpdkCores.parse("[" + line.substring(line.indexOf(':') + 1).trim() + "]");
                }
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        throw new AssertionError("no Cpus_allowed_list in " + status);
    }

    @Test
    void aSecondEngineInTheSameProcessIsRefusedWhileTheFirstRuns() throws Exception {
        assertThatThrownBy(() -> EngineTarget.start(Engines.SPDK))
            .isInstanceOf(EngineUnavailableException.class)
            .hasMessage("engine spdk: SPDK is already running in this process");
        assertThat(SpdkNative.running()).isTrue();
        try (NvmeController c = target.controller(1)) {
            TestData.assertWriteReadBack(c.io(0), 1, 40, 4096, 71);
        }
    }

    @Test
    void bdevAndPollGroupStatisticsCountTheHostsIo() throws Exception {
        SpdkEngine spdk = (SpdkEngine) engine().engine();
        try (NvmeController c = target.controller(2)) {
            BdevIoStat before = spdk.bdevIoStats().get("m3");
            PollGroupStat groupsBefore = spdk.pollGroupStat();
            assertThat(groupsBefore.pollGroups()).as("one poll group on core 0").isEqualTo(1);
            assertThat(groupsBefore.adminQueues()).as("admin queues now").isGreaterThanOrEqualTo(1);
            assertThat(groupsBefore.ioQueues()).as("I/O queues now").isGreaterThanOrEqualTo(2);
            for (int i = 0; i < 3; i++) {
                TestData.assertWriteReadBack(c.io(i % 2), 3, 64 * i, 4096, 131 + i);
            }
            BdevIoStat after = spdk.bdevIoStats().get("m3");
            assertThat(after.writeOps() - before.writeOps()).as("writes").isEqualTo(3);
            assertThat(after.bytesWritten() - before.bytesWritten()).as("bytes written").isEqualTo(3 * 4096);
            assertThat(after.readOps() - before.readOps()).as("reads").isEqualTo(3);
            assertThat(after.bytesRead() - before.bytesRead()).as("bytes read").isEqualTo(3 * 4096);
            assertThat(after.tickRate()).isPositive();
            assertThat(spdk.pollGroupStat().completedIo() - groupsBefore.completedIo()).as("completed NVMe I/O")
                .isGreaterThanOrEqualTo(6);
        }
    }

    /**
     * SPDK's latency histogram of a namespace's bdev, enabled when the namespace is added: a namespace added live
     * counts exactly the reads and writes sent to it, its percentiles move from 0 and are ordered, each bucket is at
     * most 12.5 % wide (the geometry the engine sets, not SPDK's default), and a namespace added at start counts too.
     */
    @Test
    void spdksLatencyHistogramOfANamespaceCountsItsIoWithOrderedPercentiles() throws Exception {
        SpdkEngine spdk = (SpdkEngine) engine().engine();
        engine().addBdev(new BdevConfig("lat0", "malloc", 512, 8192));
        try (NvmeController c = target.controller(2)) {
            engine().addNamespace(TestTarget.SUBNQN, new NamespaceConfig(9, "lat0"));
            BdevLatency before = spdk.bdevLatency("lat0").getOrDefault("lat0", BdevLatency.none("lat0"));
            assertThat(before.count()).as("nothing counted before the first I/O").isZero();
            assertThat(before.quantileNanos(0.5)).isZero();
            BdevLatency startBefore = spdk.bdevLatency(null).get("m3");
            assertThat(startBefore).as("the start's namespace 3 (bdev m3) has a histogram").isNotNull();
            byte[] data = new byte[4096];
            for (int i = 0; i < 120; i++) {
                data[0] = (byte) i;
                assertThat(c.io(i % 2).write(9, i * 8L, data).ok()).as("write %d", i).isTrue();
            }
            for (int i = 0; i < 80; i++) {
                assertThat(c.io(i % 2).read(9, i * 8L, 8).ok()).as("read %d", i).isTrue();
            }
            TestData.assertWriteReadBack(c.io(0), 3, 200, 4096, 141);

            BdevLatency after = spdk.bdevLatency("lat0").get("lat0");
            assertThat(after.count()).as("every read and write, nothing else").isEqualTo(200);
            double p50 = after.quantileNanos(0.5);
            double p99 = after.quantileNanos(0.99);
            double p999 = after.quantileNanos(0.999);
            assertThat(p50).as("p50 moved").isPositive();
            assertThat(p50).isLessThanOrEqualTo(p99);
            assertThat(p99).isLessThanOrEqualTo(p999);
            assertThat(p999).isLessThanOrEqualTo(after.maxNanos());
            assertThat(after.maxNanos()).as("malloc I/O: well under a second").isLessThan(1_000_000_000L);
            for (int i = 0; i < after.counts().length; i++) {
                assertThat(after.counts()[i]).as("only non-empty buckets").isPositive();
                if (after.startNanos()[i] >= 1000) {
                    assertThat(after.endNanos()[i] - after.startNanos()[i]).as("bucket %d width", i)
                        .isLessThanOrEqualTo(after.startNanos()[i] / 8 + 2);
                }
            }
            assertThat(spdk.bdevLatency(null).get("m3").count() - startBefore.count())
                .as("namespace 3: the write and the read back").isEqualTo(2);
            assertThatThrownBy(() -> spdk.bdevLatency("no-such-bdev")).isInstanceOf(SpdkException.class)
                .hasMessage("no bdev no-such-bdev");
            engine().removeNamespace(TestTarget.SUBNQN, 9);
        } finally {
            engine().removeBdev("lat0");
        }
    }
}
