package io.nvmf4j.service.api;

/** A request the API refuses by itself (not the engine): its HTTP status, reason and field path. */
final class ApiError extends RuntimeException {
    private final int status;
    private final String field;

    ApiError(int status, String message, String field) {
        super(message, null, false, false);
        this.status = status;
        this.field = field;
    }

    static ApiError badRequest(String field, String reason) {
        return new ApiError(400, field == null ? reason : field + ": " + reason, field);
    }

    int status() {
        return status;
    }

    String field() {
        return field;
    }
}
