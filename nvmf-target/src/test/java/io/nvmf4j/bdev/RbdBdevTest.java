package io.nvmf4j.bdev;

import io.nvmf4j.testhost.FreePorts;
import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.storage.BdevException;
import io.nvmf4j.testhost.CephCluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.nvmf4j.bdev.TestIo.allZero;
import static io.nvmf4j.bdev.TestIo.random;
import static io.nvmf4j.bdev.TestIo.read;
import static io.nvmf4j.bdev.TestIo.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The rbd block device on a real Ceph cluster ({@link CephCluster}), driven through {@link BlockDevice}. */
@ExtendWith(CephCluster.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RbdBdevTest {
    private static final int BS = 512;
    private static final AtomicInteger IMAGES = new AtomicInteger();
    private final List<RbdBdev> open = new ArrayList<>();

    @AfterEach
    void closeAll() {
        open.forEach(RbdBdev::close);
    }

    private static String newImage() {
        return "bdevtest-" + ProcessHandle.current().pid() + "-" + IMAGES.incrementAndGet();
    }

    private static RbdBdev.Options options(String image, boolean create) {
        CephCluster c = CephCluster.get();
        return new RbdBdev.Options(c.pool(), image, c.conf(), c.client(), c.keyring(), create, 10);
    }

    private RbdBdev open(String image, long numBlocks, boolean create) {
        return open(image, numBlocks, options(image, create));
    }

    /** The image with librbd's cache on (an image one gateway serves). */
    private RbdBdev openCached(String image, long numBlocks) {
        CephCluster c = CephCluster.get();
        return open(image, numBlocks, new RbdBdev.Options(c.pool(), image, c.conf(), c.client(), c.keyring(), true, 10,
            io.nvmf4j.config.BdevConfig.DEFAULT_RBD_OSD_OP_TIMEOUT_SECONDS, true));
    }

    /** A new image of 1 MiB whose I/O an OSD must answer within {@code seconds}. */
    private RbdBdev openWithOsdOpTimeout(String image, int seconds) {
        CephCluster c = CephCluster.get();
        return open(image, 2048, new RbdBdev.Options(c.pool(), image, c.conf(), c.client(), c.keyring(), true, 10,
            seconds, false));
    }

    private RbdBdev open(String image, long numBlocks, RbdBdev.Options o) {
        RbdBdev d = RbdBdev.open("r0", BS, numBlocks, o);
        open.add(d);
        return d;
    }

    private void close(RbdBdev d) {
        open.remove(d);
        d.close();
    }

    @Test
    void createWriteReadFlushAndReopen() throws Exception {
        String image = newImage();
        RbdBdev d = openCached(image, 16384); // 8 MiB: two 4 MiB objects
        assertThat(d.numBlocks()).isEqualTo(16384);
        assertThat(d.persistent()).isTrue();
        assertThat(d.volatileCache()).as("librbd's cache, turned on, is a volatile write cache").isTrue();
        assertThat(d.writeCacheEnabled()).isTrue();
        assertThat(CephCluster.get().rbd("info", CephCluster.get().pool() + "/" + image))
            .contains("size 8 MiB");
        byte[] a = random(64 * 1024, 1);
        byte[] b = random(4096, 2);
        long across = 4L * 1024 * 1024 - 2048; // spans the two objects
        assertThat(write(d, 0, a)).isEqualTo(NvmeStatus.SUCCESS);
        assertThat(write(d, across, b)).isEqualTo(NvmeStatus.SUCCESS);
        try (TestIo fua = TestIo.of(1 << 20, random(8192, 3)).withFua()) {
            d.write(fua);
            assertThat(fua.await()).isEqualTo(NvmeStatus.SUCCESS);
            assertThat(fua.asyncCompletions.get()).as("completed from librbd's thread").isEqualTo(1);
            assertThat(fua.syncCompletions.get()).isZero();
        }
        assertThat(read(d, 0, a.length)).isEqualTo(a);
        assertThat(read(d, across, b.length)).isEqualTo(b);
        assertThat(read(d, 1 << 20, 8192)).isEqualTo(random(8192, 3));
        assertThat(allZero(read(d, 2 << 20, 4096))).as("never written").isTrue();
        try (TestIo flush = TestIo.of(0, 0)) {
            d.flush(flush);
            assertThat(flush.await()).isEqualTo(NvmeStatus.SUCCESS);
        }
        close(d);
        RbdBdev again = open(image, 0, false);
        assertThat(again.numBlocks()).as("numBlocks 0 takes the image's size").isEqualTo(16384);
        assertThat(read(again, 0, a.length)).isEqualTo(a);
        assertThat(read(again, across, b.length)).isEqualTo(b);
    }

    @Test
    void smallAndUnalignedDiscardsAndWriteZeroesReadBackZeros() {
        RbdBdev d = open(newImage(), 16384, true);
        byte[] data = random(8 << 20, 4);
        for (int off = 0; off < data.length; off += 1 << 20) {
            byte[] chunk = java.util.Arrays.copyOfRange(data, off, off + (1 << 20));
            assertThat(write(d, off, chunk)).isEqualTo(NvmeStatus.SUCCESS);
        }
        assertThat(d.discardLimits().readsZeroes()).isTrue();
        // one block inside an object, and a range across the object boundary that covers no whole object
        int[][] ranges = {{3 * BS, BS}, {(4 << 20) - 5 * BS, 9 * BS}};
        for (int[] r : ranges) {
            try (TestIo io = TestIo.range(r[0], r[1])) {
                d.deallocate(io);
                assertThat(io.await()).isEqualTo(NvmeStatus.SUCCESS);
            }
            assertThat(allZero(read(d, r[0], r[1]))).as("deallocated %d+%d reads zeros", r[0], r[1]).isTrue();
            assertThat(read(d, r[0] - BS, BS)).as("the block before is kept")
                .isEqualTo(java.util.Arrays.copyOfRange(data, r[0] - BS, r[0]));
            assertThat(read(d, r[0] + r[1], BS)).as("the block after is kept")
                .isEqualTo(java.util.Arrays.copyOfRange(data, r[0] + r[1], r[0] + r[1] + BS));
        }
        try (TestIo io = TestIo.range(4 << 20, 4 << 20)) {
            d.deallocate(io); // a whole object: freed
            assertThat(io.await()).isEqualTo(NvmeStatus.SUCCESS);
        }
        assertThat(allZero(read(d, 4 << 20, 1 << 20))).isTrue();
        try (TestIo io = TestIo.range(BS * 100L, 7 * BS)) {
            d.writeZeroes(io);
            assertThat(io.await()).isEqualTo(NvmeStatus.SUCCESS);
        }
        assertThat(allZero(read(d, BS * 100L, 7 * BS))).isTrue();
        assertThat(read(d, BS * 107L, BS)).isEqualTo(java.util.Arrays.copyOfRange(data, BS * 107, BS * 108));
    }

    @Test
    void writeCacheOffMakesEveryWriteFlushAndGrowKeepsData() throws Exception {
        String image = newImage();
        RbdBdev d = openCached(image, 2048);
        d.setWriteCacheEnabled(false);
        byte[] a = random(4096, 5);
        assertThat(write(d, 512 * 1024, a)).isEqualTo(NvmeStatus.SUCCESS);
        try (TestIo io = TestIo.range(0, 4096)) {
            d.writeZeroes(io);
            assertThat(io.await()).isEqualTo(NvmeStatus.SUCCESS);
        }
        d.setWriteCacheEnabled(true);
        d.grow(8192);
        assertThat(d.numBlocks()).isEqualTo(8192);
        assertThat(CephCluster.get().rbd("info", CephCluster.get().pool() + "/" + image)).contains("size 4 MiB");
        byte[] b = random(4096, 6);
        assertThat(write(d, 3L << 20, b)).as("a write into the grown part").isEqualTo(NvmeStatus.SUCCESS);
        assertThat(read(d, 512 * 1024, a.length)).isEqualTo(a);
        assertThat(read(d, 3L << 20, b.length)).isEqualTo(b);
        try (TestIo io = TestIo.of(8192L * BS, 4096)) {
            d.read(io);
            assertThat(io.await()).as("beyond the end").isEqualTo(NvmeStatus.INTERNAL_ERROR);
        }
        close(d);
        assertThat(open(image, 4096, false).numBlocks()).as("a larger image keeps its size").isEqualTo(8192);
    }

    /**
     * FUA on Write Zeroes and Deallocate (Write Zeroes with DEAC) is honoured as on a write: each is followed by a
     * flush of librbd's cache before it completes; without FUA, with the cache on, none is.
     */
    @Test
    void writeZeroesAndDeallocateWithFuaFlush() {
        RbdBdev d = openCached(newImage(), 16384);
        assertThat(d.writeCacheEnabled()).isTrue();
        long before = d.flushes();
        assertThat(zeroRange(d, false, TestIo.range(0, 4096))).isEqualTo(NvmeStatus.SUCCESS);
        assertThat(zeroRange(d, true, TestIo.range(4096, 4096))).isEqualTo(NvmeStatus.SUCCESS);
        assertThat(d.flushes() - before).as("flushes after Write Zeroes and Deallocate without FUA").isZero();
        assertThat(zeroRange(d, false, TestIo.range(8192, 4096).withFua())).isEqualTo(NvmeStatus.SUCCESS);
        assertThat(d.flushes() - before).as("a flush after Write Zeroes with FUA").isEqualTo(1);
        assertThat(zeroRange(d, true, TestIo.range(12288, 4096).withFua())).isEqualTo(NvmeStatus.SUCCESS);
        assertThat(d.flushes() - before).as("a flush after Deallocate with FUA").isEqualTo(2);
        try (TestIo io = TestIo.of(16384, random(4096, 11)).withFua()) {
            d.write(io);
            assertThat(io.await()).isEqualTo(NvmeStatus.SUCCESS);
        }
        assertThat(d.flushes() - before).as("and after a write with FUA, as before").isEqualTo(3);
    }

    /**
     * By default librbd's cache is off: a completed write is on the OSDs and any gateway's read sees it, so the device
     * has no volatile write cache (Identify VWC 0), Set Features 06h changes nothing, and no write needs a flush, FUA
     * or not.
     */
    @Test
    void withoutTheCacheNothingIsVolatileAndNoWriteIsFlushed() {
        RbdBdev d = open(newImage(), 16384, true);
        assertThat(d.volatileCache()).as("no volatile write cache without librbd's").isFalse();
        assertThat(d.writeCacheEnabled()).isFalse();
        d.setWriteCacheEnabled(true);
        assertThat(d.writeCacheEnabled()).as("nothing to turn on").isFalse();
        long before = d.flushes();
        try (TestIo io = TestIo.of(0, random(4096, 21)).withFua()) {
            d.write(io);
            assertThat(io.await()).isEqualTo(NvmeStatus.SUCCESS);
        }
        assertThat(zeroRange(d, true, TestIo.range(8192, 4096).withFua())).isEqualTo(NvmeStatus.SUCCESS);
        assertThat(d.flushes() - before).as("flushes: none is needed").isZero();
        assertThat(read(d, 0, 4096)).isEqualTo(random(4096, 21));
    }

    /**
     * An OSD that does not answer within osdOpTimeoutSeconds (the OSD stopped with SIGSTOP) ends the write with
     * Command Interrupted (SCT 0h, SC 21h) without DNR: not a path error (SCT 3h, which Linux fails over to another
     * path) and not "not written" (DNR); Linux retries it on the same path. Its outcome is unknown: the OSD may
     * apply it once it runs again.
     */
    @Test
    void anOsdThatDoesNotAnswerEndsTheWriteWithCommandInterruptedWithoutDnr() throws Exception {
        RbdBdev d = openWithOsdOpTimeout(newImage(), 3);
        // a first write takes librbd's exclusive lock, so the one below is the write alone
        assertThat(write(d, 8192, random(4096, 24))).isEqualTo(NvmeStatus.SUCCESS);
        try (CephCluster.StoppedOsd stopped = CephCluster.get().stopOsd();
             TestIo io = TestIo.of(0, random(4096, 22))) {
            long t0 = System.nanoTime();
            d.write(io);
            int status = io.await(30);
            double s = (System.nanoTime() - t0) / 1e9;
            assertThat(status).as("status 0x%x after %.1f s", status, s).isEqualTo(NvmeStatus.COMMAND_INTERRUPTED);
            assertThat(status & NvmeStatus.DNR).isZero();
            assertThat(s).as("ended by osdOpTimeoutSeconds 3").isBetween(2.5, 20.0);
        }
        assertThat(write(d, 0, random(4096, 23))).as("served again once the OSD answers").isEqualTo(NvmeStatus.SUCCESS);
    }

    /**
     * A header watch that breaks and cannot be made again at once (the OSD stopped with SIGSTOP: the watch call times
     * out) is tried again with backoff until it is, each failure counted; the listeners hear of the break, then of
     * the new watch.
     */
    @Test
    void aBrokenWatchThatCannotBeMadeAgainIsRetriedUntilItIs() throws Exception {
        RbdBdev d = openWithOsdOpTimeout(newImage(), 2);
        List<RbdBdev.HeaderEvent> heard = java.util.Collections.synchronizedList(new ArrayList<>());
        d.watchHeader((event, done) -> {
            heard.add(event);
            done.run();
        });
        assertThat(d.headerWatched()).isTrue();
        long failures = RbdBdev.rewatchFailuresTotal();
        try (CephCluster.StoppedOsd stopped = CephCluster.get().stopOsd()) {
            RbdBdev.headerUpdated(d.index(), -107, 0, 0); // librados: the watch broke (ENOTCONN)
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (RbdBdev.rewatchFailuresTotal() < failures + 2) {
                assertThat(System.nanoTime()).as("two failed attempts while the OSD is stopped").isLessThan(deadline);
                Thread.sleep(50);
            }
            assertThat(d.headerWatched()).isFalse();
            assertThat(heard).as("nothing to tell while unwatched").isEmpty();
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!d.headerWatched()) {
            assertThat(System.nanoTime()).as("watched again once the OSD answers").isLessThan(deadline);
            Thread.sleep(50);
        }
        assertThat(heard).as("the new watch, told once (changes may have been missed)")
            .containsExactly(RbdBdev.HeaderEvent.WATCHED_AGAIN);
    }

    /** Write Zeroes ({@code deallocate} false) or Deallocate of {@code io}'s range; its status. */
    private static int zeroRange(RbdBdev d, boolean deallocate, TestIo io) {
        try (io) {
            if (deallocate) {
                d.deallocate(io);
            } else {
                d.writeZeroes(io);
            }
            return io.await();
        }
    }

    @Test
    void manyOutstandingRequestsGrowTheTable() {
        RbdBdev d = open(newImage(), 16384, true);
        List<TestIo> ios = new ArrayList<>();
        try {
            for (int i = 0; i < 600; i++) {
                TestIo io = TestIo.of((long) i * 4096 % (8 << 20), random(4096, 100 + i));
                ios.add(io);
                d.write(io);
            }
            for (TestIo io : ios) {
                assertThat(io.await()).isEqualTo(NvmeStatus.SUCCESS);
            }
            assertThat(d.outstanding()).isZero();
        } finally {
            ios.forEach(TestIo::close);
        }
        assertThat(read(d, 599L * 4096, 4096)).isEqualTo(random(4096, 699));
    }

    @Test
    void badPlacesAreNamed() {
        CephCluster c = CephCluster.get();
        assertThatThrownBy(() -> open("absent-" + newImage(), 0, false)).isInstanceOf(BdevException.class)
            .hasMessageContaining("no image 'absent-").hasMessageContaining("in pool 'rbd' (set create to make it)");
        assertThatThrownBy(() -> RbdBdev.open("r0", BS, 2048, new RbdBdev.Options("nopool", "x", c.conf(),
            c.client(), c.keyring(), true, 10))).isInstanceOf(BdevException.class)
            .hasMessage("rbd bdev r0: cannot open pool 'nopool': No such file or directory");
        assertThatThrownBy(() -> open(newImage(), 0, true)).isInstanceOf(BdevException.class)
            .hasMessageContaining("numBlocks must give the size of the image to create");
    }

    @Test
    void aWrongKeyIsRefusedAtOnce() throws IOException {
        CephCluster c = CephCluster.get();
        Path wrong = c.dir().resolve("wrong.keyring");
        Files.writeString(wrong, "[client.nvmf4j]\n\tkey = AQBSdFVkAAAAABAAp7VDMx8oFKyW0Wm8sQXzvQ==\n");
        long t0 = System.nanoTime();
        // a timeout of 30 s, twice the bound: a refusal that is slow on a busy machine is still told from a timeout
        assertThatThrownBy(() -> RbdBdev.open("r0", BS, 2048, new RbdBdev.Options(c.pool(), newImage(), c.conf(),
            c.client(), wrong.toString(), true, 30))).isInstanceOf(BdevException.class)
            .hasMessageStartingWith("rbd bdev r0: cannot connect to the Ceph cluster of " + c.conf()
                + " as client.nvmf4j (keyring " + wrong + "): ");
        assertThat((System.nanoTime() - t0) / 1e9).as("refused, not timed out").isLessThan(15);
    }

    @Test
    void aClusterThatIsDownFailsAfterTheTimeout() throws IOException {
        Path conf = CephCluster.get().dir().resolve("down.conf");
        int port = FreePorts.pick(); // nothing answers there
        Files.writeString(conf, "[global]\nmon host = v2:127.0.0.1:" + port + "\n");
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> RbdBdev.open("r0", BS, 2048, new RbdBdev.Options("rbd", "x", conf.toString(),
            "client.nvmf4j", CephCluster.get().keyring(), true, 2))).isInstanceOf(BdevException.class)
            .hasMessageContaining("cannot connect").hasMessageContaining("no monitor answered");
        assertThat((System.nanoTime() - t0) / 1e9).isBetween(1.5, 20.0);
    }
}
