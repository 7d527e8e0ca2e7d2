package io.nvmf4j.bdev;

import io.nvmf4j.config.StorageConfig;

import io.nvmf4j.nvme.NvmeStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.bdev.TestIo.allZero;
import static io.nvmf4j.bdev.TestIo.random;
import static io.nvmf4j.bdev.TestIo.read;
import static io.nvmf4j.bdev.TestIo.write;
import static java.util.Arrays.copyOfRange;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Deallocate and Write Zeroes on each backend: a regular file on ext4 (holes), a loop block device
 * (BLKDISCARD, which the loop driver turns into holes in its backing file), and a file system that cannot
 * punch holes (ramfs: zeros are written). Allocated space is measured with stat(1) ({@code st_blocks}).
 */
@ParameterizedClass(name = "{0}")
@EnumSource(IoPath.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class FileBdevDiscardTest {
    /** The I/O path every test here runs on (each runs on both). */
    @Parameter
    IoPath path;

    private static final int BS = 4096;
    private static final long GIB = 1L << 30;
    /** The largest piece of one range the command layer hands to the device (IoCommands.DEALLOCATE_CHUNK). */
    private static final int CHUNK = 1 << 30;

    private Path dir;
    private ScratchMounts mounts;
    private final List<FileBdev> open = new ArrayList<>();

    @BeforeEach
    void makeDir() throws IOException {
        dir = TestDirs.create("discard-");
        mounts = new ScratchMounts(dir);
    }

    @AfterEach
    void cleanUp() throws Exception {
        try {
            open.forEach(FileBdev::close);
        } finally {
            mounts.close();
            TestDirs.delete(dir);
        }
    }

    private static StorageConfig listing(Path device) {
        StorageConfig s = new StorageConfig();
        s.blockDevices.add(device.toString());
        return s;
    }

    private FileBdev open(Path file, long numBlocks) {
        // a block device (the loop device case) must be listed, as storage.blockDevices does in a config
        FileBdev d = file.startsWith("/dev/")
            ? path.open("f0", file, BS, numBlocks, false, listing(file))
            : path.open("f0", file, BS, numBlocks, false);
        open.add(d);
        return d;
    }

    private static int deallocate(BlockDevice d, long offset, long length) {
        for (long done = 0; done < length; ) {
            int n = (int) Math.min(length - done, CHUNK);
            try (TestIo io = TestIo.range(offset + done, n)) {
                IoPath.on(d).deallocate(io);
                int status = io.await();
                if (status != NvmeStatus.SUCCESS) {
                    return status;
                }
            }
            done += n;
        }
        return NvmeStatus.SUCCESS;
    }

    private static void flush(BlockDevice d) {
        try (TestIo f = TestIo.of(0, 0)) {
            IoPath.on(d).flush(f);
            assertThat(f.await()).isEqualTo(NvmeStatus.SUCCESS);
        }
    }

    /** Writes 32 MiB of data spread over the device, 1 MiB every {@code stride} bytes. */
    private static void writeSpread(BlockDevice d, long stride) {
        for (int i = 0; i < 32; i++) {
            assertThat(write(d, i * stride, random(1 << 20, 10 + i))).isEqualTo(NvmeStatus.SUCCESS);
        }
        flush(d);
    }

    /**
     * A 4 GiB sparse image with 32 MiB of data: deallocating all of it (as {@code blkdiscard} does) leaves
     * it sparse and reading zeros. Writing zeros instead would allocate all 4 GiB (and take far longer).
     */
    @Test
    void deallocateKeepsASparseImageSparse() throws Exception {
        Path file = dir.resolve("sparse.img");
        long size = 4 * GIB;
        FileBdev d = open(file, size / BS);
        writeSpread(d, 128L << 20);
        long before = allocatedBytes(file);
        assertThat(before).as("32 MiB written").isGreaterThanOrEqualTo(32L << 20);
        assertThat(deallocate(d, 0, size)).isEqualTo(NvmeStatus.SUCCESS);
        flush(d);
        long after = allocatedBytes(file);
        System.out.printf("file bdev deallocate: %s allocated %d bytes before, %d after (of %d)%n", file, before,
            after, size);
        assertThat(after).as("allocated bytes after deallocating the whole image").isLessThan(1L << 20);
        assertThat(d.allocatedBytes()).as("the bdev's own st_blocks figure").isEqualTo(after);
        assertThat(Files.size(file)).as("size kept").isEqualTo(size);
        for (int i = 0; i < 32; i += 7) {
            assertThat(allZero(read(d, i * (128L << 20), 1 << 20))).as("deallocated data reads zeros").isTrue();
        }
        DiscardLimits l = d.discardLimits();
        assertThat(l.deallocate()).isTrue();
        assertThat(l.freesSpace()).as("a hole frees the space").isTrue();
        assertThat(l.readsZeroes()).isTrue();
        assertThat(l.maxRanges()).isEqualTo(256);
        assertThat(l.maxRangeBlocks()).as("DMRSL: 1 GiB").isEqualTo(GIB / BS);
        assertThat(l.maxTotalBlocks()).as("DMSL: 16 GiB").isEqualTo(16 * GIB / BS);
    }

    /** Deallocating part of the data frees exactly that part; the rest keeps its bytes. */
    @Test
    void deallocateFreesOnlyItsRange() throws Exception {
        Path file = dir.resolve("part.img");
        FileBdev d = open(file, (64L << 20) / BS);
        byte[] data = random(16 << 20, 3);
        assertThat(write(d, 0, data)).isEqualTo(NvmeStatus.SUCCESS);
        flush(d);
        assertThat(deallocate(d, 4 << 20, 8 << 20)).isEqualTo(NvmeStatus.SUCCESS);
        flush(d);
        long allocated = allocatedBytes(file);
        assertThat(allocated).isBetween(8L << 20, (8L << 20) + (1 << 20));
        byte[] all = read(d, 0, 16 << 20);
        assertThat(copyOfRange(all, 0, 4 << 20)).isEqualTo(copyOfRange(data, 0, 4 << 20));
        assertThat(allZero(copyOfRange(all, 4 << 20, 12 << 20))).isTrue();
        assertThat(copyOfRange(all, 12 << 20, 16 << 20))
            .isEqualTo(copyOfRange(data, 12 << 20, 16 << 20));
    }

    /** Write Zeroes over written data reads zeros and keeps the neighbours (ZERO_RANGE on ext4). */
    @Test
    void writeZeroesReadsZeros() {
        FileBdev d = open(dir.resolve("wz.img"), (16L << 20) / BS);
        byte[] data = random(8 << 20, 4);
        write(d, 0, data);
        try (TestIo z = TestIo.range(BS, (4 << 20) - 2 * BS)) {
            IoPath.on(d).writeZeroes(z);
            assertThat(z.await()).isEqualTo(NvmeStatus.SUCCESS);
        }
        byte[] all = read(d, 0, 8 << 20);
        assertThat(copyOfRange(all, 0, BS)).isEqualTo(copyOfRange(data, 0, BS));
        assertThat(allZero(copyOfRange(all, BS, (4 << 20) - BS))).isTrue();
        assertThat(copyOfRange(all, (4 << 20) - BS, 8 << 20))
            .isEqualTo(copyOfRange(data, (4 << 20) - BS, 8 << 20));
    }

    /**
     * A loop block device over a sparse file: Deallocate is BLKDISCARD, which frees the space (the loop
     * driver punches its backing file); whether discarded blocks read zeros is the device's to say
     * (discard_zeroes_data, 0 on current kernels), so the limits do not promise it.
     */
    @Test
    void blockDeviceDeallocateIsADiscard() throws Exception {
        ScratchMounts.assumeRoot();
        Path backing = dir.resolve("backing.img");
        ScratchMounts.run(List.of("truncate", "-s", Long.toString(GIB), backing.toString()));
        Path dev = mounts.loop(backing);
        FileBdev d = open(dev, 0);
        assertThat(d.isBlockDevice()).isTrue();
        assertThat(d.numBlocks()).isEqualTo(GIB / BS);
        writeSpread(d, 32L << 20);
        long before = allocatedBytes(backing);
        assertThat(before).isGreaterThanOrEqualTo(32L << 20);
        assertThat(deallocate(d, 0, GIB)).isEqualTo(NvmeStatus.SUCCESS);
        flush(d);
        long after = allocatedBytes(backing);
        System.out.printf("block bdev deallocate: %s backing file allocated %d bytes before, %d after%n", dev, before,
            after);
        assertThat(after).as("the discard reached the backing file").isLessThan(1L << 20);
        DiscardLimits l = d.discardLimits();
        String q = "/sys/class/block/" + dev.getFileName() + "/queue/";
        assertThat(l.deallocate()).isTrue();
        assertThat(l.freesSpace()).isTrue();
        assertThat(l.readsZeroes()).as("discard_zeroes_data")
            .isEqualTo(Files.readString(Path.of(q + "discard_zeroes_data")).trim().equals("1"));
        try (TestIo z = TestIo.range(0, 1 << 20)) {
            write(d, 0, random(1 << 20, 9));
            IoPath.on(d).writeZeroes(z);
            assertThat(z.await()).as("BLKZEROOUT").isEqualTo(NvmeStatus.SUCCESS);
        }
        assertThat(allZero(read(d, 0, 1 << 20))).isTrue();
    }

    /**
     * ramfs cannot punch holes (nor zero ranges): Deallocate and Write Zeroes write zeros, and the limits
     * say so: nothing freed, and DMRSL / DMSL small enough that writing zeros stays bounded per command.
     */
    @Test
    void withoutHolePunchingZerosAreWritten() throws Exception {
        ScratchMounts.assumeRoot();
        Path ramfs = mounts.mount("ramfs", "");
        FileBdev d = open(ramfs.resolve("disk.img"), (16L << 20) / BS);
        DiscardLimits l = d.discardLimits();
        assertThat(l.deallocate()).isTrue();
        assertThat(l.freesSpace()).as("no holes on ramfs").isFalse();
        assertThat(l.readsZeroes()).isTrue();
        assertThat(l.maxRangeBlocks()).as("DMRSL: 8 MiB").isEqualTo((8L << 20) / BS);
        assertThat(l.maxTotalBlocks()).as("DMSL: 64 MiB").isEqualTo((64L << 20) / BS);
        byte[] data = random(8 << 20, 5);
        write(d, 0, data);
        assertThat(deallocate(d, BS, 3L << 20)).isEqualTo(NvmeStatus.SUCCESS);
        try (TestIo z = TestIo.range(4 << 20, 2 << 20)) {
            IoPath.on(d).writeZeroes(z);
            assertThat(z.await()).isEqualTo(NvmeStatus.SUCCESS);
        }
        byte[] all = read(d, 0, 8 << 20);
        assertThat(copyOfRange(all, 0, BS)).isEqualTo(copyOfRange(data, 0, BS));
        assertThat(allZero(copyOfRange(all, BS, BS + (3 << 20)))).isTrue();
        assertThat(copyOfRange(all, BS + (3 << 20), 4 << 20))
            .isEqualTo(copyOfRange(data, BS + (3 << 20), 4 << 20));
        assertThat(allZero(copyOfRange(all, 4 << 20, 6 << 20))).isTrue();
        assertThat(copyOfRange(all, 6 << 20, 8 << 20))
            .isEqualTo(copyOfRange(data, 6 << 20, 8 << 20));
    }

    /** st_blocks x 512 from stat(1) (also for the loop device's backing file, which the bdev does not hold). */
    static long allocatedBytes(Path file) throws IOException, InterruptedException {
        String[] f = ScratchMounts.run(List.of("stat", "-c", "%b %B", file.toString())).trim().split(" ");
        return Long.parseLong(f[0]) * Long.parseLong(f[1]);
    }
}
