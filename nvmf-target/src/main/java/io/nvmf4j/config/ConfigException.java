package io.nvmf4j.config;

import java.util.List;

/** A configuration document that cannot be used; the message names each bad field and why. */
public final class ConfigException extends RuntimeException {
    private final List<String> problems;

    public ConfigException(List<String> problems) {
        super(String.join("; ", problems));
        this.problems = List.copyOf(problems);
    }

    public ConfigException(String problem, Throwable cause) {
        super(problem, cause);
        this.problems = List.of(problem);
    }

    public List<String> problems() {
        return problems;
    }
}
