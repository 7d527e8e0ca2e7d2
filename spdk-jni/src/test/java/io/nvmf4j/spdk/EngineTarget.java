package io.nvmf4j.spdk;

import io.nvmf4j.testhost.FreePorts;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.engine.Engine;
import io.nvmf4j.engine.Engines;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.it.TestTarget;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHostOptions;

import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * One engine ({@code java} or {@code spdk}) on loopback for a test class, started through {@link Engines} as
 * the service starts it, on nvmf-target's standard document ({@link TestTarget}): two subsystems on one TCP
 * listener on a free port (not port 0: the java engine's discovery log gives a port-0 listener's configured
 * port, 0, instead of the bound one).
 */
final class EngineTarget implements AutoCloseable {
    final ConfigController<Engine> engine;
    /** The main listener, shared by both subsystems. */
    final ListenerConfig listener;

    private EngineTarget(ConfigController<Engine> engine, ListenerConfig listener) {
        this.engine = engine;
        this.listener = listener;
    }

    /**
     * nvmf-target's standard loopback document ({@link TestTarget#config}) on a free port for engine {@code name};
     * the spdk engine runs on core 0 in 512 MiB of ordinary memory.
     */
    static TargetConfig document(String name) throws IOException {
        TargetConfig cfg = TestTarget.config(FreePorts.pick());
        cfg.engine = name;
        cfg.spdk.coreMask = "0x1";
        cfg.spdk.memSizeMb = 512;
        cfg.spdk.hugepages = false;
        cfg.spdk.coreLocks = false; // other suites on this machine may run SPDK on core 0 too
        return cfg;
    }

    static EngineTarget start(String name) throws IOException {
        return start(document(name));
    }

    /** Engine {@code cfg.engine} on {@code cfg} (a {@link #document} the test added to). */
    static EngineTarget start(TargetConfig cfg) throws IOException {
        return new EngineTarget(Engines.start(cfg, IoObserver.NONE), cfg.subsystems.get(0).listeners.get(0));
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
        return NvmeController.open(TestTarget.ADDRESS, port(), subnqn, hostnqn, TestTarget.KATO_MS, ioQueues,
            TcpHostOptions.DEFAULT);
    }

    /** A controller of the open subsystem for {@link TestTarget#HOSTNQN}. */
    NvmeController controller(int ioQueues) throws IOException {
        return controller(TestTarget.SUBNQN, TestTarget.HOSTNQN, ioQueues);
    }

    /** A discovery controller (KATO 0, no I/O queues). */
    NvmeController discovery(String hostnqn) throws IOException {
        return NvmeController.open(TestTarget.ADDRESS, port(), NvmeHost.DISCOVERY_NQN, hostnqn, 0, 0,
            TcpHostOptions.DEFAULT);
    }

    @Override
    public void close() {
        engine.close();
    }
}
