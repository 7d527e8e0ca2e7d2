package io.nvmf4j.it;

import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.javaengine.JavaEngine;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.testhost.CephCluster;
import io.nvmf4j.testhost.NvmeController;
import org.junit.jupiter.api.AfterEach;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Two gateways (targets in this JVM) on one RBD image of the test cluster ({@link CephCluster}), and the test
 * initiator's controllers through them; both are closed after each test.
 */
abstract class RbdGateways {
    static final String HOST_A = ReservationTest.HOST_A;
    static final String HOST_B = ReservationTest.HOST_B;
    static final long KEY_A = ReservationTest.KEY_A;
    static final long KEY_B = ReservationTest.KEY_B;
    /** Reservation type 1h. */
    static final int WRITE_EXCLUSIVE = 1;
    private static final AtomicInteger IMAGES = new AtomicInteger();

    /** This test's image (made by the first gateway that opens it). */
    final String image;
    @SuppressWarnings("unchecked")
    final ConfigController<JavaEngine>[] gw = (ConfigController<JavaEngine>[]) new ConfigController<?>[2];
    private final List<NvmeController> open = new ArrayList<>();

    RbdGateways(String prefix) {
        image = prefix + "-" + ProcessHandle.current().pid() + "-" + IMAGES.incrementAndGet();
    }

    @AfterEach
    void stop() {
        open.forEach(NvmeController::close);
        for (ConfigController<JavaEngine> t : gw) {
            if (t != null) {
                t.close();
            }
        }
    }

    /** A controller of the open subsystem through the listener on {@code port}, for {@code hostnqn}. */
    NvmeController connectPort(int port, String hostnqn) throws IOException {
        NvmeController c = TestTarget.openController(port, hostnqn);
        open.add(c);
        return c;
    }

    void disconnect(NvmeController c) {
        open.remove(c);
        c.close();
    }

    /**
     * A gateway's document: {@code image} of the test cluster as namespace 1 of the open subsystem (the same identity
     * on every gateway, ANA group 1), listening on {@code listener}; {@code exclusiveLock} as the bdev's field.
     */
    TargetConfig gatewayConfig( ListenerConfig listener, boolean exclusiveLock) {
        CephCluster c = CephCluster.get();
        TargetConfig cfg = new TargetConfig();
        cfg.storage = TestTarget.testStorage();
        BdevConfig b = new BdevConfig("r0", "rbd", TestTarget.BLOCK_SIZE, 16384);
        b.pool = c.pool();
        b.image = image;
        b.cephConf = c.conf();
        b.clientName = c.client();
        b.keyring = c.keyring();
        b.create = true;
        b.exclusiveLock = exclusiveLock ? Boolean.TRUE : null;
        cfg.bdevs.add(b);
        SubsystemConfig s = new SubsystemConfig();
        s.nqn = TestTarget.SUBNQN;
        s.serial = TestTarget.SERIAL;
        s.allowAnyHost = true;
        NamespaceConfig ns = new NamespaceConfig(1, "r0");
        ns.nguid = TestTarget.NGUID;
        ns.uuid = TestTarget.UUID;
        s.namespaces.add(ns);
        s.listeners.add(listener);
        cfg.subsystems.add(s);
        return cfg;
    }

}
