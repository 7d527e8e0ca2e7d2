package io.nvmf4j.engine;

/**
 * Counts of one subsystem at the time they were taken.
 *
 * @param controllers live controllers
 * @param queues      admin and I/O queues of those controllers
 * @param namespaces  active namespaces
 */
public record SubsystemStats(String nqn, int controllers, int queues, int namespaces) {
}
