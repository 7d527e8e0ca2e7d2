package io.nvmf4j.engine;

/** The configuration file could not be written; the message says whether the live change was undone. */
public final class PersistenceException extends RuntimeException {
    public PersistenceException(String message, Throwable cause) {
        super(message, cause);
    }
}
