package io.nvmf4j.spdk;

import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.PoolConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.engine.Engine;
import io.nvmf4j.engine.Engines;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.engine.VolumeRequest;
import io.nvmf4j.it.Le;
import io.nvmf4j.it.TestTarget;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.TcpHostOptions;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * One run of the spdk engine for {@link SpdkLvolRestartTest}, in a JVM of its own (SPDK starts once per process),
 * on the document in file {@code args[1]}. {@code make} adds pool p0 on the file bdev f0 with a thin volume v1
 * exported as namespace 7, writes pattern A at 0, takes snapshot s1 through the API, writes pattern B at 1 MiB; then,
 * behind the document's back as a kill -9 before a commit leaves them, snapshot v1@s2 of v1, pattern C at 2 MiB,
 * clone c1 of v1@s1, a thick volume "stray", and two lvols no call of the API could make ("gone@s1": no volume gone,
 * ".dot": not a volume name); then it saves the document and closes the engine. {@code load} starts from the
 * document and prints what the start found in each pool's store, the store's lvols, the patterns namespace 7 reads,
 * then the outcome of deleting snapshot v1@s1 and of retrying the uncommitted calls through the API.
 */
final class LvolRestartChild {
    static final long MIB = 1L << 20;
    /** Where patterns A, B and C lie in v1, in 512-byte blocks: in clusters 0, 1 and 2. */
    private static final long[] PATTERN_LBA = {0, MIB / 512, 2 * MIB / 512};
    /** The lvols made behind the document's back that are not of the pool's naming. */
    static final List<String> NOT_OURS = List.of("gone@s1", ".dot");

    private LvolRestartChild() {
    }

    public static void main(String[] args) throws Exception {
        Path file = Path.of(args[1]);
        TargetConfig cfg = ConfigStore.parse(Files.readString(file, StandardCharsets.UTF_8));
        ConfigController<Engine> nvmf = Engines.start(cfg, IoObserver.NONE);
        try {
            int port = nvmf.listeners().get(cfg.subsystems.get(0).listeners.get(0)).getPort();
            if (args[0].equals("make")) {
                make(nvmf, port);
                Files.writeString(file, ConfigStore.toJson(nvmf.configSnapshot()), StandardCharsets.UTF_8);
                System.out.println("made");
            } else {
                load(nvmf, port);
            }
        } finally {
            nvmf.close();
        }
        System.out.println("engine closed");
    }

    private static void make(ConfigController<Engine> nvmf, int port) throws IOException {
        PoolConfig p = new PoolConfig("p0", PoolConfig.KIND_LVOL, null);
        p.baseBdev = "f0";
        p.clusterSize = MIB;
        nvmf.addPool(p);
        nvmf.createVolume("p0", VolumeRequest.thin("v1", 4 * MIB));
        nvmf.addNamespace(TestTarget.SUBNQN, new NamespaceConfig(7, "p0/v1"));
        try (NvmeController c = open(port)) {
            System.out.println("pattern written: " + c.io(0).write(7, PATTERN_LBA[0], pattern(0)).ok());
            nvmf.createSnapshot("p0", "v1", "s1");
            System.out.println("pattern written: " + c.io(0).write(7, PATTERN_LBA[1], pattern(1)).ok());
            SpdkNative.lvol(SpdkNative.LVOL_SNAPSHOT, "p0", "v1", "v1@s2", 0, true);
            System.out.println("pattern written: " + c.io(0).write(7, PATTERN_LBA[2], pattern(2)).ok());
        }
        SpdkNative.lvol(SpdkNative.LVOL_CLONE, "p0", "v1@s1", "c1", 0, true);
        SpdkNative.lvol(SpdkNative.LVOL_CREATE, "p0", "stray", "stray", MIB, false);
        for (String n : NOT_OURS) {
            SpdkNative.lvol(SpdkNative.LVOL_CREATE, "p0", n, n, MIB, true);
        }
    }

    private static void load(ConfigController<Engine> nvmf, int port) throws IOException {
        SpdkEngine engine = (SpdkEngine) nvmf.engine();
        for (PoolConfig p : nvmf.configSnapshot().pools) {
            SpdkPools.Reconciled r = engine.poolReconciled(p.name);
            System.out.println("pool " + p.name + ": created=" + r.created() + " missing=" + r.missing()
                + " removed=" + sorted(r.removed()) + " kept=" + sorted(r.kept()) + " volumes="
                + nvmf.volumes(p.name).stream().map(v -> v.name() + ":" + v.allocatedBytes()).toList());
        }
        System.out.println("store p0 holds " + lvols());
        try (NvmeController c = open(port)) {
            System.out.println("patterns kept: " + patterns(c));
            System.out.println("delete of snapshot v1@s1: " + outcome(() -> nvmf.deleteSnapshot("p0", "v1", "s1")));
            System.out.println("patterns kept: " + patterns(c));
        }
        System.out.println("retry of create stray: " + outcome(() -> nvmf.createVolume("p0",
            new VolumeRequest("stray", BigInteger.valueOf(MIB), null, true))));
        System.out.println("retry of snapshot v1@s2: " + outcome(() -> nvmf.createSnapshot("p0", "v1", "s2")));
        System.out.println("retry of clone c1: " + outcome(() -> nvmf.cloneSnapshot("p0", "v1", "s2", "c1")));
        System.out.println("store p0 holds " + lvols());
    }

    /** "ok", or what the call threw. */
    private static String outcome(Runnable call) {
        try {
            call.run();
            return "ok";
        } catch (RuntimeException e) {
            return "refused: " + e.getMessage();
        }
    }

    /** Whether namespace 7 reads patterns A, B and C where they were written. */
    private static boolean patterns(NvmeController c) {
        for (int i = 0; i < PATTERN_LBA.length; i++) {
            Completion r = c.io(0).read(7, PATTERN_LBA[i], pattern(i).length / 512);
            if (!r.ok() || !Arrays.equals(r.data(), pattern(i))) {
                return false;
            }
        }
        return true;
    }

    private static byte[] pattern(int i) {
        return Le.random(64 << 10, 11 + i);
    }

    /** The names of store p0's lvols, sorted. */
    private static List<String> lvols() {
        return sorted(SpdkPools.parseInfo(SpdkNative.lvs(SpdkNative.LVS_INFO, null, "p0", 0)).lvols().keySet());
    }

    private static List<String> sorted(java.util.Collection<String> names) {
        return names.stream().sorted().toList();
    }

    private static NvmeController open(int port) throws IOException {
        return NvmeController.open(TestTarget.ADDRESS, port, TestTarget.SUBNQN, TestTarget.HOSTNQN, TestTarget.KATO_MS,
            1, TcpHostOptions.DEFAULT);
    }
}
