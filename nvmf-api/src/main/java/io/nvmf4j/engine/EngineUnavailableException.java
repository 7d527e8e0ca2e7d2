package io.nvmf4j.engine;

/**
 * The configured engine cannot run in this build or on this host (the document itself is valid). The service
 * reports the message and exits with "cannot start"; it never falls back to another engine.
 */
public final class EngineUnavailableException extends RuntimeException {
    public EngineUnavailableException(String message) {
        super(message);
    }
}
