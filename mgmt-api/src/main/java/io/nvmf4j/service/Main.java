package io.nvmf4j.service;

import io.nvmf4j.config.ConfigException;
import io.nvmf4j.runtime.NettyDefaults;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * The nvmf4j service launcher: starts the {@link Service} (target and management API) from the state
 * directory and runs in the foreground until SIGTERM or SIGINT, then stops the API, disconnects hosts
 * and flushes the block devices.
 */
@Command(name = "nvmf4j-target", mixinStandardHelpOptions = true, version = "nvmf4j 0.1.0",
    description = "NVMe-over-Fabrics target (NVMe/TCP). Runs in the foreground; stop with SIGTERM or Ctrl-C.")
public final class Main implements Callable<Integer> {
    static {
        NettyDefaults.apply(); // before anything loads Netty
    }

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
        Path dir = stateDir != null ? stateDir : StateDir.defaultDir();
        Path file = configFile != null ? configFile : dir.resolve("config.json");
        Service service;
        try {
            service = Service.start(dir, file);
        } catch (ConfigException e) {
            System.err.println("nvmf4j-target: " + file + ": " + e.getMessage());
            return 2;
        } catch (IOException | RuntimeException e) {
            System.err.println("nvmf4j-target: cannot start: " + e.getMessage());
            return 1;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            LOG.info("stopping: management API, then disconnecting hosts and flushing block devices");
            int status = 0;
            try {
                service.close();
            } catch (RuntimeException e) {
                LOG.error("stopping failed: {}", e.toString());
                status = 1;
            }
            stopped.countDown();
            // a stop by SIGTERM/SIGINT is the normal end: exit 0 (the JVM would report 128+signal)
            System.out.flush();
            System.err.flush();
            Runtime.getRuntime().halt(status);
        }, "nvmf4j-shutdown"));
        service.announce();
        stopped.await();
        return 0;
    }
}
