package io.nvmf4j.bdev;

import io.netty.buffer.ByteBuf;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.nvme.NvmeStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.nvmf4j.bdev.TestIo.random;
import static io.nvmf4j.bdev.TestIo.read;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The file bdev queues what its workers cannot take yet: far more I/Os than its depth all complete with
 * success, in order of submission per worker, on a fixed number of threads, without blocking the submitter.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class FileBdevQueueTest {
    private static final int BS = 512;
    /** Measured windows at most after the allocation test's warm-up. */
    private static final int MAX_WINDOWS = 4;

    private Path dir;
    private final List<FileBdev> open = new ArrayList<>();
    private final List<TestIo> ios = new ArrayList<>();

    @BeforeEach
    void makeDir() throws IOException {
        dir = TestDirs.create("queue-");
    }

    @AfterEach
    void cleanUp() throws IOException {
        open.forEach(FileBdev::close);
        ios.forEach(TestIo::close);
        TestDirs.delete(dir);
    }

    private FileBdev track(FileBdev d) {
        open.add(d);
        return d;
    }

    private static long bdevThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("bdev-f0")).count();
    }

    /**
     * 20,000 writes submitted at once (five times the old 4096-entry queue, 2,500 times the default
     * depth) with a flush every 500: every one completes with success, asynchronously, on the device's
     * worker threads only, and the data is there.
     */
    @Test
    void manyMoreIosThanTheDepthAllSucceed() {
        int n = 20_000;
        FileBdev d = track(FileBdev.open("f0", dir.resolve("disk.img"), BS, n, false));
        List<TestIo> batch = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            batch.add(i % 500 == 499 ? TestIo.of(0, 0) : TestIo.of((long) i * BS, random(BS, i)));
        }
        ios.addAll(batch);
        for (int i = 0; i < n; i++) {
            if (i % 500 == 499) {
                d.flush(batch.get(i));
            } else {
                d.write(batch.get(i));
            }
        }
        long threads = bdevThreads();
        for (TestIo io : batch) {
            assertThat(io.await()).as("status of the I/O at %d", io.offset()).isEqualTo(NvmeStatus.SUCCESS);
            assertThat(io.syncCompletions.get()).as("refused on the submitter's thread").isZero();
            assertThat(io.completionThread.getName()).startsWith("bdev-f0");
        }
        assertThat(threads).as("worker threads").isEqualTo(BdevConfig.DEFAULT_IO_WORKERS);
        System.out.printf("file bdev queue: %d I/Os submitted at once, at most %d waited for %d workers%n", n,
            d.ioQueueHighWater(), d.ioWorkers());
        for (int i = 0; i < n; i += 997) {
            if (i % 500 != 499) {
                assertThat(read(d, (long) i * BS, BS)).isEqualTo(random(BS, i));
            }
        }
    }

    /**
     * One worker: I/Os start and complete in the order they were submitted (a FIFO, not a stack or a set).
     * The worker is held on a slow read while the 2,000 writes are submitted, so the queue must grow past
     * its 16 preallocated slots whatever the speed of the machine.
     */
    @Test
    void waitingIosStartInOrder() throws InterruptedException {
        FileBdev d = track(FileBdev.open("f0", dir.resolve("disk.img"), BS, 4096, false, 1, 16));
        CountDownLatch release = new CountDownLatch(1);
        StuckIo stuck = new StuckIo(release);
        d.read(stuck);
        assertThat(stuck.entered.await(5, TimeUnit.SECONDS)).as("the worker took the slow read").isTrue();
        List<TestIo> batch = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            TestIo io = TestIo.of((i % 4096) * (long) BS, random(BS, i));
            batch.add(io);
            ios.add(io);
            d.write(io);
        }
        assertThat(batch).as("none started while the worker is held").noneMatch(TestIo::isDone);
        release.countDown();
        long previous = 0;
        for (TestIo io : batch) {
            assertThat(io.await()).isEqualTo(NvmeStatus.SUCCESS);
            assertThat(io.completionSeq).as("completion order").isGreaterThan(previous);
            previous = io.completionSeq;
        }
        assertThat(stuck.status).isEqualTo(NvmeStatus.SUCCESS);
        assertThat(d.ioQueueHighWater()).as("the FIFO grew past its 16 preallocated slots").isGreaterThan(16);
    }

    /**
     * While every worker is stuck on a slow I/O (a read whose buffer the test holds), the submitter keeps
     * submitting without waiting and nothing is refused or completed early; once the disk "answers", all
     * of them complete, and close() waits for every one of them.
     */
    @Test
    void submittingNeverWaitsForTheDisk() throws Exception {
        FileBdev d = track(FileBdev.open("f0", dir.resolve("disk.img"), BS, 4096, false, 2, 64));
        CountDownLatch release = new CountDownLatch(1);
        List<StuckIo> stuck = List.of(new StuckIo(release), new StuckIo(release));
        stuck.forEach(d::read);
        for (StuckIo s : stuck) {
            assertThat(s.entered.await(5, TimeUnit.SECONDS)).as("a worker took the slow read").isTrue();
        }
        List<TestIo> batch = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            TestIo io = TestIo.of((i % 4096) * (long) BS, random(BS, i));
            batch.add(io);
            ios.add(io);
            d.write(io);
        }
        assertThat(batch).as("none completed or refused while the workers are busy").noneMatch(TestIo::isDone);
        release.countDown();
        open.remove(d);
        d.close();
        assertThat(batch).as("close() returned after every I/O completed").allMatch(io -> io.completions() == 1);
        assertThat(batch).allMatch(io -> io.await() == NvmeStatus.SUCCESS);
        for (StuckIo s : stuck) {
            assertThat(s.status).isEqualTo(NvmeStatus.SUCCESS);
        }
    }

    /**
     * Nothing is allocated per I/O, neither by the submitter (a poll group in the target) nor by the
     * workers: 20,000 writes and reads at queue depth 64, counted with the JVM's per-thread allocation
     * counter. The buffers are wrapped (not allocator-made), so Netty's leak detector records nothing here. A loaded
     * machine's compiler threads can lag behind the warm-up, and code not compiled yet may allocate: windows are
     * measured until one stays under the bound on both sides (a real per-I/O allocation shows in every window).
     */
    @Test
    void fileIoAllocatesNothingPerIo() {
        FileBdev d = track(FileBdev.open("f0", dir.resolve("disk.img"), BS, 4096, false, 2, 64));
        com.sun.management.ThreadMXBean mx =
            (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        AtomicInteger done = new AtomicInteger();
        List<ReusableIo> slots = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            slots.add(new ReusableIo(i * 4096L, done));
        }
        runBatches(d, slots, done, 200); // warm-up: JIT, lazy bounce buffers, class loading
        long[] workers = Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.getName().startsWith("bdev-f0-")).mapToLong(Thread::getId).toArray();
        assertThat(workers).hasSize(2);
        int batches = 313;
        int ios = batches * slots.size();
        List<String> windows = new ArrayList<>();
        double submitterPerIo = Double.MAX_VALUE;
        double workerPerIo = Double.MAX_VALUE;
        for (int w = 1; w <= MAX_WINDOWS && (submitterPerIo >= 1.0 || workerPerIo >= 1.0); w++) {
            long workerBefore = sum(mx.getThreadAllocatedBytes(workers));
            long submitterBefore = mx.getThreadAllocatedBytes(Thread.currentThread().getId());
            runBatches(d, slots, done, batches);
            long submitter = mx.getThreadAllocatedBytes(Thread.currentThread().getId()) - submitterBefore;
            long worker = sum(mx.getThreadAllocatedBytes(workers)) - workerBefore;
            submitterPerIo = (double) submitter / ios;
            workerPerIo = (double) worker / ios;
            String line = String.format("file bdev allocation, window %d: %d I/Os, submitter %d bytes (%.3f B/I/O),"
                + " workers %d bytes (%.3f B/I/O)", w, ios, submitter, submitterPerIo, worker, workerPerIo);
            System.out.println(line);
            windows.add(line);
        }
        assertThat(slots).allMatch(io -> io.status == NvmeStatus.SUCCESS);
        assertThat(submitterPerIo).as("bytes the submitter allocates per I/O, the last of: %s", windows)
            .isLessThan(1.0);
        assertThat(workerPerIo).as("bytes the workers allocate per I/O, the last of: %s", windows).isLessThan(1.0);
    }

    private static long sum(long[] values) {
        long s = 0;
        for (long v : values) {
            s += v;
        }
        return s;
    }

    /** Writes then reads every slot, {@code batches} times, waiting for each batch (no allocation here). */
    private static void runBatches(BlockDevice d, List<ReusableIo> slots, AtomicInteger done,
                                   int batches) {
        for (int b = 0; b < batches; b++) {
            done.set(0);
            for (int i = 0; i < slots.size(); i++) {
                if ((b & 1) == 0) {
                    d.write(slots.get(i));
                } else {
                    d.read(slots.get(i));
                }
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (done.get() < slots.size()) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("batch " + b + ": " + done.get() + " of " + slots.size() + " completed");
                }
                Thread.onSpinWait();
            }
        }
    }

    /** A BdevIo used again and again, over a wrapped direct buffer (no allocator, so no leak records). */
    private static final class ReusableIo implements BdevIo {
        private final long offset;
        private final ByteBuf buffer = io.netty.buffer.Unpooled.wrappedBuffer(java.nio.ByteBuffer.allocateDirect(4096));
        private final AtomicInteger done;
        volatile int status;

        ReusableIo(long offset, AtomicInteger done) {
            this.offset = offset;
            this.done = done;
        }

        @Override
        public long offset() {
            return offset;
        }

        @Override
        public int length() {
            return 4096;
        }

        @Override
        public ByteBuf buffer() {
            return buffer;
        }

        @Override
        public void bdevComplete(int s) {
            if (s != NvmeStatus.SUCCESS) {
                status = s;
            }
            done.incrementAndGet();
        }

        @Override
        public void bdevCompleteAsync(int s) {
            bdevComplete(s);
        }
    }
}
