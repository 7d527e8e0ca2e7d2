package io.nvmf4j.bdev;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.netty.channel.EventLoop;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.StorageConfig;
import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.storage.BdevException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.bdev.TestIo.allZero;
import static io.nvmf4j.bdev.TestIo.random;
import static io.nvmf4j.bdev.TestIo.read;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * How a file bdev picks its I/O path and what the poll group's io_uring ring hands on: the choice at creation
 * (logged), the config field that forces the worker threads, callers that are no poll group, more operations at
 * once than the ring holds, and zeroing with the write cache off (a fallocate, then an fdatasync, both on the
 * ring). Files under the module's {@code target/} (a real disk file system).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class FileBdevRingTest {
    private static final int BS = 4096;

    private Path dir;
    private final List<BlockDevice> open = new ArrayList<>();
    private ListAppender<ILoggingEvent> log;

    @BeforeEach
    void setUp() throws IOException {
        Assumptions.assumeTrue(FileRing.unavailabilityCause() == null,
            () -> "io_uring is unavailable here: " + FileRing.unavailabilityCause());
        dir = TestDirs.create("ring-");
        log = new ListAppender<>();
        log.start();
        ((Logger) LoggerFactory.getLogger(FileBdev.class)).addAppender(log);
    }

    @AfterEach
    void tearDown() throws IOException {
        if (log == null) {
            return;
        }
        ((Logger) LoggerFactory.getLogger(FileBdev.class)).detachAppender(log);
        open.forEach(BlockDevice::close);
        TestDirs.delete(dir);
    }

    /** A file bdev made from a config, as the target makes it; {@code ioEngine} null leaves the default. */
    private FileBdev create(String ioEngine) {
        BdevConfig c = new BdevConfig("f0", "file", BS, 4096);
        c.path = dir.resolve("disk.img").toString();
        c.ioEngine = ioEngine;
        FileBdev d = (FileBdev) BlockDevices.create(c, StorageConfig.directories(dir.toString()));
        open.add(d);
        return d;
    }

    private List<String> messages() {
        return log.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
    }

    /** Runs {@code io} on {@code d} from the poll group and waits for its completion. */
    private static TestIo fromPollGroup(FileBdev d, TestIo io, String op) {
        EventLoop loop = IoPath.pollGroup();
        loop.execute(() -> {
            switch (op) {
                case "write" -> d.write(io);
                case "read" -> d.read(io);
                case "flush" -> d.flush(io);
                case "zeroes" -> d.writeZeroes(io);
                case "deallocate" -> d.deallocate(io);
                default -> throw new IllegalArgumentException(op);
            }
        });
        io.await();
        return io;
    }

    private static void assertOnRing(TestIo io, String what) {
        assertThat(io.syncCompletions.get()).as("%s: completed by the poll group from its ring", what).isEqualTo(1);
        assertThat(io.asyncCompletions.get()).as("%s: no hand-over from a worker", what).isZero();
        assertThat(IoPath.onPollGroupThread(io.completionThread)).as("%s completed on %s", what, io.completionThread)
            .isTrue();
    }

    private static void assertOnWorkers(TestIo io, String what) {
        assertThat(io.asyncCompletions.get()).as("%s: completed by a worker", what).isEqualTo(1);
        assertThat(io.syncCompletions.get()).as("%s", what).isZero();
        assertThat(io.completionThread.getName()).as("%s", what).startsWith("bdev-f0-");
    }

    @Test
    void theDefaultIsTheRingAndTheLogSaysSo() {
        FileBdev d = create(null);
        assertThat(d.ioEngine()).isEqualTo(BdevConfig.IO_ENGINE_URING);
        assertThat(messages()).contains("file bdev f0: I/O through each poll group's io_uring ring; 8 worker threads"
            + " for the rest");
        byte[] data = random(BS, 1);
        try (TestIo w = TestIo.of(0, data); TestIo r = TestIo.of(0, BS); TestIo f = TestIo.of(0, 0)) {
            assertThat(fromPollGroup(d, w, "write").await()).isEqualTo(NvmeStatus.SUCCESS);
            assertOnRing(w, "write");
            assertThat(fromPollGroup(d, f, "flush").await()).isEqualTo(NvmeStatus.SUCCESS);
            assertOnRing(f, "flush");
            assertThat(fromPollGroup(d, r, "read").await()).isEqualTo(NvmeStatus.SUCCESS);
            assertOnRing(r, "read");
            assertThat(r.data()).isEqualTo(data);
        }
    }

    /** {@code ioEngine threads}: even a poll group's I/O goes to the workers, and the log says why. */
    @Test
    void ioEngineThreadsForcesTheWorkers() {
        FileBdev d = create(BdevConfig.IO_ENGINE_THREADS);
        assertThat(d.ioEngine()).isEqualTo(BdevConfig.IO_ENGINE_THREADS);
        assertThat(messages()).contains("file bdev f0: I/O on 8 worker threads (ioEngine threads)");
        try (TestIo w = TestIo.of(0, random(BS, 2)); TestIo f = TestIo.of(0, 0)) {
            assertThat(fromPollGroup(d, w, "write").await()).isEqualTo(NvmeStatus.SUCCESS);
            assertOnWorkers(w, "write");
            assertThat(fromPollGroup(d, f, "flush").await()).isEqualTo(NvmeStatus.SUCCESS);
            assertOnWorkers(f, "flush");
        }
        assertThat(read(d, 0, BS)).isEqualTo(random(BS, 2));
    }

    @Test
    void anUnknownIoEngineIsRefused() {
        assertThatThrownBy(() -> create("aio")).isInstanceOf(BdevException.class)
            .hasMessage("file bdev f0: unknown ioEngine 'aio' (expected auto, io_uring, threads)");
    }

    /** A caller that is no poll group (here the test's thread) has no ring: the workers serve it. */
    @Test
    void aCallerThatIsNoPollGroupGoesToTheWorkers() {
        FileBdev d = create(BdevConfig.IO_ENGINE_URING);
        try (TestIo w = TestIo.of(0, random(BS, 3))) {
            d.write(w);
            assertThat(w.await()).isEqualTo(NvmeStatus.SUCCESS);
            assertOnWorkers(w, "write from the test's thread");
        }
    }

    /**
     * More writes in one pass than the ring has entries: the ring takes what it holds, the workers the rest;
     * each completes once, with its data in place.
     */
    @Test
    void moreOperationsThanTheRingHoldsAllComplete() {
        FileBdev d = create(BdevConfig.IO_ENGINE_URING);
        int n = 3 * FileRing.ENTRIES;
        List<TestIo> ios = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                ios.add(TestIo.of((long) i * BS, random(BS, 1000 + i)));
            }
            IoPath.pollGroup().execute(() -> ios.forEach(d::write)); // one task: all in one pass
            int onRing = 0;
            for (TestIo io : ios) {
                assertThat(io.await()).isEqualTo(NvmeStatus.SUCCESS);
                onRing += io.syncCompletions.get();
            }
            d.close();
            open.remove(d);
            for (TestIo io : ios) {
                assertThat(io.completions()).as("completions of the write at %d", io.offset()).isEqualTo(1);
            }
            assertThat(onRing).as("writes the ring took").isBetween(1, n - 1);
        } finally {
            ios.forEach(TestIo::close);
        }
        FileBdev again = create(BdevConfig.IO_ENGINE_URING);
        for (int i = 0; i < n; i += 97) {
            assertThat(read(again, (long) i * BS, BS)).as("block %d", i).isEqualTo(random(BS, 1000 + i));
        }
    }

    /**
     * O_DIRECT: write data at an odd address (in-capsule data where the socket put it) is copied into one of the
     * ring's aligned bounce buffers and written from there by the ring; a write larger than a bounce buffer goes to
     * the workers, which bounce it in pieces. Both land.
     */
    @Test
    void unalignedWriteDataIsBouncedThroughTheRing() {
        BdevConfig c = new BdevConfig("f0", "file", BS, 4096);
        c.path = dir.resolve("direct.img").toString();
        c.directIo = true;
        c.ioEngine = BdevConfig.IO_ENGINE_URING;
        FileBdev d;
        try {
            d = (FileBdev) BlockDevices.create(c, StorageConfig.directories(dir.toString()));
        } catch (BdevException e) {
            Assumptions.assumeFalse(String.valueOf(e.getMessage()).contains("Invalid argument"),
                "the file system under " + dir + " refuses O_DIRECT: " + e.getMessage());
            throw e;
        }
        open.add(d);
        byte[] small = random(BS, 5);
        byte[] large = random(FileRing.BOUNCE_SIZE + BS, 6);
        try (TestIo w = TestIo.unaligned(0, small); TestIo big = TestIo.unaligned(BS, large)) {
            assertThat(w.buffer().memoryAddress() & 1).as("the buffer's address is odd").isEqualTo(1);
            long before = d.bouncedIos();
            assertThat(fromPollGroup(d, w, "write").await()).isEqualTo(NvmeStatus.SUCCESS);
            assertOnRing(w, "an unaligned 4 KiB write");
            assertThat(d.bouncedIos() - before).as("bounced").isEqualTo(1);
            assertThat(fromPollGroup(d, big, "write").await()).isEqualTo(NvmeStatus.SUCCESS);
            assertOnWorkers(big, "an unaligned write larger than a bounce buffer");
        }
        assertThat(read(d, 0, BS)).isEqualTo(small);
        assertThat(read(d, BS, large.length)).isEqualTo(large);
    }

    /**
     * With the write cache off, Write Zeroes and Deallocate are followed by an fdatasync: both steps run on the
     * ring and the request completes once, after the second.
     */
    @Test
    void zeroingWithTheWriteCacheOffSyncsOnTheRing() {
        FileBdev d = create(BdevConfig.IO_ENGINE_URING);
        try (TestIo w = TestIo.of(0, random(64 * BS, 4))) {
            assertThat(fromPollGroup(d, w, "write").await()).isEqualTo(NvmeStatus.SUCCESS);
        }
        d.setWriteCacheEnabled(false);
        try (TestIo z = TestIo.range(0, 16 * BS); TestIo free = TestIo.range(32 * BS, 16 * BS)) {
            assertThat(fromPollGroup(d, z, "zeroes").await()).isEqualTo(NvmeStatus.SUCCESS);
            assertOnRing(z, "write zeroes");
            assertThat(fromPollGroup(d, free, "deallocate").await()).isEqualTo(NvmeStatus.SUCCESS);
            assertOnRing(free, "deallocate");
        }
        assertThat(allZero(read(d, 0, 16 * BS))).isTrue();
        assertThat(allZero(read(d, 32 * BS, 16 * BS))).isTrue();
        assertThat(read(d, 16 * BS, 16 * BS)).isEqualTo(java.util.Arrays.copyOfRange(random(64 * BS, 4), 16 * BS,
            32 * BS));
        assertThat(d.durabilityErrors()).isZero();
    }
}
