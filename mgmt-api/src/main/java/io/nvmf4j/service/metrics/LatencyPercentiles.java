package io.nvmf4j.service.metrics;

/**
 * Latency percentiles of one namespace and op ({@link Metrics#latency}), in microseconds.
 *
 * @param op    read or write
 * @param count commands the percentiles are over
 */
public record LatencyPercentiles(String op, long count, double p50Micros, double p90Micros, double p99Micros,
                                 double p999Micros, double maxMicros) {
    static LatencyPercentiles none(String op) {
        return new LatencyPercentiles(op, 0, 0, 0, 0, 0, 0);
    }
}
