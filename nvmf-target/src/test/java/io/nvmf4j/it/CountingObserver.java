package io.nvmf4j.it;

import io.nvmf4j.engine.IoObserver;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * Counts the events a test asserts on: fatal transport errors by FES, handshake timeouts, failed authentications,
 * connections refused by a listener's limit, admin Connects refused at the controller limit.
 */
final class CountingObserver implements IoObserver {
    private final AtomicIntegerArray errorsByFes = new AtomicIntegerArray(256);
    private final AtomicInteger connectTimeouts = new AtomicInteger();
    private final java.util.Map<String, AtomicInteger> authFailures = new java.util.concurrent.ConcurrentHashMap<>();
    private final java.util.Map<String, AtomicInteger> refusedBy = new java.util.concurrent.ConcurrentHashMap<>();
    private final AtomicInteger controllerLimit = new AtomicInteger();

    @Override
    public void connectionRefused(String transport, String limit) {
        refusedBy.computeIfAbsent(limit, l -> new AtomicInteger()).incrementAndGet();
    }

    /** Connections refused by the limit named {@code limit} (maxConnectionsPerListener, maxConnectionsPerHost). */
    int connectionsRefused(String limit) {
        AtomicInteger n = refusedBy.get(limit);
        return n == null ? 0 : n.get();
    }

    @Override
    public void controllerLimitReached(String subsystemNqn) {
        controllerLimit.incrementAndGet();
    }

    int controllerLimitReached() {
        return controllerLimit.get();
    }

    @Override
    public void authFailed(String subsystemNqn, String reason) {
        authFailures.computeIfAbsent(reason, r -> new AtomicInteger()).incrementAndGet();
    }

    /** Authentication failures counted with {@code reason} (see AuthMessages.reason). */
    int authFailures(String reason) {
        AtomicInteger n = authFailures.get(reason);
        return n == null ? 0 : n.get();
    }

    int authFailures() {
        return authFailures.values().stream().mapToInt(AtomicInteger::get).sum();
    }

    @Override
    public void transportError(String transport, int fes) {
        errorsByFes.incrementAndGet(fes & 0xFF);
    }

    @Override
    public void connectTimedOut(String transport) {
        connectTimeouts.incrementAndGet();
    }

    int transportErrors(int fes) {
        return errorsByFes.get(fes);
    }

    int connectTimeouts() {
        return connectTimeouts.get();
    }
}
