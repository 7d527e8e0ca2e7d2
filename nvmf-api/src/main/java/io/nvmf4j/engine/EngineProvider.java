package io.nvmf4j.engine;

import io.nvmf4j.engine.IoObserver;

import java.io.IOException;

/**
 * An engine, found through {@link java.util.ServiceLoader} ({@code META-INF/services/io.nvmf4j.engine.EngineProvider}):
 * the {@code java} engine in this module, the {@code spdk} engine in spdk-jni.
 */
public interface EngineProvider {
    /** The name a document gives in {@code "engine"}. */
    String name();

    /**
     * Null when this engine can run here, else why not (one line: the library did not build, SPDK is
     * missing, ...). Checked before {@link #start}.
     */
    String unavailabilityCause();

    /**
     * What this engine runs on here, for a status line such as {@code check --profile}'s: its native library and
     * version ({@code libnvmf4j_spdk for aarch64 (SPDK v26.05)}). Asked only when {@link #unavailabilityCause} is
     * null. Default: null, nothing beyond the JVM.
     */
    default String runsOn() {
        return null;
    }

    /**
     * File descriptors this engine holds from its start for {@code config}, beyond the process's and the bdevs'
     * (the start's open-files check counts them, {@link OpenFiles}). Default: none.
     */
    default long descriptorsAtStart(io.nvmf4j.config.TargetConfig config) {
        return 0;
    }

    /**
     * Starts the engine serving {@code document}'s validated document (its {@link ConfigController} owns it from then
     * on), reporting data-path events to {@code observer}; {@code stateDir} is the service's state directory, where
     * an engine may keep the reservations of namespaces with Persist Through Power Loss on (null: none kept).
     */
    Engine start(LiveDocument document, IoObserver observer, java.nio.file.Path stateDir) throws IOException;
}
