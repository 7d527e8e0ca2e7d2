package io.nvmf4j.service.metrics;

/**
 * I/O of a host or a controller since it was first seen ({@link IoCounts#totals()}).
 *
 * @param reads            Read commands completed (failed ones included)
 * @param writes           Write commands completed
 * @param others           other I/O commands (flush, write zeroes, dataset management, ...)
 * @param bytesRead        data bytes of successful reads
 * @param bytesWritten     data bytes of successful writes
 * @param errors           commands completed with an error status
 * @param readLatencyNanos sum of the reads' latencies
 * @param writeLatencyNanos sum of the writes' latencies
 * @param maxLatencyNanos  the longest latency of any command
 */
public record IoTotals(long reads, long writes, long others, long bytesRead, long bytesWritten, long errors,
                       long readLatencyNanos, long writeLatencyNanos, long maxLatencyNanos) {
}
