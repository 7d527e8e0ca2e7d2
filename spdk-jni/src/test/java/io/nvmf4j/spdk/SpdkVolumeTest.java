package io.nvmf4j.spdk;

import io.nvmf4j.ControlException;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ConfigException;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.PoolConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.Engines;
import io.nvmf4j.engine.PoolInfo;
import io.nvmf4j.engine.SnapshotTaken;
import io.nvmf4j.engine.VolumeInfo;
import io.nvmf4j.engine.VolumeRequest;
import io.nvmf4j.it.Le;
import io.nvmf4j.it.TestTarget;
import io.nvmf4j.nvme.IdentifyNamespace;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.math.BigInteger;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static io.nvmf4j.it.StampedWrites.STAMP;
import static io.nvmf4j.it.StampedWrites.awaitAtLeast;
import static io.nvmf4j.it.StampedWrites.readAll;
import static io.nvmf4j.it.StampedWrites.stamp;
import static io.nvmf4j.it.StampedWrites.stampedPrefix;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Pools of kind lvol on the spdk engine (SPDK's lvol store on a malloc bdev) through the control layer, over real
 * NVMe/TCP on loopback: a thin volume exported and written, a snapshot taken while a host writes, a clone of it
 * exported to a second host that reads the data as of the snapshot, a live grow the host sees, allocated bytes
 * before and after the clone, deletes in lineage order and refusals out of order, and bad input refused naming the
 * field.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SpdkVolumeTest {
    private static final long MIB = 1L << 20;
    private static final int BS = 512;
    private static final int AEC_NS_ATTRIBUTE = 1 << 8;
    private static EngineTarget target;

    @BeforeAll
    static void start() throws Exception {
        SpdkTools.assumeBuilt();
        TargetConfig cfg = EngineTarget.document(Engines.SPDK);
        cfg.spdk.memSizeMb = 768; // the standard document's bdevs and buffers fill 512 MiB of it
        cfg.bdevs.add(new BdevConfig("lvsbase", "malloc", BS, 48 * MIB / BS));
        target = EngineTarget.start(cfg);
        PoolConfig p = new PoolConfig("p0", PoolConfig.KIND_LVOL, null);
        p.baseBdev = "lvsbase";
        p.clusterSize = MIB;
        PoolInfo info = target.engine.addPool(p);
        System.out.printf("pool p0: lvol store on malloc bdev lvsbase, %d bytes, %d free%n", info.size(), info.free());
        assertThat(info.kind()).isEqualTo(PoolConfig.KIND_LVOL);
        assertThat(info.size()).isBetween(40 * MIB, 48 * MIB);
        assertThat(info.used()).isZero();
    }

    @AfterAll
    static void stop() {
        if (target != null) {
            target.close();
        }
    }

    @Test
    void thinVolumeSnapshotUnderWritesCloneToSecondHostGrowAndDeleteInOrder() throws Exception {
        var nvmf = target.engine;
        VolumeInfo vol = nvmf.createVolume("p0", VolumeRequest.thin("vol1", 16 * MIB));
        assertThat(vol.thin()).isTrue();
        assertThat(vol.allocatedBytes()).as("a new thin volume allocates nothing").isZero();
        nvmf.addNamespace(TestTarget.SUBNQN, new NamespaceConfig(7, "p0/vol1"));
        try (NvmeController c = target.controller(2)) {
            NvmeHost io = c.io(0);
            byte[] pattern = Le.random((int) MIB, 7);
            for (int off = 0; off < pattern.length; off += 64 << 10) {
                assertThat(io.write(7, off / BS, Arrays.copyOfRange(pattern, off, off + (64 << 10))).ok()).isTrue();
            }
            assertThat(Le.u64(c.admin().identify(0x00, 7, 0).data(), IdentifyNamespace.NSZE))
                .isEqualTo(16 * MIB / BS);
            long allocated = nvmf.volume("p0", "vol1").allocatedBytes();
            System.out.printf("volume vol1: %d bytes provisioned, %d allocated after 1 MiB written%n",
                vol.provisionedBytes(), allocated);
            assertThat(allocated).as("one cluster written").isEqualTo(MIB);

            // a second queue writes stamped blocks one after another while the snapshot is taken
            long stampBase = 8 * MIB;
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong acknowledged = new AtomicLong();
            NvmeHost writerQueue = c.io(1);
            CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
                for (long k = 0; !stop.get() && k < 1024; k++) {
                    Completion w = writerQueue.write(7, (stampBase + k * STAMP) / BS, stamp(k));
                    assertThat(w.ok()).as("stamped write %d: %s", k, w).isTrue();
                    acknowledged.set(k + 1);
                }
            });
            awaitAtLeast(acknowledged, 50);
            long before = acknowledged.get();
            SnapshotTaken snap = nvmf.createSnapshot("p0", "vol1", "s1");
            long after = acknowledged.get();
            awaitAtLeast(acknowledged, Math.min(after + 20, 1024));
            stop.set(true);
            writer.get(30, TimeUnit.SECONDS);
            System.out.printf("snapshot s1 under writes: subsystem paused for %d us; %d stamped writes acknowledged"
                + " before, %d after it returned%n", TimeUnit.NANOSECONDS.toMicros(snap.pauseNanos()), before, after);
            assertThat(snap.pauseNanos()).as("the subsystem was paused").isPositive();

            long usedBeforeClone = nvmf.pool("p0").used();
            VolumeInfo clone = nvmf.cloneSnapshot("p0", "vol1", "s1", "clone1");
            long usedAfterClone = nvmf.pool("p0").used();
            System.out.printf("clone1 of a 16 MiB volume: pool used %d -> %d bytes, clone allocated %d, snapshot"
                + " allocated %d%n", usedBeforeClone, usedAfterClone, clone.allocatedBytes(),
                nvmf.snapshots("p0", "vol1").get(0).allocatedBytes());
            assertThat(usedAfterClone).as("a clone shares every cluster").isEqualTo(usedBeforeClone);
            assertThat(clone.allocatedBytes()).as("a fresh clone allocates nothing").isZero();
            assertThat(clone.origin()).isEqualTo("vol1@s1");

            // the clone goes to a second host, through the other subsystem
            nvmf.addNamespace(TestTarget.RESTRICTED_NQN, new NamespaceConfig(2, "p0/clone1"));
            try (NvmeController other = target.controller(TestTarget.RESTRICTED_NQN, TestTarget.ALLOWED_HOSTNQN, 1)) {
                NvmeHost cio = other.io(0);
                assertThat(readAll(cio, 2, BS, pattern.length)).as("the pattern as of the snapshot").isEqualTo(pattern);
                long inSnapshot = stampedPrefix(cio, 2, BS, stampBase, Math.min(after + 20, 1024));
                System.out.printf("the snapshot holds stamped writes 0..%d%n", inSnapshot - 1);
                assertThat(inSnapshot).as("every write acknowledged before the snapshot began is in it, none issued"
                    + " after it returned").isBetween(before, after + 1);
                assertThat(cio.write(2, 0, Le.random(4096, 5)).ok()).as("the clone is writable").isTrue();
            }
            assertThat(nvmf.volume("p0", "clone1").allocatedBytes()).as("its first write took one cluster")
                .isEqualTo(MIB);

            // grow live: the host is told and sees the new size
            assertThat(c.admin().setFeatures(0x0B, AEC_NS_ATTRIBUTE).ok()).isTrue();
            CompletableFuture<Completion> aer = c.admin().asyncEventRequest();
            nvmf.resizeVolume("p0", "vol1", BigInteger.valueOf(24 * MIB));
            assertThat(aer.get(10, TimeUnit.SECONDS).ok()).isTrue();
            assertThat(Le.u64(c.admin().identify(0x00, 7, 0).data(), IdentifyNamespace.NSZE)).isEqualTo(24 * MIB / BS);
            assertThat(io.write(7, 24 * MIB / BS - 8, Le.random(4096, 9)).ok()).as("a write in the grown part")
                .isTrue();
            assertThatThrownBy(() -> nvmf.resizeVolume("p0", "vol1", BigInteger.valueOf(8 * MIB)))
                .isInstanceOf(ControlException.class).hasMessageContaining("size:").hasMessageContaining("7");
        }

        // deletes follow the lineage: namespace, clone, snapshot, volume
        assertThatThrownBy(() -> nvmf.deleteVolume("p0", "vol1")).hasMessageContaining("backs namespace");
        nvmf.removeNamespace(TestTarget.SUBNQN, 7);
        assertThatThrownBy(() -> nvmf.deleteVolume("p0", "vol1")).hasMessageContaining("has snapshot(s) [s1]");
        assertThatThrownBy(() -> nvmf.deleteSnapshot("p0", "vol1", "s1")).hasMessageContaining("clone(s) [clone1]");
        nvmf.removeNamespace(TestTarget.RESTRICTED_NQN, 2);
        nvmf.deleteVolume("p0", "clone1");
        nvmf.deleteSnapshot("p0", "vol1", "s1");
        nvmf.deleteVolume("p0", "vol1");
        PoolInfo end = nvmf.pool("p0");
        System.out.printf("after the deletes: pool used %d bytes%n", end.used());
        assertThat(end.used()).as("no space leaks").isZero();
        assertThat(nvmf.volumes("p0")).isEmpty();
        assertThat(((SpdkEngine) nvmf.engine()).poolInfo(nvmf.configSnapshot().pool("p0")).volumes()).isZero();
    }

    @Test
    void aGroupSnapshotTakesEveryVolumeAndAThickVolumeAllocatesAtOnce() throws Exception {
        var nvmf = target.engine;
        nvmf.createVolume("p0", VolumeRequest.thin("ga", 4 * MIB));
        VolumeInfo thick = nvmf.createVolume("p0", new VolumeRequest("gb", BigInteger.valueOf(4 * MIB), BS, true));
        assertThat(thick.thin()).isFalse();
        assertThat(thick.allocatedBytes()).as("thick: every cluster now").isEqualTo(4 * MIB);
        nvmf.addNamespace(TestTarget.SUBNQN, new NamespaceConfig(8, "p0/ga"));
        SnapshotTaken g = nvmf.createGroupSnapshot("p0", List.of("ga", "gb"), "g1");
        assertThat(g.snapshots()).hasSize(2);
        assertThat(g.pauseNanos()).as("ga's subsystem was paused").isPositive();
        assertThat(nvmf.snapshots("p0", "gb").get(0).group()).isEqualTo("g1");
        nvmf.removeNamespace(TestTarget.SUBNQN, 8);
        for (String v : List.of("ga", "gb")) {
            nvmf.deleteSnapshot("p0", v, "g1");
            nvmf.deleteVolume("p0", v);
        }
        assertThat(nvmf.pool("p0").used()).isZero();
    }

    @Test
    void badInputIsRefusedNamingTheFieldWithNothingChanged() {
        var nvmf = target.engine;
        refused(() -> nvmf.createVolume("p0", VolumeRequest.thin("odd", MIB + BS)), "size:", "cluster size");
        refused(() -> nvmf.createVolume("p0", new VolumeRequest("b4k", BigInteger.valueOf(MIB), 4096, false)),
            "blockSize:", "512");
        refused(() -> nvmf.createVolume("p0", VolumeRequest.thin("../x", MIB)), "name:", "");
        refused(() -> nvmf.createVolume("p0", VolumeRequest.thin("zero", 0)), "size:", "positive");
        refused(() -> nvmf.createVolume("p0", new VolumeRequest("huge", BigInteger.ONE.shiftLeft(64), null, null)),
            "size:", "exceed the largest volume");
        refused(() -> nvmf.createVolume("nope", VolumeRequest.thin("v", MIB)), "", "nope");
        nvmf.createVolume("p0", VolumeRequest.thin("bad1", MIB));
        String longName = "s".repeat(63);
        refused(() -> nvmf.createSnapshot("p0", "bad1", longName), "name:", "63");
        refused(() -> nvmf.cloneSnapshot("p0", "bad1", "missing", "c"), "", "missing");
        refused(() -> nvmf.resizeVolume("p0", "bad1", BigInteger.valueOf(MIB + 4096)), "size:", "cluster size");
        refused(() -> nvmf.deleteSnapshot("p0", "bad1", "missing"), "", "missing");
        assertThat(nvmf.snapshots("p0", "bad1")).isEmpty();
        nvmf.deleteVolume("p0", "bad1");
        PoolConfig reflink = new PoolConfig("p9", PoolConfig.KIND_REFLINK_DIR, "/tmp");
        refused(() -> nvmf.addPool(reflink), "kind:", "reflink-dir pools are java engine only");
        PoolConfig noBase = new PoolConfig("p9", PoolConfig.KIND_LVOL, null);
        noBase.baseBdev = "absent";
        refused(() -> nvmf.addPool(noBase), "baseBdev:", "absent");
        assertThatThrownBy(() -> nvmf.removeBdev("lvsbase")).isInstanceOf(ControlException.class)
            .hasMessageContaining("holds the lvol store of pool p0");
        assertThat(nvmf.volumes("p0")).isEmpty();
        assertThat(nvmf.pools()).extracting(PoolInfo::name).containsExactly("p0");
    }

    private static void refused(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, String field,
                                String why) {
        assertThatThrownBy(call).isInstanceOfAny(ControlException.class, ConfigException.class)
            .hasMessageContaining(field)
            .hasMessageContaining(why);
    }
}
