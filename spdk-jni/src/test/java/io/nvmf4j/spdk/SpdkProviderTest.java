package io.nvmf4j.spdk;

import io.nvmf4j.engine.Engines;
import io.nvmf4j.rdma.NativeLibraryLoader;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** What the spdk engine says of itself through the seam when it can run here: its library and SPDK's version. */
class SpdkProviderTest {
    @Test
    void runsOnNamesTheLibraryForThisArchitectureAndSpdksVersion() {
        SpdkTools.assumeBuilt();
        assertThat(Engines.unavailabilityCause(Engines.SPDK)).isNull();
        assertThat(Spdk.version()).startsWith("SPDK v");
        assertThat(Engines.runsOn(Engines.SPDK))
            .isEqualTo("libnvmf4j_spdk for " + NativeLibraryLoader.arch() + " (" + Spdk.version() + ")");
    }
}
