package io.nvmf4j.spdk;

import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.PoolConfig;
import io.nvmf4j.config.SnapshotConfig;
import io.nvmf4j.config.StorageConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.config.VolumeConfig;
import io.nvmf4j.engine.Engines;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An lvol pool across a restart of the spdk engine ({@link LvolRestartChild}, one JVM per run): the store on a file
 * bdev is loaded again with its volume, snapshot and data; the lvols of the pool's naming that the document does not
 * name (an uncommitted create, snapshot and clone) are removed, the snapshot merged back into its volume with its data,
 * and those no call could have made are kept; the document's snapshot can then be deleted and each uncommitted call
 * retried. A pool on a malloc bdev (whose store ends with the process) is made again with the document's volumes,
 * snapshots and clones, empty, and nothing is refused.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SpdkLvolRestartTest {
    private static final long RUN_TIMEOUT_S = 90;

    @TempDir
    Path dir;

    @BeforeAll
    static void requireSpdk() {
        SpdkTools.assumeBuilt();
    }

    @Test
    void aFileBasedStoreIsLoadedAgainWithoutUncommittedLvolsAndAMallocBasedOneIsMadeAgainEmpty() throws Exception {
        TargetConfig cfg = EngineTarget.document(Engines.SPDK);
        cfg.spdk.memSizeMb = 768;
        cfg.storage = StorageConfig.directories(dir.toString());
        BdevConfig f0 = new BdevConfig("f0", "file", 512, 32 * LvolRestartChild.MIB / 512);
        f0.path = dir.resolve("f0.img").toString();
        cfg.bdevs.add(f0);
        Path doc = dir.resolve("config.json");
        Files.writeString(doc, ConfigStore.toJson(cfg), StandardCharsets.UTF_8);
        String made = run("make", doc);
        assertThat(made).contains("pattern written: true", "made", "engine closed")
            .doesNotContain("pattern written: false");

        // a second pool on a malloc bdev, with a volume, its snapshot and a clone of it, as a document would hold them
        TargetConfig saved = ConfigStore.parse(Files.readString(doc, StandardCharsets.UTF_8));
        saved.bdevs.add(new BdevConfig("m9", "malloc", 512, 16 * LvolRestartChild.MIB / 512));
        PoolConfig p1 = new PoolConfig("p1", PoolConfig.KIND_LVOL, null);
        p1.baseBdev = "m9";
        p1.clusterSize = LvolRestartChild.MIB;
        VolumeConfig w1 = new VolumeConfig("w1", 512, 4 * LvolRestartChild.MIB / 512);
        w1.snapshots.add(new SnapshotConfig("t1", w1.numBlocks, "2026-12-06T00:00:00Z", null));
        VolumeConfig w2 = new VolumeConfig("w2", 512, w1.numBlocks);
        w2.origin = "w1@t1";
        p1.volumes.add(w1);
        p1.volumes.add(w2);
        saved.pools.add(p1);
        Files.writeString(doc, ConfigStore.toJson(saved), StandardCharsets.UTF_8);

        String loaded = run("load", doc);
        System.out.print(loaded);
        assertThat(loaded)
            // v1@s2 merged into v1: v1 holds cluster 1 (pattern B) besides its own cluster 2 (pattern C)
            .contains("pool p0: created=false missing=[] removed=[c1, stray, v1@s2] kept=[.dot, gone@s1]"
                + " volumes=[v1:" + 2 * LvolRestartChild.MIB + "]")
            .contains("store p0 holds [.dot, gone@s1, v1, v1@s1]\n")
            .contains("removed lvol v1@s2 (snapshot, " + 4 * LvolRestartChild.MIB + " bytes, " + LvolRestartChild.MIB
                + " allocated, parent v1@s1), merged into v1 which depends on it")
            .contains("removed lvol c1 (thin, " + 4 * LvolRestartChild.MIB + " bytes, 0 allocated, parent v1@s1)")
            .contains("lvol gone@s1 (thin, " + LvolRestartChild.MIB + " bytes, 0 allocated, no parent) is not of the"
                + " pool's naming (the configuration has no volume 'gone'); kept")
            .contains("lvol .dot (thin, " + LvolRestartChild.MIB + " bytes, 0 allocated, no parent) is not of the"
                + " pool's naming (not a volume name: ")
            .contains("pool p1: created=true missing=[] removed=[] kept=[] volumes=[w1:0, w2:0]")
            .contains("lvol store on bdev m9 was made anew")
            .contains("delete of snapshot v1@s1: ok")
            .contains("retry of create stray: ok", "retry of snapshot v1@s2: ok", "retry of clone c1: ok")
            .contains("store p0 holds [.dot, c1, gone@s1, stray, v1, v1@s2]\n")
            .doesNotContain("patterns kept: false");
        assertThat(loaded.split("patterns kept: true", -1)).as("both pattern checks passed").hasSize(3);
    }

    /** Runs the child to its end; its output, after checking that it exited with 0. */
    private String run(String phase, Path doc) throws IOException, InterruptedException {
        Path log = dir.resolve(phase + ".log");
        Process p = ChildJvm.run(LvolRestartChild.class, "256m", dir, log, RUN_TIMEOUT_S, phase, doc.toString());
        String out = Files.readString(log, StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as("%s's exit status; output:%n%s", phase, out).isZero();
        return out;
    }
}
