package io.nvmf4j.auth;

import java.util.concurrent.atomic.AtomicReference;

/**
 * A controller's keys for an {@link AuthSession} outside a target: fixed keys and policy, every restart allowed;
 * {@link #reloadedOn} tells on which thread the key files would last have been read.
 */
final class FixedKeys implements AuthSession.KeySource {
    final AtomicReference<Thread> reloadedOn = new AtomicReference<>();
    private final HostKeys keys;
    private final AuthPolicy policy;

    FixedKeys(HostKeys keys, AuthPolicy policy) {
        this.keys = keys;
        this.policy = policy;
    }

    @Override
    public HostKeys keys() {
        return keys;
    }

    @Override
    public HostKeys reload() {
        reloadedOn.set(Thread.currentThread());
        return keys;
    }

    @Override
    public AuthPolicy policy() {
        return policy;
    }

    @Override
    public boolean restart() {
        return true;
    }
}
