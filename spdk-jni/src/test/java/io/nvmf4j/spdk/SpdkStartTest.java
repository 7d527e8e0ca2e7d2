package io.nvmf4j.spdk;

import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.EngineUnavailableException;
import io.nvmf4j.engine.Engines;
import io.nvmf4j.engine.IoObserver;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The spdk engine refusing to start, in a JVM of its own (SPDK starts at most once per process): each refusal
 * is one {@link EngineUnavailableException} with one clear message, and the JVM lives on. The order matters: the
 * hugepages check refuses before SPDK starts; the bad bdev starts SPDK, which stops again; after that no SPDK can
 * start in this process.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SpdkStartTest {
    @BeforeAll
    static void requireSpdk() {
        SpdkTools.assumeBuilt();
    }

    @Test
    @Order(1)
    void hugepagesThatAreNotReservedRefuseTheStart() throws Exception {
        TargetConfig cfg = EngineTarget.document(Engines.SPDK);
        cfg.spdk.hugepages = true;
        cfg.spdk.memSizeMb = (int) Math.min(1 << 20, Math.max(512, SpdkEngine.hugepagesFreeMb() + 64));
        assertThatThrownBy(() -> Engines.start(cfg, IoObserver.NONE))
            .isInstanceOf(EngineUnavailableException.class)
            .hasMessageStartingWith("engine spdk: spdk.memSizeMb is " + cfg.spdk.memSizeMb + " MiB of hugepages but ")
            .hasMessageContaining("\"hugepages\": false")
            .hasMessageNotContaining("\n");
        assertThat(SpdkNative.running()).as("SPDK was not started").isFalse();
    }

    @Test
    @Order(2)
    void aBdevSpdkRefusesStopsSpdkAgainWithSpdksReason(@TempDir Path dir) throws Exception {
        TargetConfig cfg = EngineTarget.document(Engines.SPDK);
        // a file the validator accepts but SPDK's aio bdev refuses: 1000 bytes are no whole number of 512-byte
        // blocks (numBlocks 0 takes the file as it is)
        Path odd = java.nio.file.Files.write(dir.resolve("odd.img"), new byte[1000]);
        BdevConfig b = new BdevConfig("odd0", "file", 512, 0);
        b.path = odd.toString();
        cfg.bdevs.add(b);
        assertThatThrownBy(() -> Engines.start(cfg, IoObserver.NONE))
            .isInstanceOf(EngineUnavailableException.class)
            .hasMessageStartingWith("engine spdk: ")
            .hasMessageContaining("odd0")
            .hasMessageContaining("Invalid argument");
        assertThat(SpdkNative.running()).as("SPDK stopped again").isFalse();
    }

    @Test
    @Order(3)
    void noSecondStartInTheSameProcess() throws Exception {
        TargetConfig cfg = EngineTarget.document(Engines.SPDK);
        assertThatThrownBy(() -> Engines.start(cfg, IoObserver.NONE))
            .isInstanceOf(EngineUnavailableException.class)
            .hasMessage("engine spdk: SPDK was already started once in this process; DPDK cannot initialise twice, "
                + "so start a new process");
    }
}
