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
    boolean discoveryLogListsItself() {
        return true;
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
}
