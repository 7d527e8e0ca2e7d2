package io.nvmf4j.cli;

/**
 * A failure nvmfctl reports as one line on stderr and an exit code: {@link #API} for an API refusal
 * (4xx), {@link #USAGE} for a bad command line or an unreadable local file, {@link #UNAVAILABLE} when the
 * service cannot be reached or fails (5xx). Never carries a stack trace to the user. A refusal by the API
 * keeps its HTTP status and the field it named, for the JSON form of the error ({@code --json}).
 */
final class CliException extends RuntimeException {
    static final int API = 1;
    static final int USAGE = 2;
    static final int UNAVAILABLE = 3;

    private final int exitCode;
    private final int status;
    private final String field;

    CliException(int exitCode, String message) {
        this(exitCode, message, 0, null);
    }

    /**
     * @param status the HTTP status of the API's answer, 0 when there was none
     * @param field  the field the API named, or null
     */
    CliException(int exitCode, String message, int status, String field) {
        super(message, null, false, false);
        this.exitCode = exitCode;
        this.status = status;
        this.field = field;
    }

    static CliException usage(String message) {
        return new CliException(USAGE, message);
    }

    int exitCode() {
        return exitCode;
    }

    /** The HTTP status of the answer that failed, 0 when no answer came (or the failure is local). */
    int status() {
        return status;
    }

    /** The field of the request the API named, or null. */
    String field() {
        return field;
    }
}
