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

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * One run of the spdk engine for {@link SpdkLvolRestartTest}, in a JVM of its own (SPDK starts once per process),
 * on the document in file {@code args[1]}: {@code make} adds pool p0 on the file bdev f0, a thin volume v1 exported
 * as namespace 7 with a pattern written by a host, its snapshot s1 and an lvol "stray" made behind the document's
 * back, then saves the document and closes the engine; {@code load} starts from the document and prints what
 * the start found in each pool's store and whether namespace 7 still reads the pattern.
 */
final class LvolRestartChild {
    static final long MIB = 1L << 20;

    private LvolRestartChild() {
    }

    public static void main(String[] args) throws Exception {
        Path file = Path.of(args[1]);
        TargetConfig cfg = ConfigStore.parse(Files.readString(file, StandardCharsets.UTF_8));
        ConfigController<Engine> nvmf = Engines.start(cfg, IoObserver.NONE);
        try {
            int port = nvmf.listeners().get(cfg.subsystems.get(0).listeners.get(0)).getPort();
            byte[] pattern = Le.random(64 << 10, 11);
            if (args[0].equals("make")) {
                PoolConfig p = new PoolConfig("p0", PoolConfig.KIND_LVOL, null);
                p.baseBdev = "f0";
                p.clusterSize = MIB;
                nvmf.addPool(p);
                nvmf.createVolume("p0", VolumeRequest.thin("v1", 4 * MIB));
                nvmf.addNamespace(TestTarget.SUBNQN, new NamespaceConfig(7, "p0/v1"));
                try (NvmeController c = open(port)) {
                    Completion w = c.io(0).write(7, 0, pattern);
                    System.out.println("pattern written: " + w.ok());
                }
                nvmf.createSnapshot("p0", "v1", "s1");
                SpdkNative.lvol(SpdkNative.LVOL_CREATE, "p0", "stray", "stray", MIB, true);
                Files.writeString(file, ConfigStore.toJson(nvmf.configSnapshot()), StandardCharsets.UTF_8);
                System.out.println("made");
            } else {
                SpdkEngine engine = (SpdkEngine) nvmf.engine();
                for (PoolConfig p : nvmf.configSnapshot().pools) {
                    SpdkPools.Reconciled r = engine.poolReconciled(p.name);
                    System.out.println("pool " + p.name + ": created=" + r.created() + " missing=" + r.missing()
                        + " extra=" + r.extra() + " volumes=" + nvmf.volumes(p.name).stream()
                        .map(v -> v.name() + ":" + v.allocatedBytes()).toList());
                }
                try (NvmeController c = open(port)) {
                    Completion r = c.io(0).read(7, 0, pattern.length / 512);
                    System.out.println("pattern kept: " + (r.ok() && Arrays.equals(r.data(), pattern)));
                }
            }
        } finally {
            nvmf.close();
        }
        System.out.println("engine closed");
    }

    private static NvmeController open(int port) throws java.io.IOException {
        return NvmeController.open(TestTarget.ADDRESS, port, TestTarget.SUBNQN, TestTarget.HOSTNQN, TestTarget.KATO_MS,
            1, TcpHostOptions.DEFAULT);
    }
}
