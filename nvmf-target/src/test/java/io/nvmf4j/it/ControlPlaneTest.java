package io.nvmf4j.it;

import io.nvmf4j.testhost.FreePorts;
import io.nvmf4j.ControlException;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ConfigException;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Live control-plane changes while a host is connected: the host learns of them through asynchronous
 * events and sees the new state without reconnecting; refused changes leave everything as it was.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ControlPlaneTest {
    private static final int AEC_NS_ATTRIBUTE = 1 << 8;
    private static final int AEC_DISCOVERY = 1 << 31;

    @Test
    void addedNamespaceRaisesAenAndServesIo() throws Exception {
        try (TestTarget t = TestTarget.start();
             NvmeController c = t.controller(1, TcpHostOptions.DEFAULT)) {
            NvmeHost admin = c.admin();
            assertThat(admin.setFeatures(0x0B, AEC_NS_ATTRIBUTE).ok()).isTrue();
            CompletableFuture<Completion> aer = admin.asyncEventRequest();

            t.nvmf().addBdev(new BdevConfig("added", "malloc", 512, 2048));
            NamespaceConfig n = t.nvmf().addNamespace(TestTarget.SUBNQN, new NamespaceConfig(0, "added"));
            assertThat(n.nsid).as("lowest free nsid (1 and 3 are taken)").isEqualTo(2);
            assertThat(n.nguid).hasSize(32);

            Completion event = aer.get(10, TimeUnit.SECONDS);
            assertThat(event.ok()).isTrue();
            assertThat(event.dw0() & 0x7).as("event type: notice").isEqualTo(2);
            assertThat((event.dw0() >>> 16) & 0xFF).as("log page").isEqualTo(0x04);

            Completion log = admin.getLogPage(0x04, -1, 0, 4096);
            assertThat(Le.u32(log.data(), 0)).as("changed namespace").isEqualTo(2);
            assertThat(Le.u32(log.data(), 4)).isZero();
            Completion list = admin.identify(0x02, 0, 0);
            assertThat(Le.u32(list.data(), 0)).isEqualTo(1);
            assertThat(Le.u32(list.data(), 4)).isEqualTo(2);
            assertThat(Le.u32(list.data(), 8)).isEqualTo(3);
            Completion id = admin.identify(0x00, 2, 0);
            assertThat(Le.u64(id.data(), 0)).as("NSZE").isEqualTo(2048);
            assertThat(Le.u8(id.data(), 130)).as("LBADS").isEqualTo(9);

            byte[] data = Le.random(8192, 77);
            assertThat(c.io(0).write(2, 10, data).ok()).isTrue();
            Completion r = c.io(0).read(2, 10, 16);
            assertThat(r.data()).isEqualTo(data);
        }
    }

    @Test
    void removedNamespaceRaisesAenAndStopsServing() throws Exception {
        try (TestTarget t = TestTarget.start();
             NvmeController c = t.controller(1, TcpHostOptions.DEFAULT)) {
            assertThat(c.admin().setFeatures(0x0B, AEC_NS_ATTRIBUTE).ok()).isTrue();
            CompletableFuture<Completion> aer = c.admin().asyncEventRequest();
            t.nvmf().removeNamespace(TestTarget.SUBNQN, 3);
            assertThat(aer.get(10, TimeUnit.SECONDS).ok()).isTrue();
            Completion read = c.io(0).read(3, 0, 1);
            TestTarget.assertStatus(read, 0, 0x0B, true);
            assertThat(t.nvmf().configSnapshot().subsystems.get(0).namespaces).extracting(x -> x.nsid)
                .containsExactly(1);
            assertThatThrownBy(() -> t.nvmf().removeNamespace(TestTarget.SUBNQN, 3))
                .isInstanceOf(ControlException.class)
                .extracting(e -> ((ControlException) e).kind()).isEqualTo(ControlException.Kind.NOT_FOUND);
        }
    }

    @Test
    void grownBdevIsSeenByTheHost() throws Exception {
        try (TestTarget t = TestTarget.start(cfg -> cfg.bdevs.add(new BdevConfig("n0", "null", 512, 1000)));
             NvmeController c = t.controller(1, TcpHostOptions.DEFAULT)) {
            t.nvmf().addNamespace(TestTarget.SUBNQN, new NamespaceConfig(5, "n0"));
            assertThat(c.admin().setFeatures(0x0B, AEC_NS_ATTRIBUTE).ok()).isTrue();
            CompletableFuture<Completion> aer = c.admin().asyncEventRequest();
            t.nvmf().growBdev("n0", 5000);
            assertThat(aer.get(10, TimeUnit.SECONDS).ok()).isTrue();
            assertThat(Le.u64(c.admin().identify(0x00, 5, 0).data(), 0)).isEqualTo(5000);
            assertThatThrownBy(() -> t.nvmf().growBdev("n0", 10))
                .isInstanceOf(ControlException.class).hasMessageContaining("shrinking would lose data");
            assertThatThrownBy(() -> t.nvmf().growBdev("m0", 1 << 20))
                .isInstanceOf(ControlException.class).hasMessageContaining("cannot grow");
        }
    }

    @Test
    void refusedChangesLeaveStateUnchanged() throws Exception {
        try (TestTarget t = TestTarget.start()) {
            String before = io.nvmf4j.config.ConfigStore.toJson(t.nvmf().configSnapshot());
            assertThatThrownBy(() -> t.nvmf().removeBdev("m0"))
                .isInstanceOf(ControlException.class).hasMessageContaining("backs namespace 1");
            assertThatThrownBy(() -> t.nvmf().addNamespace(TestTarget.SUBNQN, new NamespaceConfig(9, "m1")))
                .isInstanceOf(ControlException.class).hasMessageContaining("already backs");
            assertThatThrownBy(() -> t.nvmf().addNamespace(TestTarget.SUBNQN, new NamespaceConfig(9, "nope")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("no bdev named 'nope'");
            assertThatThrownBy(() -> t.nvmf().addBdev(new BdevConfig("m0", "malloc", 512, 8)))
                .isInstanceOf(ControlException.class).hasMessageContaining("already exists");
            assertThatThrownBy(() -> t.nvmf().addBdev(new BdevConfig("bad", "malloc", 520, 8)))
                .isInstanceOf(ConfigException.class).hasMessageContaining("bdevs[3].blockSize");
            assertThatThrownBy(() -> t.nvmf().addHost("nqn.2024-01.io.nvmf4j:none", TestTarget.HOSTNQN))
                .isInstanceOf(ControlException.class).hasMessageContaining("no subsystem");
            assertThat(io.nvmf4j.config.ConfigStore.toJson(t.nvmf().configSnapshot())).isEqualTo(before);
        }
    }

    @Test
    void subsystemsHostsAndListenersComeAndGo() throws Exception {
        try (TestTarget t = TestTarget.start()) {
            int port2 = FreePorts.pick();
            t.nvmf().addBdev(new BdevConfig("x0", "malloc", 512, 2048));
            SubsystemConfig s = new SubsystemConfig();
            s.nqn = "nqn.2024-01.io.nvmf4j:added";
            s.namespaces.add(new NamespaceConfig(1, "x0"));
            s.listeners.add(new ListenerConfig("tcp", TestTarget.ADDRESS, port2));
            try (NvmeController disc = t.discovery(TestTarget.HOSTNQN)) {
                assertThat(disc.admin().setFeatures(0x0B, AEC_DISCOVERY).ok()).isTrue();
                CompletableFuture<Completion> aer = disc.admin().asyncEventRequest();
                SubsystemConfig added = t.nvmf().addSubsystem(s);
                assertThat(added.serial).as("serial generated").isNotBlank();
                Completion event = aer.get(10, TimeUnit.SECONDS);
                assertThat((event.dw0() >>> 16) & 0xFF).as("discovery log page").isEqualTo(0x70);
            }
            // not allowed yet: the new subsystem admits no host
            assertThatThrownBy(() -> NvmeController.open(TestTarget.ADDRESS, port2, s.nqn, TestTarget.HOSTNQN, 30000,
                1, TcpHostOptions.DEFAULT)).hasMessageContaining("0x84");
            t.nvmf().addHost(s.nqn, TestTarget.HOSTNQN);
            try (NvmeController c = NvmeController.open(TestTarget.ADDRESS, port2, s.nqn, TestTarget.HOSTNQN, 30000,
                1, TcpHostOptions.DEFAULT)) {
                TestTarget.assertWriteReadBack(c.io(0), 0, 4096, 5);
                assertThat(t.nvmf().controllers(s.nqn)).hasSize(1);
                t.nvmf().removeHost(s.nqn, TestTarget.HOSTNQN);
                assertThat(c.admin().queue().awaitClosed(java.time.Duration.ofSeconds(5)))
                    .as("disallowed host is disconnected").isTrue();
            }
            t.nvmf().removeSubsystem(s.nqn);
            assertThat(t.nvmf().listeners()).doesNotContainKey(new ListenerConfig("tcp", TestTarget.ADDRESS, port2));
            assertThatThrownBy(() -> new java.net.Socket(TestTarget.ADDRESS, port2).close())
                .as("listener closed with its last subsystem").isInstanceOf(java.io.IOException.class);
        }
    }

    /** A subsystem named with the discovery NQN is refused as the document refuses it, on every engine (400). */
    @Test
    void aSubsystemWithTheDiscoveryNqnIsInvalid() throws Exception {
        try (TestTarget t = TestTarget.start()) {
            SubsystemConfig s = new SubsystemConfig();
            s.nqn = "nqn.2014-08.org.nvmexpress.discovery";
            assertThatThrownBy(() -> t.nvmf().addSubsystem(s)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("the discovery NQN is reserved");
        }
    }
}
