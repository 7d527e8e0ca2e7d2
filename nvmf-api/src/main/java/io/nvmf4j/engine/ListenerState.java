package io.nvmf4j.engine;

/**
 * Whether a configured listener serves: {@code listening} with the port it is bound to (differs from the
 * configured port when that is 0), or {@code failed} with why (no RDMA device, ...). A failed listener stays in
 * the document (it serves once the cause is gone and the target restarts) but is not in the discovery log.
 */
public record ListenerState(boolean listening, Integer boundPort, String cause) {
    public static final String LISTENING = "listening";
    public static final String FAILED = "failed";

    public static ListenerState listening(int port) {
        return new ListenerState(true, port, null);
    }

    public static ListenerState failed(String cause) {
        return new ListenerState(false, null, cause);
    }

    /** {@link #LISTENING} or {@link #FAILED}. */
    public String state() {
        return listening ? LISTENING : FAILED;
    }
}
