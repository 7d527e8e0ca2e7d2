package io.nvmf4j.service.metrics;

/**
 * The I/O of one host NQN over its controllers ({@link Metrics#hosts}).
 *
 * @param host        the host NQN
 * @param controllers its live controllers that did I/O
 * @param io          counts since its first I/O (or since its entry was last dropped)
 */
public record HostTotals(String host, int controllers, IoTotals io) {
}
