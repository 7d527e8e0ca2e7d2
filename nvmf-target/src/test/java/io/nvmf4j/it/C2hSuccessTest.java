package io.nvmf4j.it;

import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The C2HData SUCCESS flag towards a host that keeps SQ flow control on (this test host connects with CATTR 0):
 * by default a read ends with a CapsuleResp carrying SQHD, as the spec and nvmet have it; with
 * {@code c2hSuccessWithSqFlowControl} it ends with SUCCESS on the last C2HData and no CapsuleResp, as SPDK's
 * nvmf_tgt does.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class C2hSuccessTest {
    @Test
    void aHostWithSqFlowControlGetsACapsuleRespByDefault() throws Exception {
        try (TestTarget t = TestTarget.start(); NvmeController c = t.controller(1, TcpHostOptions.DEFAULT)) {
            NvmeHost io = c.io(0);
            byte[] data = Le.random(8 * 512, 11);
            assertThat(io.write(1, 0, data).ok()).isTrue();
            long respsBefore = io.queue().capsuleRespCount();
            Completion r = io.read(1, 0, 8);
            assertThat(r.ok()).as("read: %s", r).isTrue();
            assertThat(r.data()).isEqualTo(data);
            assertThat(r.viaC2hSuccess()).as("completed by SUCCESS instead of a CapsuleResp").isFalse();
            assertThat(io.queue().capsuleRespCount() - respsBefore).isEqualTo(1);
        }
    }

    @Test
    void withTheOptionItGetsSuccessAndNoCapsuleResp() throws Exception {
        try (TestTarget t = TestTarget.start(cfg -> cfg.tcp.c2hSuccessWithSqFlowControl = true);
             NvmeController c = t.controller(1, TcpHostOptions.DEFAULT)) {
            NvmeHost io = c.io(0);
            byte[] data = Le.random(8 * 512, 12);
            assertThat(io.write(1, 0, data).ok()).isTrue();
            long respsBefore = io.queue().capsuleRespCount();
            for (int i = 0; i < 3; i++) {
                Completion r = io.read(1, 0, 8);
                assertThat(r.ok()).as("read %d: %s", i, r).isTrue();
                assertThat(r.data()).isEqualTo(data);
                assertThat(r.viaC2hSuccess()).as("read %d completed by SUCCESS", i).isTrue();
            }
            assertThat(io.queue().capsuleRespCount() - respsBefore).as("CapsuleResps for three reads").isZero();
            // a failed read still gets its CapsuleResp with the status
            Completion past = io.read(1, (1L << 40), 1);
            assertThat(past.ok()).isFalse();
            assertThat(past.viaC2hSuccess()).isFalse();
        }
    }

    @Test
    void c2hSuccessOffTurnsBothOff() throws Exception {
        try (TestTarget t = TestTarget.start(cfg -> {
            cfg.tcp.c2hSuccess = false;
            cfg.tcp.c2hSuccessWithSqFlowControl = true;
        }); NvmeController c = t.controller(1, TcpHostOptions.DEFAULT)) {
            Completion r = c.io(0).read(1, 0, 1);
            assertThat(r.ok()).isTrue();
            assertThat(r.viaC2hSuccess()).isFalse();
        }
    }
}
