package io.nvmf4j.spdk;

import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.EngineUnavailableException;
import io.nvmf4j.engine.Engines;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.rdma.NativeLibraryLoader;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The spdk engine of the aarch64 package built on an x86-64 machine without SPDK cross-built for aarch64: it
 * names why it is unavailable instead of a bare "library not found". This JVM is the test's own (surefire
 * forks one per class here), and it claims to be aarch64 before the spdk binding loads, so the binding looks
 * for the aarch64 library exactly as on an Arm machine; build-native.sh wrote
 * {@code nvmf4j_spdk_aarch64.unavailable} into this module's classes. Where SPDK was cross-built the aarch64
 * library is there instead (NativeLibrariesTest checks its natives), and on an aarch64 build machine the
 * native build is the aarch64 one: then this does not apply.
 */
class SpdkAarch64UnavailableTest {
    @BeforeAll
    static void claimAarch64() {
        // an aarch64 build machine builds the aarch64 library natively (with SPDK when it has it)
        Assumptions.assumeTrue(NativeLibraryLoader.arch().equals("x86_64"),
            "only an x86-64 build leaves the aarch64 spdk library out");
        Assumptions.assumeTrue(SpdkAarch64UnavailableTest.class.getClassLoader()
                .getResource("META-INF/native/nvmf4j_spdk_aarch64.unavailable") != null,
            "SPDK was cross-built for aarch64: this build carries libnvmf4j_spdk_aarch64.so");
        System.setProperty("os.arch", "aarch64");
        assertThat(NativeLibraryLoader.arch()).isEqualTo("aarch64");
    }

    @Test
    void theCauseSaysSpdkIsNotCrossBuilt() {
        assertThat(Spdk.builtWithoutSpdk()).isTrue();
        assertThat(Spdk.unavailabilityCause())
            .startsWith("libnvmf4j_spdk has no aarch64 build in this package: SPDK and DPDK are not cross-built "
                + "for aarch64");
        assertThat(Spdk.version()).isNull();
        assertThat(Engines.runsOn(Engines.SPDK)).isNull();
    }

    @Test
    void theEngineRefusesToStartWithThatCause() throws Exception {
        TargetConfig cfg = EngineTarget.document(Engines.SPDK);
        assertThatThrownBy(() -> Engines.start(cfg, IoObserver.NONE))
            .isInstanceOf(EngineUnavailableException.class)
            .hasMessageStartingWith("engine spdk cannot run here: libnvmf4j_spdk has no aarch64 build")
            .hasMessageContaining("not cross-built");
    }
}
