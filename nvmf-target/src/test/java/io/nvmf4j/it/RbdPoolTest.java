package io.nvmf4j.it;

import io.nvmf4j.testhost.FreePorts;
import io.nvmf4j.ControlException;
import io.nvmf4j.bdev.RbdPool;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.PoolConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.engine.PoolInfo;
import io.nvmf4j.engine.SnapshotTaken;
import io.nvmf4j.engine.VolumeInfo;
import io.nvmf4j.engine.VolumeRequest;
import io.nvmf4j.javaengine.JavaEngine;
import io.nvmf4j.nvme.IdentifyNamespace;
import io.nvmf4j.testhost.CephCluster;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.assertj.core.api.ThrowableAssert;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import java.math.BigInteger;
import java.util.Arrays;
import java.util.List;
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
 * Volumes of an rbd pool over real NVMe/TCP on loopback, on a real one-node Ceph cluster ({@link CephCluster}): each
 * test makes a RADOS pool of its own and a client allowed on it alone ({@code profile rbd}). A thin volume (an RBD
 * image) exported and written, an RBD snapshot taken while a host writes (the writes held around it), an RBD clone
 * of it exported to a second host that reads the data as of the snapshot, a live grow the host sees, deletes in
 * lineage order with their refusals, and the RADOS pool empty at the end; a thick volume written whole (and grown
 * thick); bad requests refused naming their field with nothing changed; a crash between Ceph's change and the
 * document's commit, then a restart; a stop between the durable document and the removal of a deleted image
 * from RBD's trash, finished at the next start; and group snapshots, one instant for every client of the images.
 */
