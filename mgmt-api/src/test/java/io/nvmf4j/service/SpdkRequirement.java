package io.nvmf4j.service;

import io.nvmf4j.spdk.Spdk;
import org.junit.jupiter.api.Assumptions;

import static org.assertj.core.api.Assertions.assertThat;

/** Tests of the spdk engine run wherever SPDK was built; they skip (saying why) only where it could not be. */
final class SpdkRequirement {
    private SpdkRequirement() {
    }

    static void assumeBuilt() {
        Assumptions.assumeFalse(Spdk.builtWithoutSpdk(), () -> "this build found no SPDK (no SPDK_DIR and no "
            + "vendored tarball): " + Spdk.unavailabilityCause());
        assertThat(Spdk.unavailabilityCause()).as("the spdk engine was built and must load").isNull();
    }
}
