package io.nvmf4j.engine;

import io.nvmf4j.config.TargetConfig;

/**
 * The configuration document a running target serves, as its {@link ConfigController} last committed it. The
 * controller replaces it whole at each change and never changes a committed document in place, so an engine may read
 * it at any time (its own threads: the controller polling of the spdk engine, statistics); it must not change it.
 */
public final class LiveDocument {
    private volatile TargetConfig config;

    LiveDocument(TargetConfig config) {
        this.config = config;
    }

    /** The document in effect (read-only). */
    public TargetConfig get() {
        return config;
    }

    void set(TargetConfig config) {
        this.config = config;
    }
}
