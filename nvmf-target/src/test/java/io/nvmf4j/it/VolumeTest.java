package io.nvmf4j.it;

import io.nvmf4j.ControlException;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.PoolConfig;
import io.nvmf4j.config.StorageConfig;
import io.nvmf4j.engine.PoolInfo;
import io.nvmf4j.engine.SnapshotTaken;
import io.nvmf4j.engine.VolumeInfo;
import io.nvmf4j.engine.VolumeRequest;
import io.nvmf4j.nvme.IdentifyNamespace;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static io.nvmf4j.it.StampedWrites.STAMP;
import static io.nvmf4j.it.StampedWrites.awaitAtLeast;
import static io.nvmf4j.it.StampedWrites.readAll;
import static io.nvmf4j.it.StampedWrites.stamp;
import static io.nvmf4j.it.StampedWrites.stampedPrefix;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Volumes of a reflink-dir pool over real NVMe/TCP on loopback, on a real XFS ({@code reflink=1}) made by the test
 * ({@link PoolScratch}, root): a thin volume exported and written, a snapshot taken while a host writes, a clone
 * of it exported to a second host that reads the data as of the snapshot, a live grow the host sees, thin provisioning
 * in Identify Namespace, Capacity Exceeded on a full pool for that namespace only, and deletes in lineage order.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class VolumeTest {
    private static final long GIB = 1L << 30;
    private static final int BS = 512;
    /** Asynchronous event configuration: namespace attribute notices. */
    private static final int AEC_NS_ATTRIBUTE = 1 << 8;

    @TempDir
    Path tmp;
    private PoolScratch scratch;
    private Path fs;
    private Path poolDir;
    private TestTarget t;

    @BeforeEach
    void setUp() throws Exception {
        scratch = PoolScratch.make(tmp);
        fs = scratch.fs;
        poolDir = scratch.poolDir;
        t = TestTarget.start(c -> c.storage = StorageConfig.directories(fs.toString()));
        t.nvmf().addPool(new PoolConfig("p0", PoolConfig.KIND_REFLINK_DIR, poolDir.toString()));
    }

    @AfterEach
    void tearDown() throws Exception {
        if (scratch != null) {
            scratch.closeAfter(t);
        }
    }

    @Test
    void thinVolumeSnapshotUnderWritesCloneToSecondHostGrowAndDeleteInOrder() throws Exception {
        long usedAtStart = t.nvmf().pool("p0").used();
        VolumeInfo vol = t.nvmf().createVolume("p0", VolumeRequest.thin("vol1", GIB));
        assertThat(vol.thin()).isTrue();
        assertThat(vol.allocatedBytes()).as("a new thin volume allocates nothing").isZero();
        t.nvmf().addNamespace(TestTarget.SUBNQN, new NamespaceConfig(7, "p0/vol1"));
        try (NvmeController c = t.controller(2, TcpHostOptions.DEFAULT)) {
            NvmeHost io = c.io(0);
            byte[] pattern = Le.random(1 << 20, 7);
            for (int off = 0; off < pattern.length; off += 64 << 10) {
                byte[] chunk = java.util.Arrays.copyOfRange(pattern, off, off + (64 << 10));
                assertThat(io.write(7, off / BS, chunk).ok()).isTrue();
            }
            byte[] id = c.admin().identify(0x00, 7, 0).data();
            assertThat(id[IdentifyNamespace.NSFEAT] & 1).as("NSFEAT bit 0: thin").isEqualTo(1);
            long nuse = Le.u64(id, IdentifyNamespace.NUSE);
            assertThat(nuse).as("NUSE: the blocks allocated, not the size").isBetween(pattern.length / (long) BS,
                GIB / BS / 2);
            System.out.printf("volume vol1: %d bytes provisioned, %d allocated (NUSE %d blocks)%n",
                vol.provisionedBytes(), t.nvmf().volume("p0", "vol1").allocatedBytes(), nuse);

            // a second queue writes stamped blocks one after another while the snapshot is taken
            long stampBase = 64L << 20;
            StampedWrites.Writer writer = StampedWrites.Writer.start(c.io(1), 7, BS, stampBase, Long.MAX_VALUE);
            AtomicLong acknowledged = writer.acknowledged;
            awaitAtLeast(acknowledged, 50);
            long before = acknowledged.get();
            SnapshotTaken snap = t.nvmf().createSnapshot("p0", "vol1", "s1");
            long after = acknowledged.get();
            awaitAtLeast(acknowledged, after + 20);
            writer.stop();
            System.out.printf("snapshot s1 under writes: writes held for %d us; %d stamped writes acknowledged before,"
                + " %d after it returned%n", TimeUnit.NANOSECONDS.toMicros(snap.pauseNanos()), before, after);
            assertThat(snap.pauseNanos()).as("the namespace's writes were held").isPositive();

            long usedBeforeClone = t.nvmf().pool("p0").used();
            VolumeInfo clone = t.nvmf().cloneSnapshot("p0", "vol1", "s1", "clone1");
            long usedAfterClone = t.nvmf().pool("p0").used();
            System.out.printf("clone1 of a 1 GiB volume: pool used %d -> %d bytes (+%d); the clone's file counts %d"
                + " shared bytes%n", usedBeforeClone, usedAfterClone, usedAfterClone - usedBeforeClone,
                clone.allocatedBytes());
            assertThat(usedAfterClone - usedBeforeClone).as("a clone shares every block").isLessThan(1L << 20);
            assertThat(clone.origin()).isEqualTo("vol1@s1");

            // the clone goes to a second host, through the other subsystem
            t.nvmf().addNamespace(TestTarget.RESTRICTED_NQN, new NamespaceConfig(2, "p0/clone1"));
            try (NvmeController other = NvmeController.open(TestTarget.ADDRESS, t.port, TestTarget.RESTRICTED_NQN,
                TestTarget.ALLOWED_HOSTNQN, TestTarget.KATO_MS, 1, TcpHostOptions.DEFAULT)) {
                NvmeHost cio = other.io(0);
                assertThat(readAll(cio, 2, BS, pattern.length)).as("the pattern as of the snapshot").isEqualTo(pattern);
                long inSnapshot = stampedPrefix(cio, 2, BS, stampBase, after + 20);
                System.out.printf("the snapshot holds stamped writes 0..%d%n", inSnapshot - 1);
                assertThat(inSnapshot).as("every write acknowledged before the snapshot began is in it, none issued"
                    + " after it returned").isBetween(before, after + 1);
            }

            // grow live: the host is told and sees the new size
            assertThat(c.admin().setFeatures(0x0B, AEC_NS_ATTRIBUTE).ok()).isTrue();
            CompletableFuture<Completion> aer = c.admin().asyncEventRequest();
            t.nvmf().resizeVolume("p0", "vol1", BigInteger.valueOf(2 * GIB));
            assertThat(aer.get(10, TimeUnit.SECONDS).ok()).isTrue();
            assertThat(Le.u64(c.admin().identify(0x00, 7, 0).data(), IdentifyNamespace.NSZE)).isEqualTo(2 * GIB / BS);
            assertThat(io.write(7, 2 * GIB / BS - 8, Le.random(4096, 9)).ok()).as("a write in the grown part").isTrue();
            assertThatThrownBy(() -> t.nvmf().resizeVolume("p0", "vol1", BigInteger.valueOf(GIB)))
                .isInstanceOf(ControlException.class).hasMessageContaining("size:").hasMessageContaining("7");
        }

        // deletes follow the lineage: namespace, clone, snapshot, volume
        assertThatThrownBy(() -> t.nvmf().deleteVolume("p0", "vol1")).hasMessageContaining("backs namespace");
        t.nvmf().removeNamespace(TestTarget.SUBNQN, 7);
        assertThatThrownBy(() -> t.nvmf().deleteVolume("p0", "vol1")).hasMessageContaining("has snapshot(s) [s1]");
        assertThatThrownBy(() -> t.nvmf().deleteSnapshot("p0", "vol1", "s1")).hasMessageContaining("clone(s) [clone1]");
        t.nvmf().removeNamespace(TestTarget.RESTRICTED_NQN, 2);
        t.nvmf().deleteVolume("p0", "clone1");
        t.nvmf().deleteSnapshot("p0", "vol1", "s1");
        t.nvmf().deleteVolume("p0", "vol1");
        t.nvmf().settle();
        // XFS frees an unlinked file's blocks in the background (inodegc): the space comes back within a bound
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        PoolInfo end = t.nvmf().pool("p0");
        while (end.used() - usedAtStart >= 1L << 20 && System.nanoTime() - deadline < 0) {
            Thread.sleep(10);
            end = t.nvmf().pool("p0");
        }
        System.out.printf("after the deletes: pool used %d bytes (%d at the start)%n", end.used(), usedAtStart);
        assertThat(end.used() - usedAtStart).as("no space leaks").isLessThan(1L << 20);
        try (var files = Files.list(poolDir)) {
            assertThat(files.toList()).as("the pool's directory is empty again").isEmpty();
        }
        assertThat(t.nvmf().configSnapshot().pools.get(0).volumes).isEmpty();
    }

    /**
     * A pool's warning watermark is crossed while hosts write into a thin volume, with nobody reading the pool's
     * capacity: the timer reads each pool's use ({@code JavaPools.WATERMARK_PERIOD_MS}), logs the crossing and counts it.
     */
    @Test
    void theWatermarkIsCrossedWhileHostsWriteWithNobodyReadingThePool() throws Exception {
        PoolInfo before = t.nvmf().pool("p0");
        long target = before.used() + (24L << 20); // 24 MiB of writes cross it
        int warn = (int) Math.ceil(100.0 * (before.used() + (8L << 20)) / before.size());
        assertThat(100.0 * target / before.size()).as("the writes reach the watermark").isGreaterThan(warn);
        t.nvmf().removePool("p0");
        PoolConfig p = new PoolConfig("p0", PoolConfig.KIND_REFLINK_DIR, poolDir.toString());
        p.warnPercent = warn;
        t.nvmf().addPool(p);
        t.nvmf().createVolume("p0", VolumeRequest.thin("thin", GIB));
        t.nvmf().addNamespace(TestTarget.SUBNQN, new NamespaceConfig(7, "p0/thin"));
        try (LogCapture log = new LogCapture("io.nvmf4j.bdev.ReflinkPool");
             NvmeController c = t.controller(1, TcpHostOptions.DEFAULT)) {
            NvmeHost io = c.io(0);
            for (int i = 0; i < 24 * 16; i++) { // 64 KiB each
                assertThat(io.write(7, i * 128L, Le.random(64 << 10, i)).ok()).isTrue();
            }
            assertThat(io.flush(7).ok()).isTrue();
            var line = log.await("above its warning watermark of " + warn + "%", java.time.Duration.ofSeconds(30));
            assertThat(line).as("the crossing logged by the timer, within 30 s of the writes")
                .isNotNull();
            System.out.println("watermark crossed while writing: " + line.getFormattedMessage());
        }
        assertThat(t.nvmf().pool("p0").watermarkCrossings()).as("counted once").isEqualTo(1);
    }

    @Test
    void aFullPoolFailsWritesWithCapacityExceededOnThatNamespaceOnlyUntilSpaceIsFreed() throws Exception {
        t.nvmf().createVolume("p0", VolumeRequest.thin("thin", GIB));
        t.nvmf().addNamespace(TestTarget.SUBNQN, new NamespaceConfig(7, "p0/thin"));
        long free = t.nvmf().pool("p0").free();
        long fill = (free - (4L << 20)) / 4096 * 4096;
        t.nvmf().createVolume("p0", new VolumeRequest("filler", BigInteger.valueOf(fill), 4096, true));
        PoolInfo full = t.nvmf().pool("p0");
        System.out.printf("thick filler of %d bytes: pool free %d -> %d%n", fill, free, full.free());
        assertThat(full.watermarkCrossings()).as("one crossing of the 85%% watermark, counted once").isEqualTo(1);
        assertThat(t.nvmf().pool("p0").watermarkCrossings()).as("still above: not counted again").isEqualTo(1);
        try (NvmeController c = t.controller(1, TcpHostOptions.DEFAULT)) {
            NvmeHost io = c.io(0);
            Completion last = null;
            long lba = 0;
            for (int i = 0; i < 512; i++, lba += 128) {
                last = io.write(7, lba, Le.random(64 << 10, i));
                if (!last.ok()) {
                    break;
                }
            }
            assertThat(last).isNotNull();
            TestTarget.assertStatus(last, 0, 0x81, true);
            System.out.printf("the thin volume's write at LBA %d: %s%n", lba, last);
            TestTarget.assertWriteReadBack(io, 0, 4096, 3); // nsid 1 (malloc) carries on

            t.nvmf().deleteVolume("p0", "filler");
            t.nvmf().settle();
            Completion again = io.write(7, lba, Le.random(64 << 10, 99));
            assertThat(again.ok()).as("the volume serves again once space is freed: %s", again).isTrue();
        }
    }
}
