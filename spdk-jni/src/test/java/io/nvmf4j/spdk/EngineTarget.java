package io.nvmf4j.spdk;

import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.core.IoObserver;
import io.nvmf4j.engine.Engine;
import io.nvmf4j.engine.Engines;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHostOptions;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/**
 * One engine ({@code java} or {@code spdk}) on loopback for a test class, started through {@link Engines} as
 * the service starts it, with two subsystems on one TCP listener on a free port:
 * <ul>
 *   <li>{@link #SUBNQN}: any host; nsid 1 on m0 (64 MiB, 512 B blocks, fixed NGUID/UUID/EUI-64), nsid 3 on m3;</li>
 *   <li>{@link #RESTRICTED_NQN}: only {@link #ALLOWED_HOSTNQN}; nsid 1 on m1.</li>
 * </ul>
 */
final class EngineTarget implements AutoCloseable {
    static final String ADDRESS = "127.0.0.1";
    static final String SUBNQN = "nqn.2024-01.io.nvmf4j:contract-open";
    static final String RESTRICTED_NQN = "nqn.2024-01.io.nvmf4j:contract-restricted";
    static final String HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:7c0e2b1a-44d3-4f6e-9b1c-000000000001";
    static final String ALLOWED_HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:7c0e2b1a-44d3-4f6e-9b1c-000000000002";
    static final String SERIAL = "NVMF4JCT0001";
    static final String MODEL = "nvmf4j-contract";
    static final String NGUID = "00112233445566778899aabbccddeeff";
    static final String UUID = "5e3c1d2a-7b4f-4c8e-a9d0-1f2e3d4c5b6a";
    static final String EUI64 = "a1b2c3d4e5f60718";
    static final int BLOCK_SIZE = 512;
    static final long NUM_BLOCKS = 131072;
    static final long SMALL_BLOCKS = 16384;
    static final int KATO_MS = 30000;

    final Engine engine;
    /** The listener as configured (port 0). */
    final ListenerConfig listener;

    private EngineTarget(Engine engine, ListenerConfig listener) {
        this.engine = engine;
        this.listener = listener;
    }

    /** The standard document for engine {@code name}; the spdk engine runs on core 0 in 512 MiB of ordinary memory. */
    static TargetConfig document(String name) throws IOException {
        TargetConfig cfg = new TargetConfig();
        cfg.engine = name;
        cfg.spdk.coreMask = "0x1";
        cfg.spdk.memSizeMb = 512;
        cfg.spdk.hugepages = false;
        cfg.bdevs.add(new BdevConfig("m0", "malloc", BLOCK_SIZE, NUM_BLOCKS));
        cfg.bdevs.add(new BdevConfig("m1", "malloc", BLOCK_SIZE, SMALL_BLOCKS));
        cfg.bdevs.add(new BdevConfig("m3", "malloc", BLOCK_SIZE, SMALL_BLOCKS));
        ListenerConfig l = new ListenerConfig("tcp", ADDRESS, freePort());

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
        open.listeners.add(l);

        SubsystemConfig restricted = new SubsystemConfig();
        restricted.nqn = RESTRICTED_NQN;
        restricted.allowAnyHost = false;
        restricted.hosts.add(ALLOWED_HOSTNQN);
        restricted.namespaces.add(new NamespaceConfig(1, "m1"));
        restricted.listeners.add(l);

        cfg.subsystems.add(open);
        cfg.subsystems.add(restricted);
        return cfg;
    }

    static EngineTarget start(String name) throws IOException {
        TargetConfig cfg = document(name);
        return new EngineTarget(Engines.start(cfg, IoObserver.NONE), cfg.subsystems.get(0).listeners.get(0));
    }

    /**
     * A port nothing listens on now. The main listener names it rather than 0: the java engine's discovery log
     * gives a port-0 listener's configured port (0), not the bound one.
     */
    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** The port the engine bound for {@code l}. */
    int port(ListenerConfig l) {
        InetSocketAddress a = engine.listeners().get(l);
        if (a == null) {
            throw new IllegalStateException("the engine does not listen on " + l + ": " + engine.listeners());
        }
        return a.getPort();
    }

    int port() {
        return port(listener);
    }

    NvmeController controller(String subnqn, String hostnqn, int ioQueues) throws IOException {
        return NvmeController.open(ADDRESS, port(), subnqn, hostnqn, KATO_MS, ioQueues, TcpHostOptions.DEFAULT);
    }

    /** A controller of the open subsystem for {@link #HOSTNQN}. */
    NvmeController controller(int ioQueues) throws IOException {
        return controller(SUBNQN, HOSTNQN, ioQueues);
    }

    /** A discovery controller (KATO 0, no I/O queues). */
    NvmeController discovery(String hostnqn) throws IOException {
        return NvmeController.open(ADDRESS, port(), NvmeHost.DISCOVERY_NQN, hostnqn, 0, 0, TcpHostOptions.DEFAULT);
    }

    @Override
    public void close() {
        engine.close();
    }
}
