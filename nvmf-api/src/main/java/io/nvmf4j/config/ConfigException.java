package io.nvmf4j.config;

import java.util.ArrayList;
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

    /**
     * The same problems as seen by a request that carried only the fragment at {@code at} of the document (a
     * listener at {@code subsystems[1].listeners[6]}): {@code subsystems[1].listeners[6].port: ...} becomes
     * {@code port: ...}, and a problem with the fragment itself is said of {@code whole}.
     */
    public ConfigException relabeled(String at, String whole) {
        List<String> out = new ArrayList<>();
        for (String p : problems) {
            if (p.startsWith(at + ".")) {
                out.add(p.substring(at.length() + 1));
            } else if (p.startsWith(at + ":")) {
                out.add(whole + p.substring(at.length()));
            } else {
                out.add(p);
            }
        }
        ConfigException e = new ConfigException(out);
        e.setStackTrace(getStackTrace());
        return e;
    }

    public List<String> problems() {
        return problems;
    }
}
