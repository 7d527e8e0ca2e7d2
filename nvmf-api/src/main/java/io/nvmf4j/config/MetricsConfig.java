package io.nvmf4j.config;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;

import java.util.List;

/** Settings of the service's Prometheus metrics (read by the service when it starts, not by the engine). */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = false)
public final class MetricsConfig {
    /** Most bucket boundaries {@link #latencyBucketsMicros} may list (each is one series per namespace and op). */
    public static final int MAX_LATENCY_BUCKETS = 64;
    /** Largest boundary, in microseconds (one hour). */
    public static final long MAX_LATENCY_BUCKET_MICROS = 3_600_000_000L;

    /**
     * Upper bounds ({@code le}) of the {@code nvmf_io_latency_seconds} histogram buckets, in microseconds:
     * positive, strictly ascending, at most {@value #MAX_LATENCY_BUCKETS} of them, each at most one hour; a
     * {@code +Inf} bucket is always added. Absent (the default): Micrometer's ladder from 1 µs to 10 s (about
     * 1.25x apart, 106 buckets with {@code +Inf}). Applies at the next start of the service.
     */
    public List<Long> latencyBucketsMicros;

    /**
     * Publish a set of I/O meters per connected controller ({@code nvmf_controller_io_*} with tags
     * {@code subsystem}, {@code cntlid}, {@code host}; java engine). Off by default: per host
     * ({@code nvmf_host_io_*}) is published always, and per controller through {@code GET /api/v1/io/controllers},
     * since thousands of controllers would make thousands of series sets per scrape. Applies at the next start
     * of the service.
     */
    public Boolean perControllerMeters;
}
