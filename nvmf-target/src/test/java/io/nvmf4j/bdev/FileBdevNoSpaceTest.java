package io.nvmf4j.bdev;

import io.nvmf4j.nvme.NvmeStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.bdev.TestIo.random;
import static io.nvmf4j.bdev.TestIo.read;
import static io.nvmf4j.bdev.TestIo.write;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Disk full: a sparse 8 MiB file bdev on a 1 MiB tmpfs ({@link ScratchMounts}, root). Writes into the
 * holes fail once the file system is full with Capacity Exceeded (ENOSPC through BdevErrors), not Write
 * Fault, and the device is not poisoned: what was written reads back, allocated blocks can be overwritten,
 * a flush succeeds, and after space is freed (Deallocate punches the holes back) writes succeed again.
 */
@ParameterizedClass(name = "{0}")
@EnumSource(IoPath.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class FileBdevNoSpaceTest {
    /** The I/O path every test here runs on (each runs on both). */
    @Parameter
    IoPath path;

    private static final int BS = 4096;
    private static final int CHUNK = 64 << 10;
    private static final long BLOCKS = (8L << 20) / BS;

    private Path dir;
    private ScratchMounts mounts;
    private FileBdev d;

    @BeforeEach
    void setUp() throws Exception {
        ScratchMounts.assumeRoot();
        dir = TestDirs.create("nospace-");
        mounts = new ScratchMounts(dir);
        Path fs = mounts.mount("tmpfs", "size=1m");
        d = path.open("full", fs.resolve("disk.img"), BS, BLOCKS, false);
    }

    @AfterEach
    void tearDown() throws Exception {
        if (mounts == null) {
            return;
        }
        try {
            if (d != null) {
                d.close();
            }
        } finally {
            mounts.close();
            TestDirs.delete(dir);
        }
    }

    @Test
    void writesBeyondTheFileSystemFailWithCapacityExceededAndTheDeviceCarriesOn() {
        byte[] first = random(CHUNK, 1);
        assertThat(write(d, 0, first)).isEqualTo(NvmeStatus.SUCCESS);
        int status = NvmeStatus.SUCCESS;
        long off = CHUNK;
        while (status == NvmeStatus.SUCCESS && off < BLOCKS * BS) {
            status = write(d, off, random(CHUNK, off));
            off += CHUNK;
        }
        assertThat(off).as("the 1 MiB file system filled before the 8 MiB device").isLessThan(BLOCKS * BS);
        assertThat(status).as("status of the write that found no space: %s", NvmeStatus.describe(status))
            .isEqualTo(NvmeStatus.CAPACITY_EXCEEDED);
        assertThat(write(d, off, random(CHUNK, 2))).as("the next write into a hole").isEqualTo(NvmeStatus.CAPACITY_EXCEEDED);

        assertThat(d.stickyErrorStatus()).as("not a durability error").isEqualTo(NvmeStatus.SUCCESS);
        assertThat(read(d, 0, CHUNK)).as("data written before").isEqualTo(first);
        byte[] over = random(CHUNK, 3);
        assertThat(write(d, 0, over)).as("overwrite of allocated blocks").isEqualTo(NvmeStatus.SUCCESS);
        assertThat(read(d, 0, CHUNK)).isEqualTo(over);
        try (TestIo f = TestIo.of(0, 0)) {
            IoPath.on(d).flush(f);
            assertThat(f.await()).as("flush").isEqualTo(NvmeStatus.SUCCESS);
        }

        try (TestIo free = TestIo.range(CHUNK, 4 * CHUNK)) {
            IoPath.on(d).deallocate(free);
            assertThat(free.await()).as("deallocate (punches holes: space comes back)").isEqualTo(NvmeStatus.SUCCESS);
        }
        assertThat(write(d, off, random(CHUNK, 4))).as("a write after space was freed").isEqualTo(NvmeStatus.SUCCESS);
    }
}
