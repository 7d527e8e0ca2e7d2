package io.nvmf4j.service;

import io.nvmf4j.NvmfTarget;
import io.nvmf4j.config.ConfigException;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.ConfigValidator;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.core.Subsystem;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * The nvmf4j service: loads (or creates) the configuration, starts the target, logs how to reach each
 * listener and runs in the foreground until SIGTERM or SIGINT, then disconnects hosts and flushes the
 * block devices.
 */
@Command(name = "nvmf4j-target", mixinStandardHelpOptions = true, version = "nvmf4j 0.1.0",
    description = "NVMe-over-Fabrics target (NVMe/TCP). Runs in the foreground; stop with SIGTERM or Ctrl-C.")
public final class Main implements Callable<Integer> {
    private static final Logger LOG = LoggerFactory.getLogger(Main.class);

    @Option(names = "--state-dir", paramLabel = "DIR",
        description = "State directory (default: /var/lib/nvmf4j for root, ~/.local/state/nvmf4j otherwise).")
    Path stateDir;

    @Option(names = "--config", paramLabel = "FILE",
        description = "Configuration file (default: <state-dir>/config.json; created with the embedded default "
            + "when absent).")
    Path configFile;

    public static void main(String[] args) {
        System.exit(new CommandLine(new Main()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        Path dir = stateDir != null ? stateDir : defaultStateDir();
        Path file = configFile != null ? configFile : dir.resolve("config.json");
        TargetConfig config;
        try {
            config = loadOrCreate(file);
        } catch (ConfigException e) {
            System.err.println("nvmf4j-target: " + file + ": " + e.getMessage());
            return 2;
        }
        NvmfTarget target;
        try {
            target = NvmfTarget.start(config);
        } catch (ConfigException e) {
            System.err.println("nvmf4j-target: " + file + ": " + e.getMessage());
            return 2;
        } catch (IOException | RuntimeException e) {
            System.err.println("nvmf4j-target: cannot start: " + e.getMessage());
            return 1;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            LOG.info("stopping: disconnecting hosts and flushing block devices");
            target.close();
            stopped.countDown();
        }, "nvmf4j-shutdown"));
        announce(target);
        stopped.await();
        return 0;
    }

    private static TargetConfig loadOrCreate(Path file) throws IOException {
        if (!Files.exists(file)) {
            TargetConfig c = ConfigStore.defaultConfig();
            ConfigStore.assignIdentities(c);
            ConfigStore.save(file, c);
            LOG.info("no configuration at {}: wrote the embedded default there", file);
            return c;
        }
        TargetConfig c = ConfigStore.load(file);
        ConfigValidator.validate(c); // never rewrite a document we are about to reject
        if (ConfigStore.assignIdentities(c)) {
            ConfigStore.save(file, c);
            LOG.info("generated missing serial numbers / NGUIDs / UUIDs and kept them in {}", file);
        }
        return c;
    }

    static Path defaultStateDir() {
        boolean root;
        try {
            root = ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).intValue() == 0;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            root = "root".equals(System.getProperty("user.name"));
        }
        return root ? Path.of("/var/lib/nvmf4j")
            : Path.of(System.getProperty("user.home"), ".local", "state", "nvmf4j");
    }

    private static void announce(NvmfTarget target) {
        for (Map.Entry<ListenerConfig, InetSocketAddress> e : target.listeners().entrySet()) {
            ListenerConfig l = e.getKey();
            int port = e.getValue().getPort();
            StringBuilder nqns = new StringBuilder();
            for (SubsystemConfig s : target.config().subsystems) {
                if (s.listeners.contains(l)) {
                    nqns.append(nqns.length() == 0 ? "" : " ").append(s.nqn);
                }
            }
            LOG.info("listening on {} {}:{} for {} (and {}): nvme discover -t {} -a {} -s {} ; "
                    + "nvme connect -t {} -a {} -s {} -n {}",
                l.transport, l.address, port, nqns, Subsystem.DISCOVERY_NQN, l.transport, l.address, port,
                l.transport, l.address, port, nqns.toString().split(" ")[0]);
        }
    }
}
