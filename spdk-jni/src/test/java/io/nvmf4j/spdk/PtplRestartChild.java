package io.nvmf4j.spdk;

import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.engine.Engine;
import io.nvmf4j.engine.Engines;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.it.Le;
import io.nvmf4j.it.TestTarget;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHostOptions;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One run of the spdk engine for {@link SpdkPtplTest}, in a JVM of its own (SPDK starts once per process), on the
 * document in file {@code args[1]} with the state directory {@code args[2]}. Every phase prints namespace 1's
 * RESCAP; {@code register}: the host registers key {@link #KEY} with Persist Through Power Loss on (CPTPL 11b) and
 * takes a Write Exclusive reservation; {@code report}: the host's Reservation Report (extended); {@code remove}:
 * the namespace is removed through the control layer. Each prints whether SPDK's PTPL file is there.
 */
final class PtplRestartChild {
    static final long KEY = 0x5a5a0001L;

    private PtplRestartChild() {
    }

    public static void main(String[] args) throws Exception {
        String phase = args[0];
        TargetConfig cfg = ConfigStore.parse(Files.readString(Path.of(args[1]), StandardCharsets.UTF_8));
        Path stateDir = Path.of(args[2]);
        ConfigController<Engine> nvmf = Engines.start(cfg, IoObserver.NONE, stateDir);
        try {
            int port = nvmf.listeners().get(cfg.subsystems.get(0).listeners.get(0)).getPort();
            String nguid = nvmf.configSnapshot().subsystems.get(0).namespaces.get(0).nguid;
            Path file = stateDir.resolve("spdk-reservation-" + nguid.toLowerCase(java.util.Locale.ROOT) + ".json");
            try (NvmeController c = NvmeController.open(TestTarget.ADDRESS, port, TestTarget.SUBNQN, TestTarget.HOSTNQN,
                TestTarget.KATO_MS, 1, TcpHostOptions.DEFAULT)) {
                byte[] id = c.admin().identify(0x00, 1, 0).data();
                System.out.println("rescap=" + Le.u8(id, 31)); // Identify Namespace byte 31: RESCAP
                NvmeHost io = c.io(0);
                if (phase.equals("register")) {
                    Completion r = io.resvRegister(1, 0, false, 3, 0, KEY);
                    System.out.println("register with ptpl: " + r.ok() + " " + r);
                    Completion a = io.resvAcquire(1, 0, 1, KEY, 0);
                    System.out.println("acquire write exclusive: " + a.ok() + " " + a);
                } else if (phase.equals("report")) {
                    Completion r = io.resvReport(1, true, 4096);
                    byte[] d = r.data();
                    // the first registrant (extended data structure) from byte 64, its RKEY at its byte 8
                    long rkey = java.nio.ByteBuffer.wrap(d, 64 + 8, 8).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong();
                    System.out.println("report: ok=" + r.ok() + " rtype=" + Le.u8(d, 4) + " regctl=" + Le.u16(d, 5)
                        + " ptpls=" + Le.u8(d, 9) + " rkey=" + Long.toHexString(rkey));
                }
            }
            if (phase.equals("remove")) {
                nvmf.removeNamespace(TestTarget.SUBNQN, 1);
                System.out.println("namespace removed");
            }
            System.out.println("ptpl file there: " + Files.exists(file));
        } finally {
            nvmf.close();
        }
        System.out.println("engine closed");
    }
}
