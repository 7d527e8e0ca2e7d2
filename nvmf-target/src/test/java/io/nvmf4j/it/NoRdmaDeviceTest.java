package io.nvmf4j.it;

import io.nvmf4j.testhost.FreePorts;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.rdma.Rdma;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On a host without an RDMA device a configured rdma listener does not stop the target: it says why,
 * binds nothing for it, and NVMe/TCP serves as usual. (Inside the e2e guest, with soft-RoCE, the rdma
 * listener serves the Linux host instead; there this test skips.)
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class NoRdmaDeviceTest {
    @Test
    void rdmaListenerWithoutADeviceLeavesTcpWorking() throws Exception {
        Assumptions.assumeFalse(Rdma.isAvailable(), "this machine has an RDMA device; the guest e2e covers it");
        int rdmaPort = FreePorts.pick();
        ListenerConfig rdma = new ListenerConfig("rdma", TestTarget.ADDRESS, rdmaPort);
        try (TestTarget t = TestTarget.start(c -> c.subsystems.get(0).listeners.add(rdma));
             NvmeController c = t.controller(1, TcpHostOptions.DEFAULT)) {
            assertThat(t.nvmf().engine().rdmaUnavailability()).as("the reason is kept").isNotBlank()
                .isEqualTo(Rdma.unavailabilityCause());
            assertThat(t.nvmf().listeners()).as("nothing bound for the rdma listener").doesNotContainKey(rdma);
            assertThat(t.nvmf().configSnapshot().subsystems.get(0).listeners).as("but it stays configured")
                .contains(rdma);
            TestTarget.assertWriteReadBack(c.io(0), 0, 16384, 42);
        }
    }
}
