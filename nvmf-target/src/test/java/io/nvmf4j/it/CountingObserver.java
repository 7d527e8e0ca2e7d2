package io.nvmf4j.it;

import io.nvmf4j.core.IoObserver;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

/** Counts the transport events a test asserts on: fatal errors by FES and handshake timeouts. */
final class CountingObserver implements IoObserver {
    private final AtomicIntegerArray errorsByFes = new AtomicIntegerArray(256);
    private final AtomicInteger connectTimeouts = new AtomicInteger();

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
