package io.nvmf4j.spdk;

import io.nvmf4j.config.TargetConfig;
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

    /**
     * DPDK keeps each 2 MiB page's hugetlbfs file open, so the start's open-files check counts one descriptor per
     * page of spdk.memSizeMb (fio-jobs/scale.py measured 4,181 descriptors at 8,192 MiB before any connection).
     */
    @Test
    void theEngineHoldsOneDescriptorPerHugepageOfItsMemory() {
        TargetConfig c = new TargetConfig();
        c.engine = Engines.SPDK;
        c.spdk.memSizeMb = 8192;
        assertThat(new SpdkEngineProvider().descriptorsAtStart(c)).isEqualTo(4096);
        c.spdk.memSizeMb = 1025;
        assertThat(new SpdkEngineProvider().descriptorsAtStart(c)).as("a part page is a page").isEqualTo(513);
        c.spdk.hugepages = false;
        assertThat(new SpdkEngineProvider().descriptorsAtStart(c)).as("--no-huge: ordinary memory").isZero();
    }
}
