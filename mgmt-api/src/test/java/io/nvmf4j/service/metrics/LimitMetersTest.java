package io.nvmf4j.service.metrics;

import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.transport.ConnectionLimits;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The counters of the limits (docs/limits.md): connections refused by each listener limit, per transport, and
 * admin Connects refused at a subsystem's controller limit, as the engine's observer reports them (the transports
 * and the Connect call it: TcpConnectionLimitTest, RdmaConnectionLimitTest and LimitsTest in nvmf-target).
 */
class LimitMetersTest {
    private static final String NQN = "nqn.2024-01.io.nvmf4j:limits";

    @Test
    void refusedConnectionsCountByTransportAndLimitAndControllerBusyBySubsystem() {
        try (Metrics metrics = new Metrics()) {
            IoObserver o = metrics.observer();
            o.connectionRefused("tcp", ConnectionLimits.PER_HOST);
            o.connectionRefused("tcp", ConnectionLimits.PER_HOST);
            o.connectionRefused("tcp", ConnectionLimits.PER_LISTENER);
            o.connectionRefused("rdma", ConnectionLimits.PER_LISTENER);
            o.controllerLimitReached(NQN);

            Scrape scrape = new Scrape(metrics.scrape());
            String name = "nvmf_transport_connections_refused_total";
            assertThat(scrape.value(name, "transport", "tcp", "limit", "maxConnectionsPerHost")).isEqualTo(2);
            assertThat(scrape.value(name, "transport", "tcp", "limit", "maxConnectionsPerListener")).isEqualTo(1);
            assertThat(scrape.value(name, "transport", "rdma", "limit", "maxConnectionsPerListener")).isEqualTo(1);
            assertThat(scrape.has(name, "transport", "rdma", "limit", "maxConnectionsPerHost")).as("at 0 from the start")
                .isTrue();
            assertThat(scrape.value("nvmf_controller_limit_refusals_total", "subsystem", NQN)).isEqualTo(1);
        }
    }
}
