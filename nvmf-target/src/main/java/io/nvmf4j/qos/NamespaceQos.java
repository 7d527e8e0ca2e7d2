package io.nvmf4j.qos;

import java.util.List;
import java.util.Map;

/**
 * Every limiter an I/O to one namespace falls under: the namespace's own, its group's, and per host those of the host
 * on the namespace and on its subsystem. Immutable: a QoS change installs a new one on the namespace; the limiters
 * whose limits did not change are kept, with their budget.
 */
public final class NamespaceQos {
    private final QosLimiter[] common;
    private final Map<String, QosLimiter[]> hosts;

    /** {@code common} apply to every host, {@code hosts} to each host NQN's I/O. */
    public NamespaceQos(List<QosLimiter> common, Map<String, List<QosLimiter>> hosts) {
        this.common = common.toArray(QosLimiter[]::new);
        this.hosts = new java.util.HashMap<>();
        hosts.forEach((h, l) -> this.hosts.put(h, l.toArray(QosLimiter[]::new)));
    }

    /** Whether {@code o} holds the very same limiters (then the namespace keeps this one, and its waiters). */
    boolean sameAs(NamespaceQos o) {
        if (!java.util.Arrays.equals(common, o.common) || !hosts.keySet().equals(o.hosts.keySet())) {
            return false;
        }
        for (Map.Entry<String, QosLimiter[]> e : hosts.entrySet()) {
            if (!java.util.Arrays.equals(e.getValue(), o.hosts.get(e.getKey()))) {
                return false;
            }
        }
        return true;
    }

    /**
     * Takes the budget of one I/O of {@code hostnqn} that moves {@code bytes} ({@code read}: to the host) at
     * {@code now}; returns when it may start ({@link Long#MIN_VALUE}: no limit applies).
     */
    public long reserve(String hostnqn, boolean read, long bytes, long now) {
        long start = reserve(common, read, bytes, now, Long.MIN_VALUE);
        QosLimiter[] own = hosts.isEmpty() ? null : hosts.get(hostnqn);
        return own == null ? start : reserve(own, read, bytes, now, start);
    }

    private static long reserve(QosLimiter[] limiters, boolean read, long bytes, long now, long start) {
        for (QosLimiter l : limiters) {
            long s = l.reserve(read, bytes, now);
            if (s != Long.MIN_VALUE && (start == Long.MIN_VALUE || s - start > 0)) {
                start = s;
            }
        }
        return start;
    }
}
