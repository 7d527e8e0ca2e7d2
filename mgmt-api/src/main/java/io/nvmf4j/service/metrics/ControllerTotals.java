package io.nvmf4j.service.metrics;

/**
 * The I/O of one live controller ({@link Metrics#controllers}).
 *
 * @param subsystem the subsystem NQN
 * @param cntlid    the controller ID
 * @param host      its host NQN
 * @param io        counts since its first I/O
 */
public record ControllerTotals(String subsystem, int cntlid, String host, IoTotals io) {
}
