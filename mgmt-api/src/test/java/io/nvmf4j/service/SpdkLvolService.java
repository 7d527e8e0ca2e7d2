package io.nvmf4j.service;

import io.nvmf4j.testhost.FreePorts;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.StorageConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.service.api.Http;
import io.nvmf4j.service.api.TestService;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.TcpHostOptions;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The service on the spdk engine as a child JVM ({@link ServiceProcess}: SPDK starts once per process), started from
 * document {@link #file} in a test's directory as often as the test asks: {@link SpdkRequirement#document} with
 * subsystem {@code nqn} on a free TCP port and file bdev f0 (in the directory) for an lvol pool.
 */
final class SpdkLvolService implements AutoCloseable {
    /** What a start of SPDK may take on a loaded machine. */
    private static final long START_TIMEOUT_MS = 90_000;

    /** The document the service starts from. */
    final Path file;
    final Http http;
    private final Path dir;
    private final String nqn;
    private final int apiPort;
    private final int ioPort;
    private ServiceProcess service;
    private int starts;

    /** Writes the document, f0 being {@code f0Bytes} of 512-byte blocks; starts nothing. */
    SpdkLvolService(Path dir, String nqn, String token, long f0Bytes) throws IOException {
        this.dir = dir;
        this.nqn = nqn;
        ioPort = FreePorts.pick();
        TargetConfig c = SpdkRequirement.document(nqn, token, ioPort);
        apiPort = c.api.port;
        c.storage = StorageConfig.directories(dir.toString());
        BdevConfig f0 = new BdevConfig("f0", "file", 512, f0Bytes / 512);
        f0.path = dir.resolve("f0.img").toString();
        c.bdevs.add(f0);
        file = dir.resolve("config.json");
        ConfigStore.save(file, c);
        http = new Http(apiPort, token);
    }

    /** Starts the service and waits for its API; its output goes to {@code service-N.log} of the directory. */
    void start() throws Exception {
        service = ServiceProcess.start(dir, dir.resolve("service-" + starts++ + ".log"), "--state-dir", dir.toString(),
            "--config", file.toString());
        String line = ServiceProcess.apiLine(apiPort, file);
        assertThat(service.awaitLine(l -> l.contains(line), START_TIMEOUT_MS))
            .as("start %d: the service came up; output:%n%s", starts, service.output()).isTrue();
    }

    /** SIGTERM: SPDK stops cleanly (the lvol store is unloaded) and the service exits 0. */
    void stop() throws InterruptedException {
        service.process.destroy();
        assertThat(service.process.waitFor(60, TimeUnit.SECONDS)).as("stopped; output:%n%s", service.output())
            .isTrue();
        assertThat(service.process.exitValue()).as("exit status; output:%n%s", service.output()).isZero();
    }

    /** kill -9 of the service, waiting until it is gone. */
    void kill() throws InterruptedException {
        service.kill();
    }

    /** What the running (or last) start printed. */
    String output() {
        return service.output();
    }

    /** A controller of host {@code hostnqn} on the subsystem, with one I/O queue. */
    NvmeController host(String hostnqn) throws IOException {
        return NvmeController.open("127.0.0.1", ioPort, nqn, hostnqn, 10_000, 1, TcpHostOptions.DEFAULT);
    }

    static Http.Res expect(int status, Http.Res r) {
        assertThat(r.status()).as("%s", r).isEqualTo(status);
        return r;
    }

    /** Kills the service if it was started. */
    @Override
    public void close() throws InterruptedException {
        if (service != null) {
            service.kill();
        }
    }
}
