package io.nvmf4j.it;

import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A read that one C2HData PDU carries (up to 128 KiB) is answered from one buffer: the C2HData header, its
 * padding to the host's HPDA, the data the device read into it, the data digest and the CapsuleResp. Longer reads
 * (several C2HData PDUs) still go out as staged headers around the data. Both, with and without digests, with
 * the padding of HPDA 0, 7 and 31, with SUCCESS instead of the CapsuleResp, and many at once mixed with writes.
 * The test host checks every digest and that each C2HData's data starts where HPDA asks.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class C2hFrameTest {
    private static final int BLOCK = TestTarget.BLOCK_SIZE;

    @ParameterizedTest(name = "hpda {0}, digests {1}, SUCCESS {2}")
    @CsvSource({"0, false, false", "0, true, false", "7, false, false", "7, true, true", "31, true, false",
        "31, false, true"})
    void readsOfEverySizeComeBackWhole(int hpda, boolean digests, boolean success) throws Exception {
        TcpHostOptions options = (digests ? TcpHostOptions.DIGESTS : TcpHostOptions.DEFAULT).withHpda(hpda);
        try (TestTarget t = TestTarget.start(cfg -> {
            cfg.tcp.mdtsBytes = 256 * 1024; // a read of two C2HData PDUs is allowed
            cfg.tcp.c2hSuccessWithSqFlowControl = success;
        }); NvmeController c = t.controller(1, options)) {
            NvmeHost io = c.io(0);
            // one block, 4 KiB, exactly one PDU (128 KiB), and two PDUs (132 KiB and 256 KiB)
            int[] blocks = {1, 4096 / BLOCK, 128 * 1024 / BLOCK, 132 * 1024 / BLOCK, 256 * 1024 / BLOCK};
            long lba = 0;
            for (int nlb : blocks) {
                byte[] data = Le.random(nlb * BLOCK, 1000 + nlb + hpda);
                assertThat(io.write(1, lba, data).ok()).isTrue();
                long respsBefore = io.queue().capsuleRespCount();
                Completion r = io.read(1, lba, nlb);
                assertThat(r.ok()).as("read of %d blocks: %s", nlb, r).isTrue();
                assertThat(r.data()).as("read of %d blocks", nlb).isEqualTo(data);
                assertThat(r.viaC2hSuccess()).as("read of %d blocks ended by SUCCESS", nlb).isEqualTo(success);
                assertThat(io.queue().capsuleRespCount() - respsBefore).isEqualTo(success ? 0 : 1);
                lba += nlb;
            }
            // a failed read: its CapsuleResp only, no data, whatever the option says
            Completion past = io.read(1, 1L << 40, 8);
            assertThat(past.ok()).isFalse();
            assertThat(past.viaC2hSuccess()).isFalse();
            // and the queue goes on
            assertThat(io.read(1, 0, 1).ok()).isTrue();
            assertThat(io.queue().protocolErrors()).as("host-side protocol errors").isEmpty();
        }
    }

    @ParameterizedTest(name = "digests {0}")
    @CsvSource({"false", "true"})
    void manyReadsInFlightWithWritesBetweenThem(boolean digests) throws Exception {
        TcpHostOptions options = (digests ? TcpHostOptions.DIGESTS : TcpHostOptions.DEFAULT).withHpda(3);
        try (TestTarget t = TestTarget.start(); NvmeController c = t.controller(1, options)) {
            NvmeHost io = c.io(0);
            int n = 96;
            int nlb = 4096 / BLOCK;
            byte[][] data = new byte[n][];
            for (int i = 0; i < n; i++) {
                data[i] = Le.random(nlb * BLOCK, 7000 + i);
                assertThat(io.write(1, (long) i * nlb, data[i]).ok()).isTrue();
            }
            for (int round = 0; round < 3; round++) {
                List<CompletableFuture<Completion>> reads = new ArrayList<>();
                List<CompletableFuture<Completion>> writes = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    reads.add(io.readAsync(1, (long) i * nlb, nlb));
                    if (i % 4 == 0) { // writes elsewhere, their CapsuleResps staged between the reads' frames
                        writes.add(io.writeAsync(1, (long) (n + i) * nlb, data[i]));
                    }
                }
                for (int i = 0; i < n; i++) {
                    Completion r = io.await(reads.get(i));
                    assertThat(r.ok()).as("round %d read %d: %s", round, i, r).isTrue();
                    assertThat(r.data()).as("round %d read %d", round, i).isEqualTo(data[i]);
                }
                for (CompletableFuture<Completion> w : writes) {
                    assertThat(io.await(w).ok()).isTrue();
                }
            }
            assertThat(io.queue().protocolErrors()).as("host-side protocol errors").isEmpty();
        }
    }
}
