package io.nvmf4j.it;

import io.nvmf4j.bdev.DiscardLimits;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.it.TestTarget.assertStatus;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Identify Controller's VWC and ONCS, Identify CNS 06h's Dataset Management limits and feature 06h answer each host
 * from the namespaces it sees: a namespace masked from a host neither adds a capability (a volatile write cache,
 * Dataset Management) nor sets a limit for it. Two hosts over loopback TCP: nsid 1, seen by both, is a device with
 * no volatile cache that cannot deallocate; nsid 2, shown to the second host only, has a volatile write cache and
 * deallocates with DMRL 4, DMRSL 8, DMSL 16.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class HostViewIdentifyTest {
    private static final int ONCS = 520;
    private static final int VWC = 525;
    private static final int FID_VOLATILE_WRITE_CACHE = 0x06;
    private static final String OTHER = TestTarget.ALLOWED_HOSTNQN;

    @Test
    void eachHostIsAnsweredFromTheNamespacesItSees() throws Exception {
        RecordingBdev plain = new RecordingBdev("plain", 512, 4096);
        plain.persistent(false);
        plain.limits(new DiscardLimits(false, false, false, false, 256, 0, 0));
        RecordingBdev cached = new RecordingBdev("cached", 512, 4096);
        cached.limits(new DiscardLimits(true, true, true, false, 4, 8, 16));
        try (DeviceTarget t = DeviceTarget.start(plain, cached)) {
            t.subsystem.namespace(2).setHosts(List.of(OTHER));
            try (NvmeController a = t.controller(1);
                 NvmeController b = NvmeController.open(TestTarget.ADDRESS, t.port, DeviceTarget.SUBNQN, OTHER,
                     TestTarget.KATO_MS, 1, TcpHostOptions.DEFAULT)) {
                byte[] idA = a.admin().identify(0x01, 0, 0).data();
                byte[] nvmA = a.admin().identify(0x06, 0, 0).data();
                assertThat(Le.u8(idA, VWC) & 1).as("VWC for the host that sees no cached device").isZero();
                assertThat(Le.u16(idA, ONCS) & 0x4).as("ONCS DSM for the host whose device cannot deallocate").isZero();
                assertThat(Le.u8(nvmA, 3) | Le.u32(nvmA, 4) | Le.u64(nvmA, 8)).as("DSM limits for it").isZero();
                assertStatus(a.admin().getFeatures(FID_VOLATILE_WRITE_CACHE, 0), 0, 0x02, true);

                byte[] idB = b.admin().identify(0x01, 0, 0).data();
                byte[] nvmB = b.admin().identify(0x06, 0, 0).data();
                assertThat(Le.u8(idB, VWC) & 1).as("VWC for the host that sees the cached device").isEqualTo(1);
                assertThat(Le.u16(idB, ONCS) & 0x4).as("ONCS DSM for it").isEqualTo(0x4);
                assertThat(Le.u8(nvmB, 3)).as("DMRL").isEqualTo(4);
                assertThat(Le.u32(nvmB, 4)).as("DMRSL").isEqualTo(8);
                assertThat(Le.u64(nvmB, 8)).as("DMSL").isEqualTo(16);
                assertThat(b.admin().getFeatures(FID_VOLATILE_WRITE_CACHE, 0).ok()).as("feature 06h").isTrue();
            }
        }
    }
}
