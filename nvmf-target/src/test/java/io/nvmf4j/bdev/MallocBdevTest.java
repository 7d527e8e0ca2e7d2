package io.nvmf4j.bdev;

import io.nvmf4j.os.FileNative;

import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.nvme.NvmeStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static io.nvmf4j.bdev.TestIo.allZero;
import static io.nvmf4j.bdev.TestIo.random;
import static io.nvmf4j.bdev.TestIo.read;
import static io.nvmf4j.bdev.TestIo.write;
import static org.assertj.core.api.Assertions.assertThat;

/** The RAM block device driven through {@link BlockDevice} directly. */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class MallocBdevTest {
    private static final int BS = 512;
    private static final long BLOCKS = 8192;  // 4 MiB

    private MallocBdev dev;

    @BeforeEach
    void create() {
        dev = new MallocBdev("m0", BS, BLOCKS);
    }

    @AfterEach
    void close() {
        dev.close();
    }

    /**
     * The memory is one 2 MiB-aligned mapping that the kernel backs with transparent huge pages where it gives
     * them ("always" or "madvise" in /sys/kernel/mm/transparent_hugepage/enabled; this project's machines have
     * "madvise"): a random 4 KiB read then does not miss the TLB each time. Where THP is off ("never") the
     * device must still work on ordinary pages, which is what is checked there.
     */
    @Test
    void memoryIsInTransparentHugePages() throws Exception {
        long size = 64L << 20;
        MallocBdev big = new MallocBdev("m1", 4096, size / 4096);
        try {
            byte[] data = random(4096, 7);
            write(big, 4096L * 1000, data);
            assertThat(read(big, 4096L * 1000, 4096)).isEqualTo(data);
            java.nio.file.Path thp = java.nio.file.Path.of("/sys/kernel/mm/transparent_hugepage/enabled");
            String mode = java.nio.file.Files.exists(thp) ? java.nio.file.Files.readString(thp).trim() : "absent";
            if (mode.contains("[never]") || mode.equals("absent")) {
                System.out.println("transparent huge pages " + mode + ": ordinary pages, the device works on them");
                return;
            }
            assertThat(big.address() % (2 << 20)).as("address 2 MiB-aligned").isZero();
            long hugeKb = anonHugeKb(big.address());
            assertThat(hugeKb).as("AnonHugePages of the mapping (THP %s)", mode).isGreaterThanOrEqualTo(size / 2 / 1024);
        } finally {
            big.close();
        }
    }

    @Test
    void aSizeThatIsNoWholePageWorks() {
        MallocBdev odd = new MallocBdev("m2", 512, 3);
        try {
            byte[] data = random(1536, 9);
            write(odd, 0, data);
            assertThat(read(odd, 0, 1536)).isEqualTo(data);
        } finally {
            odd.close();
        }
        assertThat(odd.address()).isZero();
    }

    /** The mapping calls refuse a length or address that cannot be right with -EINVAL, and nothing is mapped. */
    @Test
    void mappingRefusesBadLengthsAndAddresses() {
        assertThat(FileNative.failure()).as("libnvmf4j_bdev loaded").isNull();
        assertThat(FileNative.mapAnonymous(0, true)).isEqualTo(-FileNative.EINVAL);
        assertThat(FileNative.mapAnonymous(-4096, false)).isEqualTo(-FileNative.EINVAL);
        assertThat(FileNative.mapAnonymous(Long.MAX_VALUE, true)).as("more than the address space (ENOMEM)").isNegative();
        assertThat(FileNative.unmap(0, 4096)).isEqualTo(-FileNative.EINVAL);
        assertThat(FileNative.unmap(dev.address(), 0)).isEqualTo(-FileNative.EINVAL);
        // the device those calls named is untouched
        byte[] data = random(BS, 11);
        write(dev, 0, data);
        assertThat(read(dev, 0, BS)).isEqualTo(data);
    }

    /** The AnonHugePages of the mapping of /proc/self/smaps that starts at {@code address}, in kB. */
    private static long anonHugeKb(long address) throws java.io.IOException {
        String start = Long.toHexString(address) + "-";
        boolean in = false;
        for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/smaps"))) {
            if (line.matches("^[0-9a-f]+-[0-9a-f]+ .*")) {
                in = line.startsWith(start);
            } else if (in && line.startsWith("AnonHugePages:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        throw new AssertionError("no mapping at 0x" + Long.toHexString(address) + " in /proc/self/smaps");
    }

    @Test
    void reportsItsGeometry() {
        assertThat(dev.name()).isEqualTo("m0");
        assertThat(dev.blockSize()).isEqualTo(BS);
        assertThat(dev.numBlocks()).isEqualTo(BLOCKS);
        assertThat(dev.persistent()).as("RAM does not survive the process").isFalse();
    }

    @Test
    void freshDeviceReadsZeros() {
        assertThat(allZero(read(dev, 0, 64 * 1024))).as("first 64 KiB").isTrue();
        assertThat(allZero(read(dev, (BLOCKS - 8) * BS, 8 * BS))).as("last 8 blocks").isTrue();
    }

    @Test
    void writeThenReadAtSeveralOffsets() {
        // adjacent and scattered, non-overlapping ranges of several sizes
        long[] offsets = {0, BS, 10 * BS, 4096 * 3, (BLOCKS - 1) * BS};
        int[] lengths = {BS, 4096, 3 * BS, 128 * 1024, BS};
        for (int i = 0; i < offsets.length; i++) {
            byte[] data = random(lengths[i], 100 + i);
            assertThat(write(dev, offsets[i], data)).as("write at %d", offsets[i]).isEqualTo(NvmeStatus.SUCCESS);
        }
        // read back after all writes, so that a later write clobbering an earlier one is caught
        for (int i = 0; i < offsets.length; i++) {
            byte[] expected = random(lengths[i], 100 + i);
            assertThat(read(dev, offsets[i], lengths[i])).as("data at %d", offsets[i]).isEqualTo(expected);
        }
    }

    /**
     * Copies of {@link MallocBdev#NATIVE_COPY_MIN} to {@link MallocBdev#NATIVE_COPY_MAX} bytes go through libc's
     * memcpy, the rest through the JVM's stub: lengths on both sides of both bounds, written next to each other
     * (a copy one byte too long, or in the wrong direction, shows in a neighbour or in what is read back), each
     * read back whole and in pieces that cross the bounds the other way.
     */
    @Test
    void copiesOnBothSidesOfTheNativeCopyBoundsKeepTheirBytes() {
        assertThat(dev.mapped()).as("the native library maps the device, so the native copy is used").isTrue();
        int min = MallocBdev.NATIVE_COPY_MIN;
        int max = MallocBdev.NATIVE_COPY_MAX;
        int[] lengths = {min - BS, min, min + BS, 3 * min, max - BS, max, max + BS, 2 * max};
        long at = 0;
        long[] offsets = new long[lengths.length];
        for (int i = 0; i < lengths.length; i++) {
            offsets[i] = at;
            assertThat(write(dev, at, random(lengths[i], 300 + i))).isEqualTo(NvmeStatus.SUCCESS);
            at += lengths[i];
        }
        assertThat(at).isLessThanOrEqualTo(BLOCKS * BS);
        for (int i = 0; i < lengths.length; i++) {
            byte[] expected = random(lengths[i], 300 + i);
            assertThat(read(dev, offsets[i], lengths[i])).as("%d bytes at %d", lengths[i], offsets[i])
                .isEqualTo(expected);
            // the first min + BS bytes (a native copy), then the rest (native or stub, by its length)
            int head = Math.min(lengths[i], min + BS);
            assertThat(read(dev, offsets[i], head)).isEqualTo(java.util.Arrays.copyOf(expected, head));
            if (head < lengths[i]) {
                assertThat(read(dev, offsets[i] + head, lengths[i] - head))
                    .isEqualTo(java.util.Arrays.copyOfRange(expected, head, lengths[i]));
            }
        }
        assertThat(read(dev, at, BS)).as("the block after the last write").isEqualTo(new byte[BS]);
    }

    @Test
    void completesSynchronouslyExactlyOnce() {
        try (TestIo io = TestIo.of(0, random(BS, 1))) {
            dev.write(io);
            assertThat(io.isDone()).as("complete before write() returns").isTrue();
            assertThat(io.syncCompletions.get()).isEqualTo(1);
            assertThat(io.asyncCompletions.get()).isZero();
            assertThat(io.completionThread).isSameAs(Thread.currentThread());
        }
        try (TestIo io = TestIo.of(0, BS)) {
            dev.read(io);
            assertThat(io.completions()).isEqualTo(1);
            assertThat(io.syncCompletions.get()).isEqualTo(1);
        }
    }

    @Test
    void writeZeroesAndDeallocateReadBackZeros() {
        byte[] data = random(32 * BS, 7);
        write(dev, 0, data);
        try (TestIo z = TestIo.of(4 * BS, 4 * BS)) {
            dev.writeZeroes(z);
            assertThat(z.await()).isEqualTo(NvmeStatus.SUCCESS);
        }
        try (TestIo d = TestIo.of(16 * BS, 8 * BS)) {
            dev.deallocate(d);
            assertThat(d.await()).isEqualTo(NvmeStatus.SUCCESS);
        }
        byte[] all = read(dev, 0, 32 * BS);
        assertThat(slice(all, 0, 4 * BS)).as("before the zeroed range").isEqualTo(slice(data, 0, 4 * BS));
        assertThat(allZero(slice(all, 4 * BS, 4 * BS))).as("write-zeroed range").isTrue();
        assertThat(slice(all, 8 * BS, 8 * BS)).as("between the ranges").isEqualTo(slice(data, 8 * BS, 8 * BS));
        assertThat(allZero(slice(all, 16 * BS, 8 * BS))).as("deallocated range").isTrue();
        assertThat(slice(all, 24 * BS, 8 * BS)).as("after the ranges").isEqualTo(slice(data, 24 * BS, 8 * BS));
    }

    @Test
    void flushSucceeds() {
        try (TestIo f = TestIo.of(0, 0)) {
            dev.flush(f);
            assertThat(f.await()).isEqualTo(NvmeStatus.SUCCESS);
            assertThat(f.completions()).isEqualTo(1);
        }
    }

    @Test
    void twoDevicesAreIndependent() {
        try (MallocBdev other = new MallocBdev("m1", BS, BLOCKS)) {
            byte[] a = random(8192, 21);
            byte[] b = random(8192, 22);
            write(dev, 0, a);
            assertThat(allZero(read(other, 0, 8192))).as("a write to m0 is not seen on m1").isTrue();
            write(other, 0, b);
            assertThat(read(dev, 0, 8192)).as("m0 keeps its data").isEqualTo(a);
            assertThat(read(other, 0, 8192)).as("m1 has its own data").isEqualTo(b);
        }
    }

    @Test
    void blockDevicesCreatesMallocFromConfig() {
        try (BlockDevice d = BlockDevices.create(new BdevConfig("cfg", "malloc", 4096, 16))) {
            assertThat(d).isInstanceOf(MallocBdev.class);
            assertThat(d.blockSize()).isEqualTo(4096);
            assertThat(d.numBlocks()).isEqualTo(16);
            byte[] data = random(16 * 4096, 3);
            write(d, 0, data);
            assertThat(read(d, 0, data.length)).isEqualTo(data);
        }
    }

    @Test
    void closeIsIdempotent() {
        MallocBdev d = new MallocBdev("twice", BS, 8);
        d.close();
        d.close();
        assertThat(d.numBlocks()).isEqualTo(8);
    }

    private static byte[] slice(byte[] b, int off, int len) {
        byte[] s = new byte[len];
        System.arraycopy(b, off, s, 0, len);
        return s;
    }
}
