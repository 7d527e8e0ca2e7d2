package io.nvmf4j.service.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.nvmf4j.config.MetricsConfig;

import java.time.Duration;
import java.util.List;

/**
 * The bucket boundaries of the {@code nvmf_io_latency_seconds} histograms: the configured
 * {@code metrics.latencyBucketsMicros}, or Micrometer's percentile-histogram ladder clipped to
 * {@value #DEFAULT_MIN_NANOS} ns .. {@value #DEFAULT_MAX_SECONDS} s when none are configured. Fixed for the life
 * of the registry (Prometheus cannot change the buckets of a series): a new list applies at the next start.
 */
final class LatencyBuckets {
    static final long DEFAULT_MIN_NANOS = 1_000;
    static final long DEFAULT_MAX_SECONDS = 10;

    /** The configured boundaries, or null for the default ladder. */
    private final Duration[] bounds;

    private LatencyBuckets(Duration[] bounds) {
        this.bounds = bounds;
    }

    /** Micrometer's ladder, 1 µs .. 10 s. */
    static LatencyBuckets defaults() {
        return new LatencyBuckets(null);
    }

    /** From a validated config ({@link io.nvmf4j.config.ConfigValidator}); null or no list: the defaults. */
    static LatencyBuckets of(MetricsConfig config) {
        List<Long> micros = config == null ? null : config.latencyBucketsMicros;
        if (micros == null) {
            return defaults();
        }
        Duration[] d = new Duration[micros.size()];
        for (int i = 0; i < d.length; i++) {
            d[i] = Duration.ofNanos(micros.get(i) * 1_000);
        }
        return new LatencyBuckets(d);
    }

    /** The latency timer of one namespace and opcode, with these buckets (plus +Inf), count, sum and max. */
    Timer timer(MeterRegistry registry, Tags tags) {
        Timer.Builder b = Timer.builder(MetricNames.IO_LATENCY)
            .description("I/O command latency, from capsule arrival to the response being sent (NVMe/TCP: flushed to the socket; RDMA: its send being built)")
            .tags(tags);
        if (bounds == null) {
            b.publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofNanos(DEFAULT_MIN_NANOS))
                .maximumExpectedValue(Duration.ofSeconds(DEFAULT_MAX_SECONDS));
        } else {
            b.serviceLevelObjectives(bounds);
        }
        return b.register(registry);
    }
}
