package io.nvmf4j.it;

import io.nvmf4j.testhost.FreePorts;
import io.netty.channel.uring.IoUring;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.StorageConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.javaengine.JavaEngine;
import io.nvmf4j.runtime.SocketIoNames;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHost;
import io.nvmf4j.testhost.TcpHostOptions;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A loopback target for one test class, with two subsystems on one TCP listener:
 * <ul>
 *   <li>{@link #SUBNQN}: any host; nsid 1 on m0 (64 MiB, 512 B blocks, fixed NGUID/UUID/EUI-64),
 *       nsid 3 on m3 (8 MiB);</li>
 *   <li>{@link #RESTRICTED_NQN}: only {@link #ALLOWED_HOSTNQN}; nsid 1 on m1 (8 MiB).</li>
 * </ul>
 */
public final class TestTarget implements AutoCloseable {
    public static final String ADDRESS = "127.0.0.1";
    public static final String SUBNQN = "nqn.2024-01.io.nvmf4j:it-open";
    public static final String RESTRICTED_NQN = "nqn.2024-01.io.nvmf4j:it-restricted";
    public static final String HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-000000000001";
    public static final String ALLOWED_HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-000000000002";
    public static final String SERIAL = "NVMF4JIT0001";
    public static final String MODEL = "nvmf4j-it";
    public static final String NGUID = "0123456789abcdef0123456789abcdef";
    public static final String UUID = "9b2a5f0e-3c41-4e8a-b1d7-5a6c7e8f9012";
    public static final String EUI64 = "0011223344556677";
    public static final int BLOCK_SIZE = 512;
    public static final long NUM_BLOCKS = 131072;
    public static final long SMALL_BLOCKS = 16384;
    public static final int KATO_MS = 30000;
    /**
     * The socket I/O of the targets these tests start ({@code TargetConfig.socketIo}): the system property
     * {@code nvmf4j.test.socketIo} (the build's {@code io-uring} executions run a set of these tests again with
     * {@code io_uring}), else absent (the default, epoll).
     */
    public static final String SOCKET_IO = System.getProperty("nvmf4j.test.socketIo");

    final TargetConfig config;
    final int port;
    private final ConfigController<JavaEngine> target;

    private TestTarget(TargetConfig config, int port, ConfigController<JavaEngine> target) {
        this.config = config;
        this.port = port;
        this.target = target;
    }

    public static TestTarget start() throws IOException {
        return start(c -> {
        });
    }

    /** Starts the standard configuration after {@code customizer} adjusted it. */
    static TestTarget start(Consumer<TargetConfig> customizer) throws IOException {
        return start(customizer, IoObserver.NONE);
    }

    /** Starts the standard configuration after {@code customizer} adjusted it, reporting to {@code observer}. */
    static TestTarget start(Consumer<TargetConfig> customizer, IoObserver observer) throws IOException {
        int port = FreePorts.pick();
        TargetConfig cfg = config(port);
        customizer.accept(cfg);
        if (SocketIoNames.IO_URING.equals(cfg.socketIo)) {
            Assumptions.assumeTrue(IoUring.isAvailable(), () -> "socketIo io_uring: io_uring is unavailable on this"
                + " machine: " + IoUring.unavailabilityCause());
        }
        ConfigController<JavaEngine> target = JavaEngine.start(cfg, observer);
        if (cfg.socketIo != null && !cfg.socketIo.equals(target.engine().pollGroups().socketIo())) {
            String running = target.engine().pollGroups().describe();
            target.close();
            throw new AssertionError("socketIo " + cfg.socketIo + " asked for, the poll groups run: " + running);
        }
        return new TestTarget(cfg, port, target);
    }

    /**
     * Where tests' file bdevs live: the JVM's temporary directory, under which JUnit's {@code @TempDir}s are made
     * (the refusals of other places are StorageValidationTest's).
     */
    public static StorageConfig testStorage() {
        String tmp = Path.of(System.getProperty("java.io.tmpdir")).toAbsolutePath().normalize().toString();
        StorageConfig s = StorageConfig.directories(tmp);
        s.cephDirectories = new ArrayList<>(List.of(tmp)); // the test Ceph cluster's files
        return s;
    }

    /** The standard configuration with its one TCP listener on {@code port} (spdk-jni's engine tests use it too). */
    public static TargetConfig config(int port) {
        TargetConfig cfg = new TargetConfig();
        cfg.socketIo = SOCKET_IO;
        cfg.storage = testStorage();
        cfg.bdevs.add(new BdevConfig("m0", "malloc", BLOCK_SIZE, NUM_BLOCKS));
        cfg.bdevs.add(new BdevConfig("m1", "malloc", BLOCK_SIZE, SMALL_BLOCKS));
        cfg.bdevs.add(new BdevConfig("m3", "malloc", BLOCK_SIZE, SMALL_BLOCKS));

        SubsystemConfig open = new SubsystemConfig();
        open.nqn = SUBNQN;
        open.serial = SERIAL;
        open.model = MODEL;
        open.allowAnyHost = true;
        NamespaceConfig ns1 = new NamespaceConfig(1, "m0");
        ns1.nguid = NGUID;
        ns1.uuid = UUID;
        ns1.eui64 = EUI64;
        open.namespaces.add(ns1);
        open.namespaces.add(new NamespaceConfig(3, "m3"));
        open.listeners.add(new ListenerConfig("tcp", ADDRESS, port));

        SubsystemConfig restricted = new SubsystemConfig();
        restricted.nqn = RESTRICTED_NQN;
        restricted.serial = "NVMF4JIT0002";
        restricted.allowAnyHost = false;
        restricted.hosts.add(ALLOWED_HOSTNQN);
        restricted.namespaces.add(new NamespaceConfig(1, "m1"));
        restricted.listeners.add(new ListenerConfig("tcp", ADDRESS, port));

        cfg.subsystems.add(open);
        cfg.subsystems.add(restricted);
        return cfg;
    }

    /**
     * Adds namespace {@code nsid} of the open subsystem on error bdev {@code name} over a malloc bdev of
     * {@link #SMALL_BLOCKS} blocks, {@code base0} (fault injection through the API).
     */
    static void addErrorNamespace(TargetConfig c, int nsid, String name) {
        c.bdevs.add(new BdevConfig("base0", "malloc", BLOCK_SIZE, SMALL_BLOCKS));
        BdevConfig e = new BdevConfig(name, "error", BLOCK_SIZE, 0);
        e.base = "base0";
        c.bdevs.add(e);
        c.subsystems.get(0).namespaces.add(new NamespaceConfig(nsid, name));
    }

    /** The running target, for control-plane changes. */
    ConfigController<JavaEngine> nvmf() {
        return target;
    }


    /** A controller of the open subsystem for {@link #HOSTNQN}. */
    public NvmeController controller(int ioQueues, TcpHostOptions options) throws IOException {
        return controller(ioQueues, options, KATO_MS);
    }

    NvmeController controller(int ioQueues, TcpHostOptions options, int katoMs) throws IOException {
        return NvmeController.open(ADDRESS, port, SUBNQN, HOSTNQN, katoMs, ioQueues, options);
    }

    /** A controller of the open subsystem through the listener on {@code port}, for {@code hostnqn}: one I/O queue. */
    static NvmeController openController(int port, String hostnqn) throws IOException {
        return NvmeController.open(ADDRESS, port, SUBNQN, hostnqn, KATO_MS, 1, TcpHostOptions.DEFAULT);
    }

    /** A discovery controller (KATO 0, no I/O queues). */
    NvmeController discovery(String hostnqn) throws IOException {
        return NvmeController.open(ADDRESS, port, NvmeHost.DISCOVERY_NQN, hostnqn, 0, 0, TcpHostOptions.DEFAULT);
    }

    /** A connection after ICReq/ICResp, no Connect yet. */
    TcpHost tcp(TcpHostOptions options) throws IOException {
        return TcpHost.connect(ADDRESS, port, options);
    }

    /** A connection with no ICReq sent. */
    TcpHost rawTcp() throws IOException {
        return TcpHost.open(ADDRESS, port, TcpHostOptions.DEFAULT);
    }

    /** Writes {@code bytes} of seeded random data at {@code slba} of nsid 1, reads it back and compares. */
    public static void assertWriteReadBack(NvmeHost io, long slba, int bytes, long seed) {
        byte[] data = Le.random(bytes, seed);
        Completion w = io.write(1, slba, data);
        assertThat(w.ok()).as("write %d B at LBA %d: %s", bytes, slba, w).isTrue();
        Completion r = io.read(1, slba, bytes / io.blockSize());
        assertThat(r.ok()).as("read %d B at LBA %d: %s", bytes, slba, r).isTrue();
        assertThat(r.data()).as("data read back at LBA %d", slba).isEqualTo(data);
    }

    /**
     * Two Keep Alives answered on {@code admin}, in place of waiting for an event that must not come: a change made
     * through the target queues its event on the admin queue's thread before it returns, that thread runs its queued
     * tasks at the end of the pass that reads a command, and the queue's answers leave in order; so the AER
     * completion for such an event, had there been one, has reached the host before the second answer.
     */
    public static void settleAdmin(NvmeHost admin) {
        for (int i = 0; i < 2; i++) {
            assertThat(admin.keepAlive().ok()).as("Keep Alive").isTrue();
        }
    }

    static void assertStatus(Completion c, int sct, int sc, boolean dnr) {
        assertThat(c.sct()).as("SCT of %s", c).isEqualTo(sct);
        assertThat(c.sc()).as("SC of %s", c).isEqualTo(sc);
        assertThat(c.dnr()).as("DNR of %s", c).isEqualTo(dnr);
    }

    @Override
    public void close() {
        target.close();
    }
}
