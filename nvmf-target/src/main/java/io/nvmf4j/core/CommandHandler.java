package io.nvmf4j.core;

/** Executes a parsed command; ends (now or later) in exactly one {@link Request#complete(int)}. */
@FunctionalInterface
public interface CommandHandler {
    void execute(Request req);
}
