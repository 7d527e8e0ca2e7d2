package io.nvmf4j;

/** A control-plane change that was refused; {@link #kind()} tells an API which status to answer. */
public final class ControlException extends RuntimeException {
    /** Why the change was refused. */
    public enum Kind {
        /** The request itself is wrong (HTTP 400). */
        INVALID,
        /** A named object does not exist (HTTP 404). */
        NOT_FOUND,
        /** The change collides with the current state (HTTP 409). */
        CONFLICT,
    }

    private final Kind kind;

    public ControlException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    public ControlException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }

    public static ControlException notFound(String message) {
        return new ControlException(Kind.NOT_FOUND, message);
    }

    public static ControlException conflict(String message) {
        return new ControlException(Kind.CONFLICT, message);
    }

    public static ControlException invalid(String message) {
        return new ControlException(Kind.INVALID, message);
    }
}
