package io.nvmf4j.service.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nvmf4j.bdev.BlockDevice;
import io.nvmf4j.core.Namespace;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** The per-namespace durability-error gauge reads the namespace's device and goes with the namespace. */
class NamespaceMetersTest {
    /** A device that only answers durabilityErrors() (and name()); anything else is not called here. */
    private static BlockDevice deviceWithErrors(AtomicLong errors) {
        return (BlockDevice) Proxy.newProxyInstance(BlockDevice.class.getClassLoader(), new Class<?>[] {BlockDevice.class},
            (proxy, method, args) -> switch (method.getName()) {
                case "durabilityErrors" -> errors.get();
                case "name" -> "stub";
                default -> throw new UnsupportedOperationException(method.getName());
            });
    }

    @Test
    void durabilityErrorGaugeFollowsTheDeviceOfTheLatestNamespace() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        NamespaceMeters m = new NamespaceMeters(registry, "nqn.test", "1");
        AtomicLong first = new AtomicLong();
        m.bind(new Namespace(1, deviceWithErrors(first), new byte[16], new byte[16], null));
        Gauge g = registry.get(MetricNames.NAMESPACE_DURABILITY_ERRORS).tag(MetricNames.TAG_SUBSYSTEM, "nqn.test")
            .tag(MetricNames.TAG_NSID, "1").gauge();
        assertThat(g.value()).isZero();
        first.set(2);
        assertThat(g.value()).as("a failed write-back counts at once").isEqualTo(2);

        AtomicLong second = new AtomicLong(5);
        m.bind(new Namespace(1, deviceWithErrors(second), new byte[16], new byte[16], null));
        assertThat(registry.find(MetricNames.NAMESPACE_DURABILITY_ERRORS).gauges()).as("one gauge").hasSize(1);
        assertThat(g.value()).as("re-added under the same nsid: the new device").isEqualTo(5);

        m.remove();
        assertThat(registry.find(MetricNames.NAMESPACE_DURABILITY_ERRORS).gauges()).isEmpty();
    }
}
