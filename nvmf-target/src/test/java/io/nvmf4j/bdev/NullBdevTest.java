package io.nvmf4j.bdev;

import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.nvme.NvmeStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static io.nvmf4j.bdev.TestIo.allZero;
import static io.nvmf4j.bdev.TestIo.random;
import static io.nvmf4j.bdev.TestIo.read;
import static io.nvmf4j.bdev.TestIo.write;
import static org.assertj.core.api.Assertions.assertThat;

/** The null block device: reads zeros, discards writes, completes every call synchronously. */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class NullBdevTest {
    private static final int BS = 4096;

    @Test
    void geometryAsConfigured() {
        try (BlockDevice d = BlockDevices.create(new BdevConfig("n0", "null", BS, 1L << 30))) {
            assertThat(d).isInstanceOf(NullBdev.class);
            assertThat(d.name()).isEqualTo("n0");
            assertThat(d.blockSize()).isEqualTo(BS);
            assertThat(d.numBlocks()).as("no memory behind it, so any size is fine").isEqualTo(1L << 30);
            assertThat(d.persistent()).isFalse();
        }
    }

    @Test
    void readsZerosEvenWhereTheBufferHeldData() {
        try (NullBdev d = new NullBdev("n0", BS, 1024)) {
            // TestIo.read fills the buffer with 0xA5 first: the device must overwrite it
            assertThat(allZero(read(d, 0, 64 * 1024))).isTrue();
            assertThat(allZero(read(d, 1023L * BS, BS))).isTrue();
        }
    }

    @Test
    void writesAreDiscarded() {
        try (NullBdev d = new NullBdev("n0", BS, 1024)) {
            byte[] data = random(8 * BS, 9);
            assertThat(write(d, 0, data)).isEqualTo(NvmeStatus.SUCCESS);
            assertThat(allZero(read(d, 0, data.length))).as("a read after a write still returns zeros").isTrue();
        }
    }

    @Test
    void everyOperationCompletesSynchronouslyOnce() {
        try (NullBdev d = new NullBdev("n0", BS, 1024)) {
            for (String op : new String[] {"read", "write", "flush", "writeZeroes", "deallocate"}) {
                try (TestIo io = TestIo.of(BS, BS)) {
                    switch (op) {
                        case "read" -> d.read(io);
                        case "write" -> d.write(io);
                        case "flush" -> d.flush(io);
                        case "writeZeroes" -> d.writeZeroes(io);
                        default -> d.deallocate(io);
                    }
                    assertThat(io.isDone()).as("%s completed before returning", op).isTrue();
                    assertThat(io.syncCompletions.get()).as("%s sync completions", op).isEqualTo(1);
                    assertThat(io.asyncCompletions.get()).as("%s async completions", op).isZero();
                    assertThat(io.await()).as("%s status", op).isEqualTo(NvmeStatus.SUCCESS);
                }
            }
        }
    }
}
