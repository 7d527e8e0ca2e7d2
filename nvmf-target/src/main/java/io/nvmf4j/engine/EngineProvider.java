package io.nvmf4j.engine;

import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.core.IoObserver;

import java.io.IOException;

/**
 * An engine that lives in another module (the {@code spdk} engine in spdk-jni), found through
 * {@link java.util.ServiceLoader} ({@code META-INF/services/io.nvmf4j.engine.EngineProvider}).
 */
public interface EngineProvider {
    /** The name a document gives in {@code "engine"}. */
    String name();

    /**
     * Null when this engine can run here, else why not (one line: the library did not build, SPDK is
     * missing, ...). Checked before {@link #start}.
     */
    String unavailabilityCause();

    /** Starts the engine from a validated document. */
    Engine start(TargetConfig config, IoObserver observer) throws IOException;
}
