package io.nvmf4j.fuzz;

/** The property failed: an exception got out of a parser, a wrong rejection, or a leak. */
public final class Escape extends RuntimeException {
    public Escape(String message) {
        super(message);
    }

    public Escape(String message, Throwable cause) {
        super(message, cause);
    }
}
