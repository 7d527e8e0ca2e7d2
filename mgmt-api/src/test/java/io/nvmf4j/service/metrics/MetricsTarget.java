package io.nvmf4j.service.metrics;

import io.nvmf4j.testhost.FreePorts;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.javaengine.JavaEngine;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.core.Namespace;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.TcpHost;
import io.nvmf4j.testhost.TcpHostOptions;

import java.io.IOException;

/**
 * A loopback target started with {@link Metrics#observer()} and bound to its {@link Metrics}: one subsystem
 * {@link #SUBNQN} (any host) with nsid 1 on a 16 MiB malloc bdev and nsid 2 on an 8 MiB one, 512-byte blocks.
 */
final class MetricsTarget implements AutoCloseable {
    static final String ADDRESS = "127.0.0.1";
    static final String SUBNQN = "nqn.2024-01.io.nvmf4j:metrics";
    static final String HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:6d0e5d1c-4a8b-4f3e-9c11-000000000001";
    static final long NS1_BLOCKS = 32768;
    static final long NS2_BLOCKS = 16384;
    /**
     * The time a connection gets to send its ICReq and then its Connect, for every test's connections: short enough
     * for a test to wait out, long enough for a host whose JVM is cold or whose core is busy.
     */
    static final int CONNECT_TIMEOUT_MS = 5000;

    final Metrics metrics;
    final ConfigController<JavaEngine> nvmf;
    final int port;

    private MetricsTarget(Metrics metrics, ConfigController<JavaEngine> nvmf, int port) {
        this.metrics = metrics;
        this.nvmf = nvmf;
        this.port = port;
    }

    static MetricsTarget start() throws IOException {
        int port = FreePorts.pick();
        TargetConfig cfg = new TargetConfig();
        cfg.cores = 1;
        cfg.tcp.connectTimeoutMs = CONNECT_TIMEOUT_MS;
        cfg.bdevs.add(new BdevConfig("m1", "malloc", 512, NS1_BLOCKS));
        cfg.bdevs.add(new BdevConfig("m2", "malloc", 512, NS2_BLOCKS));
        SubsystemConfig s = new SubsystemConfig();
        s.nqn = SUBNQN;
        s.allowAnyHost = true;
        s.namespaces.add(new NamespaceConfig(1, "m1"));
        s.namespaces.add(new NamespaceConfig(2, "m2"));
        s.listeners.add(new ListenerConfig("tcp", ADDRESS, port));
        cfg.subsystems.add(s);
        Metrics metrics = new Metrics();
        ConfigController<JavaEngine> nvmf = JavaEngine.start(cfg, metrics.observer());
        metrics.bind(nvmf);
        return new MetricsTarget(metrics, nvmf, port);
    }

    Namespace namespace(int nsid) {
        return nvmf.engine().target().subsystem(SUBNQN).namespace(nsid);
    }

    NvmeController controller(int ioQueues, int katoMs) throws IOException {
        return NvmeController.open(ADDRESS, port, SUBNQN, HOSTNQN, katoMs, ioQueues, TcpHostOptions.DEFAULT);
    }

    /** A connection that has sent nothing (no ICReq). */
    TcpHost rawTcp() throws IOException {
        return TcpHost.open(ADDRESS, port, TcpHostOptions.DEFAULT);
    }

    TcpHost tcp() throws IOException {
        return TcpHost.connect(ADDRESS, port, TcpHostOptions.DEFAULT);
    }

    @Override
    public void close() {
        nvmf.close();
        metrics.close();
    }
}
