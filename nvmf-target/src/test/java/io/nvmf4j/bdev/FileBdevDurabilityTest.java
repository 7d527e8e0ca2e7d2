package io.nvmf4j.bdev;

import io.nvmf4j.config.StorageConfig;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.nvmf4j.nvme.NvmeStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.bdev.TestIo.random;
import static io.nvmf4j.bdev.TestIo.read;
import static io.nvmf4j.bdev.TestIo.write;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * FUA, the write cache and failed syncs, on a real medium that fails: a 64 MiB loop device whose backing
 * file lives on a 4 MiB tmpfs ({@link ScratchMounts#failingDisk}). Data beyond 4 MiB can sit in the page
 * cache but its writeback fails with EIO, as on a dying disk, so whether a write was made durable before it
 * completed shows in its status, and {@code fdatasync} really fails (once: Linux then forgets the error).
 */
@ParameterizedClass(name = "{0}")
@EnumSource(IoPath.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class FileBdevDurabilityTest {
    /** The I/O path every test here runs on (each runs on both). */
    @Parameter
    IoPath path;

    private static final int BS = 4096;
    private static final long DEVICE = 64L << 20;
    private static final long MEDIUM = 4L << 20;
    /** More than the medium holds: its writeback cannot succeed. */
    private static final int BIG = 16 << 20;
    private static final int STICKY = NvmeStatus.WRITE_FAULT | NvmeStatus.DNR;

    private Path dir;
    private ScratchMounts mounts;
    private final List<FileBdev> open = new ArrayList<>();
    private ListAppender<ILoggingEvent> log;

    @BeforeEach
    void setUp() throws IOException {
        ScratchMounts.assumeRoot();
        dir = TestDirs.create("durability-");
        mounts = new ScratchMounts(dir);
        log = new ListAppender<>();
        log.start();
        ((Logger) LoggerFactory.getLogger(FileBdev.class)).addAppender(log);
    }

    @AfterEach
    void tearDown() throws Exception {
        if (mounts == null) {
            return;
        }
        ((Logger) LoggerFactory.getLogger(FileBdev.class)).detachAppender(log);
        try {
            open.forEach(FileBdev::close);
        } finally {
            mounts.close();
            TestDirs.delete(dir);
        }
    }

    private FileBdev openFailingDisk() throws IOException, InterruptedException {
        Path dev = mounts.failingDisk(DEVICE, MEDIUM);
        StorageConfig storage = new StorageConfig();
        storage.blockDevices.add(dev.toString());
        FileBdev d = path.open("f0", dev, BS, 0, false, storage);
        open.add(d);
        assertThat(d.numBlocks()).isEqualTo(DEVICE / BS);
        return d;
    }

    private static int flush(BlockDevice d) {
        try (TestIo f = TestIo.of(0, 0)) {
            IoPath.on(d).flush(f);
            return f.await();
        }
    }

    private static int fuaWrite(BlockDevice d, long offset, byte[] data) {
        try (TestIo io = TestIo.of(offset, data).withFua()) {
            IoPath.on(d).write(io);
            return io.await();
        }
    }

    private long errorLines() {
        return log.list.stream().filter(e -> e.getLevel() == Level.ERROR).count();
    }

    /**
     * The first fdatasync fails with EIO; the kernel then clears the error, so a second one would succeed
     * although the data is gone. The device remembers: that flush, later writes and Write Zeroes fail with
     * Write Fault (DNR), logged once at ERROR and counted; reads go on.
     */
    @Test
    void aFailedFdatasyncFailsEveryLaterFlushAndWrite() throws Exception {
        FileBdev d = openFailingDisk();
        assertThat(d.stickyErrorStatus()).isEqualTo(NvmeStatus.SUCCESS);
        assertThat(write(d, 0, random(BIG, 1))).as("a cached write completes (the write cache is on)")
            .isEqualTo(NvmeStatus.SUCCESS);
        assertThat(flush(d)).as("fdatasync of data the medium cannot hold").isEqualTo(STICKY);
        assertThat(flush(d)).as("the next flush, although the kernel reports success now").isEqualTo(STICKY);
        assertThat(write(d, 0, random(BS, 2))).as("a later write").isEqualTo(STICKY);
        assertThat(fuaWrite(d, BS, random(BS, 3))).as("a later FUA write").isEqualTo(STICKY);
        try (TestIo z = TestIo.of(0, BS)) {
            IoPath.on(d).writeZeroes(z);
            assertThat(z.await()).as("a later Write Zeroes").isEqualTo(STICKY);
        }
        assertThat(d.stickyErrorStatus()).isEqualTo(STICKY);
        assertThat(d.durabilityErrors()).as("failed attempts counted").isEqualTo(1);
        assertThat(read(d, 0, BS)).as("reads still work").hasSize(BS);
        assertThat(errorLines()).as("logged once at ERROR").isEqualTo(1);
        assertThat(log.list.stream().filter(e -> e.getLevel() == Level.ERROR).findFirst().orElseThrow()
            .getFormattedMessage()).contains("fdatasync", "f0", "Input/output error");
    }

    /** A FUA write is on the medium before it completes: on this medium it fails at once, and counts. */
    @Test
    void aFuaWriteIsDurableBeforeItCompletes() throws Exception {
        FileBdev d = openFailingDisk();
        assertThat(fuaWrite(d, 0, random(BIG, 4))).as("FUA write the medium cannot hold").isEqualTo(STICKY);
        assertThat(d.durabilityErrors()).isEqualTo(1);
        assertThat(d.stickyErrorStatus()).isEqualTo(STICKY);
        assertThat(flush(d)).isEqualTo(STICKY);
        assertThat(errorLines()).isEqualTo(1);
    }

    /**
     * A Deallocate with FUA (Write Zeroes with DEAC and FUA) is durable before it completes, as a FUA write is: the
     * sync it ends with meets the cached data the medium cannot hold, and fails.
     */
    @Test
    void aFuaDeallocateIsDurableBeforeItCompletes() throws Exception {
        FileBdev d = openFailingDisk();
        assertThat(write(d, 0, random(BIG, 9))).as("a cached write completes").isEqualTo(NvmeStatus.SUCCESS);
        try (TestIo z = TestIo.range(BIG, BS).withFua()) {
            d.deallocate(z);
            assertThat(z.await()).as("Deallocate with FUA on a medium that cannot hold the cache").isEqualTo(STICKY);
        }
        assertThat(d.durabilityErrors()).isEqualTo(1);
    }

    /** With the write cache off (Set Features VWC = 0) every write is written through, like FUA. */
    @Test
    void withTheWriteCacheOffEveryWriteIsDurable() throws Exception {
        FileBdev d = openFailingDisk();
        assertThat(d.writeCacheEnabled()).as("persistent device: volatile write cache on by default").isTrue();
        d.setWriteCacheEnabled(false);
        assertThat(d.writeCacheEnabled()).isFalse();
        assertThat(write(d, 0, random(BIG, 5))).as("write-through write the medium cannot hold").isEqualTo(STICKY);
        assertThat(d.durabilityErrors()).isEqualTo(1);
    }

    /**
     * Turning the cache off flushes what it holds: data written while it was on and that the medium cannot
     * take turns into a durability error without another command.
     */
    @Test
    void turningTheWriteCacheOffFlushesIt() throws Exception {
        FileBdev d = openFailingDisk();
        assertThat(write(d, 0, random(BIG, 8))).isEqualTo(NvmeStatus.SUCCESS);
        d.setWriteCacheEnabled(false);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (d.stickyErrorStatus() == NvmeStatus.SUCCESS && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(d.stickyErrorStatus()).as("the cache's contents could not be made durable").isEqualTo(STICKY);
        assertThat(d.durabilityErrors()).isEqualTo(1);
    }

    /** The same device, written within what its medium holds: FUA and write-through writes succeed. */
    @Test
    void durableWritesThatFitSucceed() throws Exception {
        FileBdev d = openFailingDisk();
        assertThat(fuaWrite(d, 0, random(1 << 20, 6))).isEqualTo(NvmeStatus.SUCCESS);
        d.setWriteCacheEnabled(false);
        assertThat(write(d, 1 << 20, random(1 << 20, 7))).isEqualTo(NvmeStatus.SUCCESS);
        d.setWriteCacheEnabled(true);
        assertThat(flush(d)).isEqualTo(NvmeStatus.SUCCESS);
        assertThat(read(d, 0, 1 << 20)).isEqualTo(random(1 << 20, 6));
        assertThat(read(d, 1 << 20, 1 << 20)).isEqualTo(random(1 << 20, 7));
        assertThat(d.durabilityErrors()).isZero();
        assertThat(errorLines()).isZero();
    }
}
