package io.nvmf4j.it;

import io.nvmf4j.testhost.FreePorts;
import io.nvmf4j.javaengine.JavaEngine;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.testhost.CephCluster;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.concurrent.TimeUnit;

import static io.nvmf4j.it.ReservationTest.block;
import static io.nvmf4j.it.ReservationTest.ok;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two gateways serving one RBD image of a real Ceph cluster ({@link CephCluster}), both paths optimized (a host may
 * spread I/O over them): without librbd's cache (the default) neither has a client-side write-back window, so
 * Identify reports no volatile write cache and a write completed through one gateway is what the other reads next.
 */
@ExtendWith(CephCluster.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RbdCoherenceTest extends RbdGateways {
    RbdCoherenceTest() {
        super("coherent");
    }

    @Test
    void bothGatewaysReportNoVolatileWriteCacheAndReadWhatTheOtherWrote() throws Exception {
        ListenerConfig[] l = new ListenerConfig[2];
        for (int i = 0; i < 2; i++) {
            l[i] = new ListenerConfig("tcp", TestTarget.ADDRESS, FreePorts.pick());
            gw[i] = JavaEngine.start(gatewayConfig(l[i], false));
        }
        NvmeController a = connectPort(l[0].port, ReservationTest.HOST_A);
        NvmeController b = connectPort(l[1].port, ReservationTest.HOST_A);
        for (NvmeController c : new NvmeController[] {a, b}) {
            Completion id = c.admin().identify(1, 0, 0);
            ok(id);
            assertThat(Le.u8(id.data(), 525) & 1).as("Identify VWC.present through an rbd gateway").isZero();
        }
        for (int i = 0; i < 20; i++) {
            NvmeController writer = i % 2 == 0 ? a : b;
            NvmeController reader = i % 2 == 0 ? b : a;
            ok(writer.io(0).write(1, 8, block(100 + i)));
            Completion read = reader.io(0).read(1, 8, 1);
            ok(read);
            assertThat(read.data()).as("round %d: read through the other gateway", i).isEqualTo(block(100 + i));
        }
    }
}
