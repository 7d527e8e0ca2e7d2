package io.nvmf4j.javaengine;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.nvmf4j.config.ConfigException;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.ConfigValidator;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.ReferralConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.nvme.DiscoveryLog;
import io.nvmf4j.transport.TransportType;
import io.nvmf4j.transport.rdma.RdmaTransport;
import io.nvmf4j.transport.tcp.TcpTransport;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The transport registry: types by configuration name, their discovery-log fields, the validator's list. */
class TransportRegistryTest {
    private final TransportRegistry registry = TransportRegistry.builtIn();

    @Test
    void resolvesTcpAndRdmaToTheirTransports() {
        assertThat(registry.names()).containsExactly("tcp", "rdma");
        TransportType tcp = registry.type("tcp");
        TransportType rdma = registry.type("rdma");
        assertThat(tcp).isSameAs(TcpTransport.TYPE);
        assertThat(rdma).isSameAs(RdmaTransport.TYPE);
        assertThat(tcp.trtype()).as("TRTYPE tcp").isEqualTo(3);
        assertThat(rdma.trtype()).as("TRTYPE rdma").isEqualTo(1);
        assertThat(tcp.adrfam("127.0.0.1")).isEqualTo(DiscoveryLog.ADRFAM_IPV4);
        assertThat(rdma.adrfam("::1")).isEqualTo(DiscoveryLog.ADRFAM_IPV6);
    }

    @Test
    void rejectsAnUnknownTypeNamingTheKnownOnes() {
        assertThatThrownBy(() -> registry.type("fc")).isInstanceOf(IllegalArgumentException.class)
            .hasMessage("unknown transport type 'fc': must be tcp or rdma");
        assertThatThrownBy(() -> registry.type(null)).isInstanceOf(IllegalArgumentException.class)
            .hasMessage("unknown transport type (none): must be tcp or rdma");
        assertThat(registry.has("fc")).isFalse();
        assertThat(registry.has("TCP")).as("names are exact").isFalse();
    }

    @Test
    void aTypeIsRegisteredOnce() {
        assertThatThrownBy(() -> new TransportRegistry(List.of(TcpTransport.TYPE, TcpTransport.TYPE)))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tcp registered twice");
    }

    @Test
    void tsasComesFromTheTransport() {
        ByteBuf tcp = Unpooled.buffer(256).writeZero(256);
        ByteBuf rdma = Unpooled.buffer(256).writeZero(256);
        TcpTransport.TYPE.putTsas(tcp, 0);
        RdmaTransport.TYPE.putTsas(rdma, 0);
        assertThat(tcp.getByte(0)).as("tcp: no secure channel").isZero();
        assertThat(new int[] {rdma.getByte(0), rdma.getByte(1), rdma.getByte(2), rdma.getByte(3)})
            .as("rdma: QPTYPE RC, PRTYPE not specified, CMS RDMA_CM").containsExactly(1, 1, 1, 0);
    }

    @Test
    void theTcpProbeReportsATakenPort() throws Exception {
        try (ServerSocket busy = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            ListenerConfig l = new ListenerConfig("tcp", "127.0.0.1", busy.getLocalPort());
            assertThatThrownBy(() -> TcpTransport.TYPE.probe(l)).isInstanceOf(java.io.IOException.class)
                .hasMessage("address 127.0.0.1:" + busy.getLocalPort() + " is already in use");
        }
    }

    @Test
    void theValidatorAcceptsExactlyTheRegisteredTypes() {
        TargetConfig c = ConfigStore.defaultConfig();
        c.subsystems.get(0).listeners.add(new ListenerConfig("rdma", "127.0.0.1", 4420));
        c.referrals.add(new ReferralConfig("rdma", "10.0.0.2", 4420));
        ConfigValidator.validate(c);
        c.subsystems.get(0).listeners.add(new ListenerConfig("fc", "127.0.0.1", 4421));
        c.referrals.add(new ReferralConfig("loop", "10.0.0.3", 4420));
        assertThatThrownBy(() -> ConfigValidator.validate(c)).isInstanceOf(ConfigException.class)
            .hasMessageContaining("subsystems[0].listeners[2].transport: must be tcp or rdma, got fc")
            .hasMessageContaining("referrals[1].transport: must be tcp or rdma, got loop");
    }
}
