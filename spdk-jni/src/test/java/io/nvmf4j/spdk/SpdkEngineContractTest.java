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
        SpdkEngine spdk = (SpdkEngine) engine();
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
