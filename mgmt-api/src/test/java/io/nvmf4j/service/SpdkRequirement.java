package io.nvmf4j.service;

import io.nvmf4j.testhost.FreePorts;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.service.api.TestService;
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

    /**
     * {@link ServiceProcess#document} for the spdk engine on core 0 in 512 MiB of ordinary memory, without core locks
     * (other suites on this machine may run SPDK on core 0 too), its API on a free port with {@code token}.
     */
    static TargetConfig document(String nqn, String token, int ioPort) {
        TargetConfig c = ServiceProcess.document(nqn, ioPort);
        c.engine = "spdk";
        c.spdk.coreMask = "0x1";
        c.spdk.memSizeMb = 512;
        c.spdk.hugepages = false;
        c.spdk.coreLocks = false;
        c.api.port = FreePorts.pick();
        c.api.token = token;
        return c;
    }
}
