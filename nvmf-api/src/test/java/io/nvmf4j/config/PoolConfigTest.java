package io.nvmf4j.config;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The validator's rules for {@code pools}: a document with a pool, its volumes and snapshots is accepted on the java
 * engine; the spdk engine refuses the pool kind with its reason; bad names, sizes, lineage and directories (outside
 * {@code storage.fileDirectories}, shared with another pool or a file bdev) are refused naming the field; a namespace
 * names a volume as {@code <pool>/<volume>}.
 */
class PoolConfigTest {
    @TempDir
    Path dir;

    private TargetConfig document() throws IOException {
        Path pool = Files.createDirectories(dir.resolve("pool"));
        TargetConfig c = new TargetConfig();
        c.storage = StorageConfig.directories(dir.toString());
        PoolConfig p = new PoolConfig("p0", PoolConfig.KIND_REFLINK_DIR, pool.toString());
        VolumeConfig v = new VolumeConfig("v", 512, 2048);
        v.snapshots.add(new SnapshotConfig("s", 2048, "2026-12-06T00:00:00Z", null));
        VolumeConfig clone = new VolumeConfig("c", 512, 2048);
        clone.origin = "v@s";
        p.volumes.add(v);
        p.volumes.add(clone);
        c.pools.add(p);
        SubsystemConfig s = new SubsystemConfig();
        s.nqn = "nqn.2024-01.io.nvmf4j:pools";
        s.namespaces.add(new NamespaceConfig(1, "p0/c"));
        c.subsystems.add(s);
        return c;
    }

    @Test
    void aPoolWithVolumesSnapshotsAndAClonesNamespaceIsAccepted() throws IOException {
        TargetConfig c = document();
        ConfigValidator.validate(c);
        assertThat(c.bdev("p0/c").type).isEqualTo(BdevConfig.TYPE_VOLUME);
        assertThat(c.bdev("p0/c").numBlocks).isEqualTo(2048);
        assertThat(c.bdev("p0/missing")).isNull();
        TargetConfig back = ConfigStore.parse(ConfigStore.toJson(c));
        assertThat(ConfigStore.toJson(back)).isEqualTo(ConfigStore.toJson(c));
    }

    @Test
    void theSpdkEngineRefusesThePoolKindWithItsReason() throws IOException {
        TargetConfig c = document();
        c.engine = "spdk";
        assertThat(Refusals.problems(c)).contains("pools[0].kind: reflink-dir pools are java engine only");
    }

    @Test
    void theJavaEngineRefusesAnLvolPoolWithItsReason() throws IOException {
        TargetConfig c = document();
        c.pools.get(0).kind = PoolConfig.KIND_LVOL;
        c.pools.get(0).path = null;
        c.pools.get(0).baseBdev = "m0";
        c.bdevs.add(new BdevConfig("m0", "malloc", 512, 131072));
        assertThat(Refusals.problems(c)).contains("pools[0].kind: lvol pools (SPDK's lvol store) are spdk engine only");
    }

    @Test
    void anLvolPoolOnTheSpdkEngineNeedsAFreeMallocOrFileBaseBdevAndAPowerOfTwoClusterSize() throws IOException {
        TargetConfig c = document();
        c.engine = "spdk";
        c.subsystems.get(0).namespaces.clear();
        PoolConfig p = c.pools.get(0);
        p.kind = PoolConfig.KIND_LVOL;
        p.path = null;
        p.baseBdev = "m0";
        c.bdevs.add(new BdevConfig("m0", "malloc", 512, 131072));
        ConfigValidator.validate(c);
        assertThat(c.bdev("p0/c").type).isEqualTo(BdevConfig.TYPE_VOLUME);
        p.clusterSize = 3L << 20;
        p.path = "/tmp";
        PoolConfig second = new PoolConfig("p1", PoolConfig.KIND_LVOL, null);
        second.baseBdev = "m0";
        c.pools.add(second);
        PoolConfig third = new PoolConfig("p2", PoolConfig.KIND_LVOL, null);
        third.baseBdev = "nothere";
        c.pools.add(third);
        c.pools.add(new PoolConfig("p3", PoolConfig.KIND_LVOL, null));
        c.subsystems.get(0).namespaces.add(new io.nvmf4j.config.NamespaceConfig(1, "m0"));
        assertThat(Refusals.problems(c))
            .contains("pools[0].clusterSize: must be a power of two 4096..1073741824, got 3145728")
            .contains("pools[0].path: an lvol pool has no directory")
            .contains("pools[1].baseBdev: bdev 'm0' holds pool 'p0' already")
            .contains("pools[2].baseBdev: no bdev 'nothere'")
            .contains("pools[3].baseBdev: missing")
            .contains("pools[0].baseBdev: bdev 'm0' backs namespace 1 of");
    }

