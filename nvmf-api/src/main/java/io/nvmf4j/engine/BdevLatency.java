package io.nvmf4j.engine;

import java.util.Arrays;

/**
 * SPDK's latency histogram of one bdev ({@code spdk_bdev_histogram_get} over its channels): the bdev I/Os'
 * times from submission to completion, reads, writes and the other commands together (SPDK keeps one histogram per
 * bdev, with a single io-type filter). Buckets are {@code [startNanos[i], endNanos[i])}, ascending, non-empty,
 * each at most 12.5 % wide ({@code nvmf4j_spdk.c}, {@code HIST_GRANULARITY}).
 *
 * @param bdev the bdev's name (as asked for: an alias stays an alias)
 */
public record BdevLatency(String bdev, long[] startNanos, long[] endNanos, long[] counts) {
    /** No I/O counted (or no histogram on the bdev). */
    public static BdevLatency none(String bdev) {
        return new BdevLatency(bdev, new long[0], new long[0], new long[0]);
    }

    /** The I/Os counted. */
    public long count() {
        return Arrays.stream(counts).sum();
    }

    /**
     * The {@code q} quantile (0..1) in nanoseconds, linear within the bucket that holds it (as Prometheus'
     * {@code histogram_quantile}); 0 without I/O. Never decreases as {@code q} grows.
     */
    public double quantileNanos(double q) {
        double rank = q * count();
        long below = 0;
        for (int i = 0; i < counts.length; i++) {
            long upTo = below + counts[i];
            if (upTo >= rank) {
                return startNanos[i] + (double) (endNanos[i] - startNanos[i]) * (rank - below) / counts[i];
            }
            below = upTo;
        }
        return counts.length == 0 ? 0 : endNanos[counts.length - 1];
    }

    /** The upper bound of the slowest non-empty bucket (the slowest I/O is below it); 0 without I/O. */
    public long maxNanos() {
        return counts.length == 0 ? 0 : endNanos[counts.length - 1];
    }

}
