package io.nvmf4j.runtime;

import java.util.List;

/**
 * The poll groups' idle strategies as the configuration names them ({@code TargetConfig.idleStrategy}): what the
 * validator accepts and the API's schema lists. The java engine's {@code IdleStrategies} implements each one.
 */
public final class IdleStrategyNames {
    public static final String BUSY = "busy";
    public static final String BACKOFF = "backoff";
    public static final String INTERRUPT = "interrupt";
    /** Every name, in the order the documentation gives them. */
    public static final List<String> ALL = List.of(BUSY, BACKOFF, INTERRUPT);

    private IdleStrategyNames() {
    }

    public static boolean isValid(String name) {
        return ALL.contains(name);
    }
}
