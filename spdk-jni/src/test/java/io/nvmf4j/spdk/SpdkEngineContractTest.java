package io.nvmf4j.spdk;

import io.nvmf4j.engine.Engines;
import io.nvmf4j.engine.EngineUnavailableException;
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
}
