package io.nvmf4j.service.metrics;

import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link CoarseClock}: the metrics registry's wall time without a clock reading per recorded latency.
 */
class CoarseClockTest {

    /**
     * Why it exists: Micrometer's timer, as the namespaces' latency timers are built (histogram buckets, max),
     * asks its registry's clock for the wall time on every record. Should a Micrometer version stop doing so, this
     * fails and the coarse clock can go.
     */
    @Test
    void aLatencyTimerReadsTheWallTimeOnEveryRecord() {
        AtomicLong wallReads = new AtomicLong();
        Clock counting = new Clock() {
            @Override
            public long wallTime() {
                wallReads.incrementAndGet();
                return System.currentTimeMillis();
            }

            @Override
            public long monotonicTime() {
                return System.nanoTime();
            }
        };
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT, new PrometheusRegistry(),
            counting);
        try {
            Timer t = LatencyBuckets.defaults().timer(registry, Tags.of("nsid", "1"));
            long before = wallReads.get();
            for (int i = 0; i < 1000; i++) {
                t.record(20_000 + i, TimeUnit.NANOSECONDS);
            }
            assertThat(wallReads.get() - before).as("wall-time reads for 1000 records").isGreaterThanOrEqualTo(1000);
            assertThat(t.count()).isEqualTo(1000);
        } finally {
            registry.close();
        }
    }

    @Test
    void theWallTimeFollowsTheSystemClockWithinAFewTicks() throws Exception {
        long made = System.currentTimeMillis();
        try (CoarseClock clock = new CoarseClock()) {
            long first = clock.wallTime();
            assertThat(first).as("the system clock when made, or a later reading").isBetween(made,
                System.currentTimeMillis());
            // its thread refreshes it: it moves on by ten ticks (how soon depends on when that thread gets a core)
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            long later = clock.wallTime();
            while (later - first < 10 * CoarseClock.TICK_MILLIS && System.nanoTime() < deadline) {
                Thread.sleep(CoarseClock.TICK_MILLIS);
                later = clock.wallTime();
            }
            assertThat(later - first).as("moved on within 10 s").isGreaterThanOrEqualTo(10 * CoarseClock.TICK_MILLIS);
            assertThat(later).isLessThanOrEqualTo(System.currentTimeMillis());
            long before = System.nanoTime();
            long nanos = clock.monotonicTime();
            assertThat(nanos).as("the system's monotonic clock").isBetween(before, System.nanoTime());
        }
    }

    @Test
    void closingStopsItsThread() throws Exception {
        CoarseClock clock = new CoarseClock();
        clock.close();
        assertThat(clock.awaitStopped(5_000)).isTrue();
        long last = clock.wallTime();
        Thread.sleep(5 * CoarseClock.TICK_MILLIS);
        assertThat(clock.wallTime()).isEqualTo(last);
    }

    @Test
    void theServiceRegistryRunsOnItAndStopsItOnClose() throws Exception {
        Metrics m = new Metrics();
        Clock clock = m.registry().config().clock();
        assertThat(clock).isInstanceOf(CoarseClock.class);
        m.close();
        assertThat(((CoarseClock) clock).awaitStopped(5_000)).isTrue();
    }
}