    @Test
    void badNamesSizesLineageAndDirectoriesAreRefusedNamingTheField() throws IOException {
        TargetConfig c = document();
        PoolConfig p = c.pools.get(0);
        p.volumes.get(0).name = "../x";
        p.volumes.get(1).numBlocks = 0;
        p.volumes.get(1).origin = "v@nope";
        p.warnPercent = 0;
        PoolConfig other = new PoolConfig("p0", PoolConfig.KIND_REFLINK_DIR, p.path + "/inner");
        c.pools.add(other);
        PoolConfig away = new PoolConfig("p2", "zfs", "/etc");
        c.pools.add(away);
        BdevConfig inside = new BdevConfig("f", "file", 512, 8);
        inside.path = p.path + "/f.img";
        c.bdevs.add(inside);
        c.subsystems.get(0).namespaces.get(0).bdev = "p0/zz";
        String problems = Refusals.problems(c);
        assertThat(problems)
            .contains("pools[0].volumes[0].name: must be")
            .contains("pools[0].volumes[1].numBlocks: must be 1..")
            .contains("pools[0].volumes[1].origin: no snapshot 'v@nope'")
            .contains("pools[0].warnPercent: must be 1..100")
            .contains("pools[1].name: duplicate pool name 'p0'")
            .contains("pools[1].path:").contains("overlaps pool 'p0'")
            .contains("pools[2].kind: must be one of [reflink-dir, lvol, rbd], got 'zfs'")
            .contains("pools[2].path: /etc is outside storage.fileDirectories")
            .contains("pools[0].path: file bdev 'f'")
            .contains("namespaces[0].bdev: no bdev named 'p0/zz'");
    }

    /** An rbd pool: its RADOS pool reached as an rbd bdev's (the same rules), thick volumes and group snapshots. */
    @Test
    void anRbdPoolIsCheckedAsAnRbdBdevsConnectionWithThickVolumesAndGroupSnapshots() throws IOException {
        TargetConfig c = document();
        c.storage.cephDirectories = new java.util.ArrayList<>(java.util.List.of(dir.toString()));
        PoolConfig p = c.pools.get(0);
        p.kind = PoolConfig.KIND_RBD;
        p.path = null;
        p.pool = "rbd";
        p.cephConf = dir.resolve("ceph.conf").toString();
        p.clientName = "client.gw";
        ConfigValidator.validate(c);
        TargetConfig back = ConfigStore.parse(ConfigStore.toJson(c));
        assertThat(back.pools.get(0).pool).isEqualTo("rbd");

        p.volumes.get(0).thick = true;
        p.volumes.get(0).snapshots.get(0).group = "g";
        p.keyring = "/etc/ceph/keyring";
        p.clientName = "gw";
        p.path = dir.toString();
        PoolConfig twin = new PoolConfig();
        twin.name = "p1";
        twin.kind = PoolConfig.KIND_RBD;
        twin.pool = "rbd";
        twin.cephConf = p.cephConf;
        c.pools.add(twin);
        PoolConfig noPool = new PoolConfig();
        noPool.name = "p2";
        noPool.kind = PoolConfig.KIND_RBD;
        c.pools.add(noPool);
        PoolConfig reflink = new PoolConfig("p3", PoolConfig.KIND_REFLINK_DIR, dir.resolve("r").toString());
        reflink.pool = "rbd";
        c.pools.add(reflink);
        assertThat(Refusals.problems(c))
            .doesNotContain("volumes[0].thick")
            .doesNotContain("snapshots[0].group")
            .contains("pools[0].keyring: /etc/ceph/keyring")
            .contains("pools[0].clientName: must be client.NAME")
            .contains("pools[0]: path, baseBdev and clusterSize do not belong to an rbd pool")
            .contains("pools[1].pool: RADOS pool 'rbd' holds pool 'p0' already")
            .contains("pools[2].pool: missing for an rbd pool")
            .contains("pools[3]: pool, cephConf, clientName and keyring belong to rbd pools, not reflink-dir");
        c.engine = "spdk";
        assertThat(Refusals.problems(c)).contains("pools[1].kind: rbd pools are java engine only");
    }
}
