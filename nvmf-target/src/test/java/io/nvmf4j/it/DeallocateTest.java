package io.nvmf4j.it;

import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Dataset Management deallocate with ranges far larger than an int of bytes, and many ranges at once. */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class DeallocateTest {
    @Test
    void hugeRangesAreDeallocatedInPieces() throws Exception {
        // a 4 TiB null namespace: one range of 2^32 - 1 blocks is about 2 TiB, i.e. 2048 pieces of 1 GiB
        try (TestTarget t = TestTarget.start(c -> {
            c.bdevs.add(new BdevConfig("huge", "null", 512, 1L << 33));
            c.subsystems.get(0).namespaces.add(new NamespaceConfig(7, "huge"));
        }); NvmeController c = t.controller(1, TcpHostOptions.DEFAULT)) {
            Completion d = c.io(0).deallocate(7, new NvmeHost.Range(0, -1), new NvmeHost.Range(1L << 32, -1));
            assertThat(d.ok()).as("deallocate of two 2 TiB ranges: %s", d).isTrue();
            Completion past = c.io(0).deallocate(7, new NvmeHost.Range((1L << 33) - 10, 11));
            TestTarget.assertStatus(past, 0, 0x80, true);
        }
    }

    @Test
    void manyRangesOnMallocReadBackZeros() throws Exception {
        try (TestTarget t = TestTarget.start(); NvmeController c = t.controller(1, TcpHostOptions.DEFAULT)) {
            NvmeHost io = c.io(0);
            byte[] data = Le.random(256 * 512, 3);
            assertThat(io.write(1, 0, data).ok()).isTrue();
            NvmeHost.Range[] ranges = new NvmeHost.Range[256];
            for (int i = 0; i < 256; i++) {
                ranges[i] = new NvmeHost.Range(i, i % 2 == 0 ? 1 : 0);
            }
            assertThat(io.deallocate(1, ranges).ok()).isTrue();
            byte[] back = io.read(1, 0, 256).data();
            for (int i = 0; i < 256; i++) {
                boolean zeroed = i % 2 == 0;
                for (int b = 0; b < 512; b++) {
                    assertThat(back[i * 512 + b]).as("block %d byte %d", i, b)
                        .isEqualTo(zeroed ? (byte) 0 : data[i * 512 + b]);
                }
            }
        }
    }
}