@ExtendWith(CephCluster.class)
@Timeout(value = 240, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RbdPoolTest {
    private static final long MIB = 1L << 20;
    private static final int BS = 512;
    /** Asynchronous event configuration: namespace attribute notices. */
    private static final int AEC_NS_ATTRIBUTE = 1 << 8;

    private CephCluster.RadosPool rados;
    private String radosPool;
    private ConfigController<JavaEngine> t;
    private int port;

    @BeforeEach
    void setUp() throws Exception {
        CephCluster.get().ensureManager();
        rados = CephCluster.get().newPool("vols");
        radosPool = rados.name();
        TargetConfig c = TestTarget.config(FreePorts.pick());
        port = c.subsystems.get(0).listeners.get(0).port;
        t = JavaEngine.start(c);
    }

    @AfterEach
    void tearDown() throws Exception {
        if (t != null) {
            t.close();
        }
        CephCluster.get().deletePool(rados);
    }

    private PoolConfig rbdPool(String name) {
        PoolConfig p = new PoolConfig();
        p.name = name;
        p.kind = PoolConfig.KIND_RBD;
        p.pool = radosPool;
        p.cephConf = CephCluster.get().conf();
        p.clientName = rados.client();
        p.keyring = rados.keyring();
        return p;
    }

    /** {@code rbd ls} (or {@code rbd trash ls}, {@code rbd snap ls IMAGE}) of the test's RADOS pool. */
    private List<String> rbd(String... args) throws Exception {
        String[] full = Arrays.copyOf(args, args.length + 2);
        full[args.length] = "-p";
        full[args.length + 1] = radosPool;
        return Arrays.stream(CephCluster.get().rbd(full).split("\n")).map(String::strip).filter(s -> !s.isEmpty())
            .toList();
    }

    /** The names of the RBD snapshots of {@code image} ({@code rbd snap ls --format json}). */
    private List<String> snapshots(String image) throws Exception {
        var json = ConfigStore.mapper().readTree(CephCluster.get().rbd("snap", "ls", "--format", "json",
            radosPool + "/" + image));
        List<String> out = new java.util.ArrayList<>();
        json.forEach(n -> out.add(n.path("name").asText()));
        return out;
    }

    @Test
    void thinVolumeSnapshotUnderWritesCloneToSecondHostGrowAndDeleteInOrder() throws Exception {
        t.addPool(rbdPool("p0"));
        // the figures come from the cluster's manager, which reports a new RADOS pool within seconds
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        PoolInfo pool = t.pool("p0");
        while (pool.size() == 0 && System.nanoTime() - deadline < 0) {
            Thread.sleep(100);
            pool = t.pool("p0");
        }
        System.out.printf("rbd pool p0 on RADOS pool %s: size %d, used %d, free %d bytes%n", pool.path(), pool.size(),
            pool.used(), pool.free());
        assertThat(pool.kind()).isEqualTo("rbd");
        assertThat(pool.free()).as("MAX AVAIL of the RADOS pool").isPositive();
        VolumeInfo vol = t.createVolume("p0", VolumeRequest.thin("vol1", 256 * MIB));
        assertThat(vol.thin()).isTrue();
        assertThat(vol.allocatedBytes()).as("a new image has no object").isZero();
        assertThat(rbd("ls")).containsExactly("vol1");
        t.addNamespace(TestTarget.SUBNQN, new NamespaceConfig(7, "p0/vol1"));
        try (NvmeController c = NvmeController.open(TestTarget.ADDRESS, port, TestTarget.SUBNQN, TestTarget.HOSTNQN,
            TestTarget.KATO_MS, 2, TcpHostOptions.DEFAULT)) {
            NvmeHost io = c.io(0);
            byte[] pattern = Le.random((int) MIB, 7);
            for (int off = 0; off < pattern.length; off += 64 << 10) {
                assertThat(io.write(7, off / BS, Arrays.copyOfRange(pattern, off, off + (64 << 10))).ok()).isTrue();
            }
            long allocated = t.volume("p0", "vol1").allocatedBytes();
            System.out.printf("vol1: %d bytes provisioned, %d allocated after 1 MiB written%n", vol.provisionedBytes(),
                allocated);
            assertThat(allocated).as("whole 4 MiB objects: the one written").isEqualTo(4 * MIB);

            long stampBase = 64 * MIB;
            StampedWrites.Writer writer = StampedWrites.Writer.start(c.io(1), 7, BS, stampBase, Long.MAX_VALUE);
            AtomicLong acknowledged = writer.acknowledged;
            awaitAtLeast(acknowledged, 50);
            long before = acknowledged.get();
            SnapshotTaken snap = t.createSnapshot("p0", "vol1", "s1");
            long after = acknowledged.get();
            awaitAtLeast(acknowledged, after + 20);
            writer.stop();
            System.out.printf("RBD snapshot vol1@s1 under writes: writes held for %d us; %d stamped writes"
                + " acknowledged before, %d after it returned%n", TimeUnit.NANOSECONDS.toMicros(snap.pauseNanos()),
                before, after);
            assertThat(snap.pauseNanos()).as("the namespace's writes were held").isPositive();
            assertThat(snapshots("vol1")).containsExactly("s1");

            VolumeInfo clone = t.cloneSnapshot("p0", "vol1", "s1", "clone1");
            System.out.printf("clone1 of vol1@s1: %d bytes provisioned, %d allocated%n", clone.provisionedBytes(),
                clone.allocatedBytes());
            assertThat(clone.origin()).isEqualTo("vol1@s1");
            assertThat(clone.allocatedBytes()).as("a fresh clone has no object of its own").isZero();
            assertThat(CephCluster.get().rbd("info", radosPool + "/clone1")).contains("parent: " + radosPool
                + "/vol1@s1");

            t.addNamespace(TestTarget.RESTRICTED_NQN, new NamespaceConfig(2, "p0/clone1"));
            try (NvmeController other = NvmeController.open(TestTarget.ADDRESS, port, TestTarget.RESTRICTED_NQN,
                TestTarget.ALLOWED_HOSTNQN, TestTarget.KATO_MS, 1, TcpHostOptions.DEFAULT)) {
                NvmeHost cio = other.io(0);
                assertThat(readAll(cio, 2, BS, pattern.length)).as("the pattern, through the clone").isEqualTo(pattern);
                long inSnapshot = stampedPrefix(cio, 2, BS, stampBase, after + 20);
                System.out.printf("the snapshot holds stamped writes 0..%d%n", inSnapshot - 1);
                assertThat(inSnapshot).as("every write acknowledged before the snapshot began is in it, none issued"
                    + " after it returned").isBetween(before, after + 1);
                assertThat(cio.write(2, 0, Le.random(4096, 5)).ok()).as("the clone is writable").isTrue();
            }
            assertThat(readAll(io, 7, BS, pattern.length)).as("the clone's write stays in the clone").isEqualTo(pattern);

            // grow live: rbd_resize on the open image, the host told
            assertThat(c.admin().setFeatures(0x0B, AEC_NS_ATTRIBUTE).ok()).isTrue();
            CompletableFuture<Completion> aer = c.admin().asyncEventRequest();
            t.resizeVolume("p0", "vol1", BigInteger.valueOf(512 * MIB));
            assertThat(aer.get(10, TimeUnit.SECONDS).ok()).isTrue();
            assertThat(Le.u64(c.admin().identify(0x00, 7, 0).data(), IdentifyNamespace.NSZE)).isEqualTo(512 * MIB / BS);
            assertThat(CephCluster.get().rbd("info", radosPool + "/vol1")).contains("size 512 MiB");
            assertThat(io.write(7, 512 * MIB / BS - 8, Le.random(4096, 9)).ok()).as("a write in the grown part").isTrue();
            assertThatThrownBy(() -> t.resizeVolume("p0", "vol1", BigInteger.valueOf(128 * MIB)))
                .isInstanceOf(ControlException.class).hasMessageContaining("size:").hasMessageContaining("7");
        }

        // deletes follow the lineage: namespace, clone, snapshot, volume; each out of order is a conflict
        refused(() -> t.deleteVolume("p0", "vol1"), ControlException.Kind.CONFLICT, "backs namespace");
        t.removeNamespace(TestTarget.SUBNQN, 7);
        refused(() -> t.deleteVolume("p0", "vol1"), ControlException.Kind.CONFLICT, "has snapshot(s) [s1]");
        refused(() -> t.deleteSnapshot("p0", "vol1", "s1"), ControlException.Kind.CONFLICT, "clone(s) [clone1]");
        refused(() -> t.deleteVolume("p0", "clone1"), ControlException.Kind.CONFLICT, "backs namespace");
        t.removeNamespace(TestTarget.RESTRICTED_NQN, 2);
        refused(() -> t.removePool("p0"), ControlException.Kind.CONFLICT, "still has volume");
        t.deleteVolume("p0", "clone1");
        t.settle();
        t.deleteSnapshot("p0", "vol1", "s1");
        t.settle();
        assertThat(snapshots("vol1")).as("the RBD snapshot went once the document was durable").isEmpty();
        // a shrink of a volume no namespace uses
        t.resizeVolume("p0", "vol1", BigInteger.valueOf(128 * MIB));
        assertThat(CephCluster.get().rbd("info", radosPool + "/vol1")).contains("size 128 MiB");
        t.deleteVolume("p0", "vol1");
        assertThat(rbd("trash", "ls")).as("the deleted image waits in RBD's trash until the document is durable")
            .hasSize(1);
        t.settle();
        assertThat(rbd("ls")).isEmpty();
        assertThat(rbd("trash", "ls")).isEmpty();
        t.removePool("p0");
        assertThat(t.configSnapshot().pools).isEmpty();
    }

    @Test
    void aThickVolumeIsWrittenWholeReadsZerosAndGrowsThickWhileAThinOneStaysEmpty() throws Exception {
        t.addPool(rbdPool("p0"));
        long t0 = System.nanoTime();
        VolumeInfo thick = t.createVolume("p0", new VolumeRequest("thick", BigInteger.valueOf(16 * MIB), null, true));
        System.out.printf("thick volume of 16 MiB made in %d ms%n", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
        VolumeInfo thin = t.createVolume("p0", VolumeRequest.thin("thin", 16 * MIB));
        assertThat(thick.thin()).isFalse();
        assertThat(thick.allocatedBytes()).as("every object of the thick image exists").isEqualTo(16 * MIB);
        assertThat(thin.allocatedBytes()).as("a thin image has no object").isZero();

        t.addNamespace(TestTarget.SUBNQN, new NamespaceConfig(7, "p0/thick"));
        try (NvmeController c = NvmeController.open(TestTarget.ADDRESS, port, TestTarget.SUBNQN, TestTarget.HOSTNQN,
            TestTarget.KATO_MS, 1, TcpHostOptions.DEFAULT)) {
            NvmeHost io = c.io(0);
            assertThat(readAll(io, 7, BS, (int) (16 * MIB))).as("a thick volume reads zeros")
                .isEqualTo(new byte[(int) (16 * MIB)]);
            // a live grow writes the range it adds before the host sees it
            assertThat(c.admin().setFeatures(0x0B, AEC_NS_ATTRIBUTE).ok()).isTrue();
            CompletableFuture<Completion> aer = c.admin().asyncEventRequest();
            t.resizeVolume("p0", "thick", BigInteger.valueOf(24 * MIB));
            assertThat(aer.get(10, TimeUnit.SECONDS).ok()).isTrue();
            assertThat(Le.u64(c.admin().identify(0x00, 7, 0).data(), IdentifyNamespace.NSZE)).isEqualTo(24 * MIB / BS);
            assertThat(t.volume("p0", "thick").allocatedBytes()).as("the grown range is written too")
                .isEqualTo(24 * MIB);
            byte[] grown = new byte[(int) (8 * MIB)];
            for (int off = 0; off < grown.length; off += 64 << 10) {
                Completion r = io.read(7, (16 * MIB + off) / BS, (64 << 10) / BS);
                assertThat(r.ok()).isTrue();
                System.arraycopy(r.data(), 0, grown, off, 64 << 10);
            }
            assertThat(grown).as("the grown range reads zeros").isEqualTo(new byte[grown.length]);
        }
        // a grow whose document was written ahead but whose resize never ran: the start grows the image, thick
        TargetConfig grown = t.configSnapshot();
        grown.pool("p0").volume("thick").numBlocks = 32 * MIB / BS;
        restart(grown);
        assertThat(t.engine().rbdReconciled("p0").resized()).containsExactly("thick");
        assertThat(t.volume("p0", "thick").allocatedBytes()).isEqualTo(32 * MIB);
        // the document keeps it thick: after a restart its bdev grows thick again
        t.resizeVolume("p0", "thick", BigInteger.valueOf(40 * MIB));
        assertThat(t.volume("p0", "thick").allocatedBytes()).isEqualTo(40 * MIB);
        assertThat(t.volume("p0", "thick").thin()).isFalse();
        // a grow of a thin volume stays thin
        t.resizeVolume("p0", "thin", BigInteger.valueOf(32 * MIB));
        assertThat(t.volume("p0", "thin").allocatedBytes()).isZero();
        t.removeNamespace(TestTarget.SUBNQN, 7);
        t.deleteVolume("p0", "thick");
        t.deleteVolume("p0", "thin");
        t.settle();
        assertThat(rbd("ls")).isEmpty();
        assertThat(rbd("trash", "ls")).isEmpty();
    }

    @Test
    void identifyReportsAThinVolumesAllocatedObjectsAsNuseAndAThickOneAsFull() throws Exception {
        t.addPool(rbdPool("p0"));
        t.createVolume("p0", VolumeRequest.thin("thin", 64 * MIB));
        t.createVolume("p0", new VolumeRequest("thick", BigInteger.valueOf(8 * MIB), null, true));
        t.addNamespace(TestTarget.SUBNQN, new NamespaceConfig(7, "p0/thin"));
        t.addNamespace(TestTarget.SUBNQN, new NamespaceConfig(8, "p0/thick"));
        try (NvmeController c = NvmeController.open(TestTarget.ADDRESS, port, TestTarget.SUBNQN, TestTarget.HOSTNQN,
            TestTarget.KATO_MS, 1, TcpHostOptions.DEFAULT)) {
            byte[] id = c.admin().identify(0x00, 7, 0).data();
            assertThat(id[IdentifyNamespace.NSFEAT] & 1).as("NSFEAT bit 0: thin").isEqualTo(1);
            assertThat(awaitNuse(c, 7, 0)).as("a fresh image has no object").isZero();

            NvmeHost io = c.io(0);
            byte[] data = Le.random(64 << 10, 3);
            for (long off = 0; off < 8 * MIB; off += data.length) {
                assertThat(io.write(7, off / BS, data).ok()).isTrue();
            }
            long nuse = awaitNuse(c, 7, 8 * MIB / BS);
            System.out.printf("thin: NUSE %d blocks after 8 MiB written (NSZE %d)%n", nuse,
                Le.u64(c.admin().identify(0x00, 7, 0).data(), IdentifyNamespace.NSZE));
            assertThat(nuse).as("the two 4 MiB objects written").isEqualTo(8 * MIB / BS);
            assertThat(nuse * BS).as("the figure the pool reads").isEqualTo(t.volume("p0", "thin").allocatedBytes());

            byte[] thick = c.admin().identify(0x00, 8, 0).data();
            assertThat(thick[IdentifyNamespace.NSFEAT] & 1).as("a thick volume is not thin").isZero();
            assertThat(Le.u64(thick, IdentifyNamespace.NUSE)).as("every block in use")
                .isEqualTo(Le.u64(thick, IdentifyNamespace.NSZE)).isEqualTo(8 * MIB / BS);
        }
        t.removeNamespace(TestTarget.SUBNQN, 7);
        t.removeNamespace(TestTarget.SUBNQN, 8);
        t.deleteVolume("p0", "thin");
        t.deleteVolume("p0", "thick");
        t.settle();
    }

    @Test
    void aWriteToAPoolAtItsQuotaEndsWithCapacityExceededAtOnceWhileOtherPoolsWriteAndTheQuotaLiftedTakesWritesAgain()
        throws Exception {
        CephCluster.RadosPool otherRados = CephCluster.get().newPool("other");
        try {
            t.addPool(rbdPool("p0"));
            PoolConfig other = rbdPool("p1");
            other.pool = otherRados.name();
            other.clientName = otherRados.client();
            other.keyring = otherRados.keyring();
            t.addPool(other);
            t.createVolume("p0", VolumeRequest.thin("full", 256 * MIB));
            t.createVolume("p1", VolumeRequest.thin("free", 16 * MIB));
            t.addNamespace(TestTarget.SUBNQN, new NamespaceConfig(7, "p0/full"));
            t.addNamespace(TestTarget.SUBNQN, new NamespaceConfig(8, "p1/free"));
            try (NvmeController c = NvmeController.open(TestTarget.ADDRESS, port, TestTarget.SUBNQN,
                TestTarget.HOSTNQN, TestTarget.KATO_MS, 1, TcpHostOptions.DEFAULT)) {
                NvmeHost io = c.io(0);
                byte[] first = Le.random(1 << 20, 11);
                for (int off = 0; off < first.length; off += 64 << 10) {
                    assertThat(io.write(7, off / BS, Arrays.copyOfRange(first, off, off + (64 << 10))).ok()).isTrue();
                }
                CephCluster.get().ceph("osd", "pool", "set-quota", radosPool, "max_bytes", String.valueOf(MIB));
                // the monitors mark the pool full once the OSDs' statistics reach them: every write adds bytes
                byte[] block = Le.random(4096, 12);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                long lba = (1 << 20) / BS;
                Completion w;
                long took;
                do {
                    lba += (64 << 10) / BS;
                    long t0 = System.nanoTime();
                    w = io.write(7, lba, block);
                    took = System.nanoTime() - t0;
                    if (w.ok()) {
                        Thread.sleep(200);
                    }
                } while (w.ok() && System.nanoTime() - deadline < 0);
                System.out.printf("RADOS pool %s at its quota: a write ended with %s after %d ms%n", radosPool, w,
                    TimeUnit.NANOSECONDS.toMillis(took));
                assertThat(w.sct()).as("generic").isZero();
                assertThat(w.sc()).as("Capacity Exceeded").isEqualTo(0x81);
                assertThat(w.dnr()).isTrue();
                assertThat(took).as("answered by the OSD, not held until the op timeout")
                    .isLessThan(TimeUnit.SECONDS.toNanos(10));

                assertThat(readAll(io, 7, BS, first.length)).as("reads go on").isEqualTo(first);
                assertThat(io.write(7, 0, Le.random(4096, 13)).ok()).as("an overwrite adds no bytes").isTrue();
                assertThat(io.write(8, 0, block).ok()).as("a volume of another RADOS pool takes writes").isTrue();

                CephCluster.get().ceph("osd", "pool", "set-quota", radosPool, "max_bytes", "0");
                deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                do {
                    w = io.write(7, lba, block);
                    if (!w.ok()) {
                        Thread.sleep(200);
                    }
                } while (!w.ok() && System.nanoTime() - deadline < 0);
                assertThat(w.ok()).as("the quota lifted: the write that was refused lands").isTrue();
            }
            t.removeNamespace(TestTarget.SUBNQN, 7);
            t.removeNamespace(TestTarget.SUBNQN, 8);
            t.deleteVolume("p0", "full");
            t.deleteVolume("p1", "free");
            t.settle();
            t.removePool("p1");
        } finally {
            CephCluster.get().ceph("osd", "pool", "set-quota", radosPool, "max_bytes", "0");
            if (t != null) {
                t.close();
                t = null;
            }
            CephCluster.get().deletePool(otherRados);
        }
    }

    /**
     * Identify Namespace {@code nsid} until its NUSE is {@code want} (the device reads the allocation again on its own
     * thread when an Identify finds the figure stale), at most 30 s: the last NUSE read.
     */
    private static long awaitNuse(NvmeController c, int nsid, long want) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        long nuse = Le.u64(c.admin().identify(0x00, nsid, 0).data(), IdentifyNamespace.NUSE);
        while (nuse != want && System.nanoTime() - deadline < 0) {
            Thread.sleep(200);
            nuse = Le.u64(c.admin().identify(0x00, nsid, 0).data(), IdentifyNamespace.NUSE);
        }
        return nuse;
    }

    @Test
    void aDeleteCommittedBeforeAStopIsRemovedFromRbdsTrashAtStartAndOthersTrashIsLeftAlone() throws Exception {
        t.addPool(rbdPool("p0"));
        t.createVolume("p0", VolumeRequest.thin("keep", 8 * MIB));
        t.createVolume("p0", VolumeRequest.thin("gone", 8 * MIB));
        t.createVolume("p0", VolumeRequest.thin("settled", 8 * MIB));
        // someone else's image in RBD's trash of the same RADOS pool
        CephCluster.get().rbd("create", "--size", "4M", radosPool + "/stranger");
        CephCluster.get().rbd("trash", "mv", radosPool + "/stranger");
        String stranger = rbd("trash", "ls").get(0);

        // a delete settled as usual: its record goes with the image
        t.deleteVolume("p0", "settled");
        assertThat(trashRecords()).as("the trash move is recorded").hasSize(1);
        t.settle();
        assertThat(trashRecords()).isEmpty();
        assertThat(rbd("trash", "ls")).containsExactly(stranger);

        // the stop comes after the document without "gone" is durable, before RBD's trash is emptied
        t.deleteVolume("p0", "gone");
        List<String> trash = rbd("trash", "ls");
        String gone = trash.stream().filter(l -> l.endsWith(" gone")).findFirst().orElseThrow();
        String id = gone.substring(0, gone.indexOf(' '));
        assertThat(trashRecords()).containsExactly("nvmf4j.trash." + id);
        assertThat(CephCluster.get().rados("-p", radosPool, "getomapval", "rbd_info", "metadata_nvmf4j.trash." + id))
            .as("the record names the volume").contains("gone");
        t.faultHook(s -> {
            if (s.equals("settle")) {
                throw new IllegalStateException("crash at " + s);
            }
        });
        assertThatThrownBy(t::settle).hasMessageContaining("crash at settle");
        assertThat(rbd("trash", "ls")).containsExactlyInAnyOrder(stranger, gone);
        // and a record whose image left the trash some other way (a stop between the removal and the record's)
        CephCluster.get().rados("-p", radosPool, "setomapval", "rbd_info", "metadata_nvmf4j.trash.0000stale", "x");
        restart(t.configSnapshot());

        RbdPool.Reconciled r = t.engine().rbdReconciled("p0");
        System.out.printf("at start: removed from RBD's trash %s, restored %s, not in the configuration %s%n",
            r.removed(), r.restored(), r.unknown());
        assertThat(r.removed()).containsExactly("gone");
        assertThat(r.restored()).isEmpty();
        assertThat(rbd("trash", "ls")).as("someone else's trash entry stays").containsExactly(stranger);
        assertThat(trashRecords()).as("every record dropped").isEmpty();
        assertThat(rbd("ls")).containsExactly("keep");
        assertThat(t.volumes("p0")).extracting(VolumeInfo::name).containsExactly("keep");
    }

    /** Our records of trash moves in the RADOS pool's RBD metadata (omap keys of {@code rbd_info}), without prefix. */
    private List<String> trashRecords() throws Exception {
        return Arrays.stream(CephCluster.get().rados("-p", radosPool, "listomapkeys", "rbd_info").split("\n"))
            .map(String::strip).filter(k -> k.startsWith("metadata_" + RbdPool.TRASH_KEY))
            .map(k -> k.substring("metadata_".length())).toList();
    }

    /** Pool p0 with thin volumes a and b of 16 MiB, namespaces 5 and 6 of the open subsystem. */
    private void twoVolumesExported() {
        t.addPool(rbdPool("p0"));
        t.createVolume("p0", VolumeRequest.thin("a", 16 * MIB));
        t.createVolume("p0", VolumeRequest.thin("b", 16 * MIB));
        t.addNamespace(TestTarget.SUBNQN, new NamespaceConfig(5, "p0/a"));
        t.addNamespace(TestTarget.SUBNQN, new NamespaceConfig(6, "p0/b"));
    }

    @Test
    void aGroupSnapshotUnderWritesKeepsTheWriteOrderAcrossItsVolumesAndEachSnapshotClonesAndGoesOnItsOwn()
        throws Exception {
        twoVolumesExported();
        long before;
        long after;
        SnapshotTaken taken;
        try (NvmeController c = NvmeController.open(TestTarget.ADDRESS, port, TestTarget.SUBNQN, TestTarget.HOSTNQN,
            TestTarget.KATO_MS, 1, TcpHostOptions.DEFAULT)) {
            NvmeHost io = c.io(0);
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            AtomicLong done = new AtomicLong();
            CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
                // write k goes to a, then to b: b never holds a write that a lacks
                for (long k = 0; !stop.get() && k < 4096; k++) {
                    assertThat(io.write(5, k * STAMP / BS, stamp(k)).ok()).isTrue();
                    assertThat(io.write(6, k * STAMP / BS, stamp(k)).ok()).isTrue();
                    done.set(k + 1);
                }
            });
            awaitAtLeast(done, 50);
            before = done.get();
            taken = t.createGroupSnapshot("p0", List.of("a", "b"), "g");
            after = done.get();
            awaitAtLeast(done, Math.min(4096, after + 10));
            stop.set(true);
            writer.get(60, TimeUnit.SECONDS);
        }
        System.out.printf("group snapshot g of a and b under writes: writes held for %d us; %d pairs written before,"
            + " %d when it returned%n", TimeUnit.NANOSECONDS.toMicros(taken.pauseNanos()), before, after);
        assertThat(taken.pauseNanos()).as("the namespaces' writes were held").isPositive();
        assertThat(snapshots("a")).containsExactly("g");
        assertThat(snapshots("b")).containsExactly("g");
        assertThat(t.snapshots("p0", "a")).extracting(x -> x.group()).containsExactly("g");

        // each member clones on its own (an RBD user snapshot), and the clones show one instant
        t.cloneSnapshot("p0", "a", "g", "ca");
        t.cloneSnapshot("p0", "b", "g", "cb");
        t.addNamespace(TestTarget.RESTRICTED_NQN, new NamespaceConfig(2, "p0/ca"));
        t.addNamespace(TestTarget.RESTRICTED_NQN, new NamespaceConfig(3, "p0/cb"));
        try (NvmeController other = NvmeController.open(TestTarget.ADDRESS, port, TestTarget.RESTRICTED_NQN,
            TestTarget.ALLOWED_HOSTNQN, TestTarget.KATO_MS, 1, TcpHostOptions.DEFAULT)) {
            long inA = stampedPrefix(other.io(0), 2, BS, 0, after + 1);
            long inB = stampedPrefix(other.io(0), 3, BS, 0, after + 1);
            System.out.printf("the clones of a@g and b@g hold pairs 0..%d and 0..%d%n", inA - 1, inB - 1);
            assertThat(inA).as("every pair written before the snapshot began is in a's").isGreaterThanOrEqualTo(before);
            assertThat(inB).as("every pair written before the snapshot began is in b's").isGreaterThanOrEqualTo(before);
            assertThat(inB).as("b's snapshot holds no write that a's lacks").isLessThanOrEqualTo(inA);
            assertThat(inA - inB).as("the two were taken at one instant").isLessThanOrEqualTo(1);
        }

        // one member's snapshot goes on its own; the other's stays
        t.removeNamespace(TestTarget.RESTRICTED_NQN, 2);
        t.deleteVolume("p0", "ca");
        t.settle();
        t.deleteSnapshot("p0", "a", "g");
        t.settle();
        assertThat(snapshots("a")).isEmpty();
        assertThat(snapshots("b")).containsExactly("g");
    }

    @Test
    void aGroupSnapshotIsRefusedWhileAnotherClientOwnsAVolumesLockAndUndoneWhenOneTakesItMeanwhile()
        throws Exception {
        twoVolumesExported();
        String doc = ConfigStore.toJson(t.configSnapshot());
        try (NvmeController c = NvmeController.open(TestTarget.ADDRESS, port, TestTarget.SUBNQN, TestTarget.HOSTNQN,
            TestTarget.KATO_MS, 1, TcpHostOptions.DEFAULT)) {
            NvmeHost io = c.io(0);
            assertThat(io.write(5, 0, stamp(0)).ok()).isTrue();
            assertThat(io.write(6, 0, stamp(0)).ok()).isTrue();

            // another client writes to a after a's snapshot, before b's: a's lock leaves this gateway
            t.engine().rbdGroupSnapshotStep(v -> {
                if (v.equals("a")) {
                    try {
                        CephCluster.get().rbd("bench", "--io-type", "write", "--io-size", "4096", "--io-total",
                            "4096", "--io-pattern", "seq", radosPool + "/a");
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }
            });
            refused(() -> t.createGroupSnapshot("p0", List.of("a", "b"), "g"), ControlException.Kind.CONFLICT,
                "volumes: volume a of pool p0: another client took the exclusive lock of its image during the group"
                    + " snapshot");
            t.engine().rbdGroupSnapshotStep(v -> { });
            assertThat(snapshots("a")).as("the snapshot made before the other client's write is undone").isEmpty();
            assertThat(snapshots("b")).isEmpty();
            assertThat(ConfigStore.toJson(t.configSnapshot())).as("the document").isEqualTo(doc);
            assertThat(io.write(5, 8, stamp(1)).ok()).as("the held writes run on").isTrue();

            // another gateway serves b and writes to it: it owns b's lock, whose writes this one cannot hold
            TargetConfig other = TestTarget.config(FreePorts.pick());
            io.nvmf4j.config.BdevConfig rb = new io.nvmf4j.config.BdevConfig("rb", "rbd", BS, 0);
            rb.pool = radosPool;
            rb.image = "b";
            rb.cephConf = CephCluster.get().conf();
            rb.clientName = rados.client();
            rb.keyring = rados.keyring();
            other.bdevs.add(rb);
            other.subsystems.get(0).namespaces.add(new NamespaceConfig(7, "rb"));
            int otherPort = other.subsystems.get(0).listeners.get(0).port;
            try (ConfigController<JavaEngine> g2 = JavaEngine.start(other);
                 NvmeController c2 = NvmeController.open(TestTarget.ADDRESS, otherPort, TestTarget.SUBNQN,
                     TestTarget.HOSTNQN, TestTarget.KATO_MS, 1, TcpHostOptions.DEFAULT)) {
                assertThat(c2.io(0).write(7, 16, stamp(2)).ok()).as("a write through the other gateway").isTrue();
                refused(() -> t.createGroupSnapshot("p0", List.of("a", "b"), "g"), ControlException.Kind.CONFLICT,
                    "volumes: volume b of pool p0: another client (");
                assertThatThrownBy(() -> t.createGroupSnapshot("p0", List.of("a", "b"), "g"))
                    .hasMessageContaining("owns the exclusive lock of its image and may write to it");
                assertThat(snapshots("a")).as("nothing made").isEmpty();
                assertThat(snapshots("b")).isEmpty();
            }
            // that gateway gone, the group snapshot is taken
            SnapshotTaken g = t.createGroupSnapshot("p0", List.of("a", "b"), "g");
            System.out.printf("group snapshot g once the other clients left: writes held for %d us%n",
                TimeUnit.NANOSECONDS.toMicros(g.pauseNanos()));
            assertThat(snapshots("a")).containsExactly("g");
            assertThat(snapshots("b")).containsExactly("g");
        }
    }

    @Test
    void badRequestsAreRefusedNamingTheFieldAndChangeNothing() throws Exception {
        t.addPool(rbdPool("p0"));
        t.createVolume("p0", VolumeRequest.thin("v", 64 * MIB));
        t.createVolume("p0", VolumeRequest.thin("w", 64 * MIB));
        t.createSnapshot("p0", "v", "s");
        String doc = ConfigStore.toJson(t.configSnapshot());
        List<String> images = rbd("ls");

        refused(() -> t.createGroupSnapshot("p0", List.of("v", "missing"), "g"), ControlException.Kind.NOT_FOUND,
            "no volume missing");
        refused(() -> t.createGroupSnapshot("p0", List.of("v", "w"), "s"), ControlException.Kind.CONFLICT,
            "name: volume v already has a snapshot s");
        refused(() -> t.createGroupSnapshot("p0", List.of("v", "v"), "g"), ControlException.Kind.INVALID,
            "volumes: a volume is named twice");
        refused(() -> t.createVolume("p0", VolumeRequest.thin("v", MIB)), ControlException.Kind.CONFLICT, "name:");
        refused(() -> t.createSnapshot("p0", "v", "s"), ControlException.Kind.CONFLICT, "name:");
        refused(() -> t.cloneSnapshot("p0", "v", "missing", "c"), ControlException.Kind.NOT_FOUND,
            "no snapshot missing");
        refused(() -> t.createVolume("p0", VolumeRequest.thin("x", 1000)), ControlException.Kind.INVALID, "size:");
        for (String name : List.of("a/b", "a@b", ".x", "")) {
            refused(() -> t.createVolume("p0", VolumeRequest.thin(name, MIB)), ControlException.Kind.INVALID, "name:");
        }

        PoolConfig same = rbdPool("p1");
        rejected(() -> t.addPool(same), "pools[1].pool: RADOS pool '" + radosPool
            + "' holds pool 'p0' already");
        PoolConfig missingPool = rbdPool("p1");
        missingPool.pool = null;
        rejected(() -> t.addPool(missingPool), "pool: missing for an rbd pool");
        PoolConfig noSuchPool = rbdPool("p1");
        noSuchPool.pool = "nosuch" + radosPool;
        refused(() -> t.addPool(noSuchPool), ControlException.Kind.INVALID, "pool: pool p1: cannot open RADOS pool");
        PoolConfig badClient = rbdPool("p1");
        badClient.clientName = "admin";
        badClient.pool = "other";
        rejected(() -> t.addPool(badClient), "clientName: must be client.NAME");
        PoolConfig outside = rbdPool("p1");
        outside.pool = "other";
        outside.keyring = "/etc/shadow";
        rejected(() -> t.addPool(outside), "keyring:");
        PoolConfig withPath = rbdPool("p1");
        withPath.pool = "other";
        withPath.path = "/tmp";
        rejected(() -> t.addPool(withPath), "do not belong to an rbd pool");

        assertThat(ConfigStore.toJson(t.configSnapshot())).as("the document").isEqualTo(doc);
        assertThat(rbd("ls")).as("the RADOS pool's images").isEqualTo(images);
        assertThat(snapshots("v")).containsExactly("s");
    }

    @Test
    void aPoolOnARadosPoolWithImagesIsRefused() throws Exception {
        CephCluster.get().rbd("create", "--size", "4M", radosPool + "/stranger");
        refused(() -> t.addPool(rbdPool("p0")), ControlException.Kind.INVALID, "holds images already [stranger]");
        assertThat(t.configSnapshot().pools).isEmpty();
    }

    @Test
    void aCrashBetweenCephsChangeAndTheCommitIsReportedOrRestoredAtStartAndNothingIsDeleted() throws Exception {
        t.addPool(rbdPool("p0"));
        t.createVolume("p0", VolumeRequest.thin("base", 64 * MIB));
        t.createSnapshot("p0", "base", "s0");
        t.createVolume("p0", VolumeRequest.thin("victim", 16 * MIB));
        t.settle();

        // a delete whose document is never committed: the image comes back from RBD's trash at start
        crashAt("deleteVolume", c -> c.deleteVolume("p0", "victim"));
        assertThat(rbd("ls")).containsExactly("base", "victim");
        assertThat(t.engine().rbdReconciled("p0").restored()).containsExactly("victim");
        // a snapshot delete never committed: RBD's snapshot was never removed
        crashAt("deleteSnapshot", c -> c.deleteSnapshot("p0", "base", "s0"));
        assertThat(snapshots("base")).containsExactly("s0");
        // a clone never committed: the image is reported, not deleted
        crashAt("cloneSnapshot", c -> c.cloneSnapshot("p0", "base", "s0", "orphan"));
        RbdPool.Reconciled r = t.engine().rbdReconciled("p0");
        System.out.printf("at start: missing %s, not in the configuration %s, restored %s%n", r.missing(),
            r.unknown(), r.restored());
        assertThat(r.unknown()).containsExactly("orphan");
        assertThat(rbd("ls")).containsExactly("base", "orphan", "victim");
        // a group snapshot never committed: each volume's RBD snapshot is reported, not deleted
        crashAt("snapshot", c -> c.createGroupSnapshot("p0", List.of("base", "victim"), "g1"));
        r = t.engine().rbdReconciled("p0");
        System.out.printf("after a group snapshot never committed: not in the configuration %s%n", r.unknown());
        assertThat(r.unknown()).containsExactlyInAnyOrder("orphan", "base@g1", "victim@g1");
        assertThat(snapshots("victim")).containsExactly("g1");
        assertThat(t.volume("p0", "victim").snapshots()).isEmpty();
        // a shrink whose document was written ahead but whose resize never ran: the image is set back at start
        TargetConfig shrunk = t.configSnapshot();
        shrunk.pool("p0").volume("victim").numBlocks = 8 * MIB / BS;
        restart(shrunk);
        assertThat(t.engine().rbdReconciled("p0").resized()).containsExactly("victim");
        assertThat(t.volume("p0", "victim").provisionedBytes()).isEqualTo(8 * MIB);
        assertThat(CephCluster.get().rbd("info", radosPool + "/victim")).contains("size 8 MiB");
        // an image the document names that Ceph lost is reported and its volume not served
        TargetConfig committed = t.configSnapshot();
        t.close();
        t = null;
        CephCluster.get().rbd("snap", "purge", radosPool + "/victim");
        CephCluster.get().rbd("rm", radosPool + "/victim");
        t = JavaEngine.start(committed);
        r = t.engine().rbdReconciled("p0");
        assertThat(r.missing()).containsExactly("victim");
        assertThat(t.volumes("p0")).extracting(VolumeInfo::name).contains("base", "victim");
        assertThat(t.volume("p0", "base").snapshots()).containsExactly("s0");
    }

    /** Runs {@code change} with a fault at {@code step}, then restarts from the committed document. */
    private void crashAt(String step, java.util.function.Consumer<ConfigController<JavaEngine>> change)
        throws Exception {
        TargetConfig committed = t.configSnapshot();
        t.faultHook(s -> {
            if (s.equals(step)) {
                throw new IllegalStateException("crash at " + s);
            }
        });
        assertThatThrownBy(() -> change.accept(t)).hasMessageContaining("crash at " + step);
        assertThat(ConfigStore.toJson(t.configSnapshot())).isEqualTo(ConfigStore.toJson(committed));
        restart(committed);
    }

    private void restart(TargetConfig committed) throws Exception {
        t.close();
        t = null;
        t = JavaEngine.start(committed);
    }

    /** Refused by the document's rules (the REST layer answers 400 with the message, which names the field). */
    private static void rejected(ThrowableAssert.ThrowingCallable call, String text) {
        assertThatThrownBy(call).isInstanceOf(io.nvmf4j.config.ConfigException.class).hasMessageContaining(text);
    }

    private static void refused(ThrowableAssert.ThrowingCallable call, ControlException.Kind kind, String text) {
        assertThatThrownBy(call).isInstanceOf(ControlException.class).hasMessageContaining(text)
            .extracting(e -> ((ControlException) e).kind()).isEqualTo(kind);
    }
}
