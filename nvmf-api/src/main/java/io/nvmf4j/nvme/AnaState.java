package io.nvmf4j.nvme;

/**
 * Asymmetric Namespace Access states (NVMe Base 2.0, 8.1.3): the value reported in an ANA group descriptor's ANAS
 * field, the name the configuration and the API use, and the path-related status (SCT 3h) an I/O command to a
 * namespace of a group in that state completes with.
 */
public enum AnaState {
    OPTIMIZED("optimized", 0x1, NvmeStatus.SUCCESS),
    /** Serves I/O normally; hosts prefer an optimized path. */
    NON_OPTIMIZED("non-optimized", 0x2, NvmeStatus.SUCCESS),
    INACCESSIBLE("inaccessible", 0x3, NvmeStatus.ANA_INACCESSIBLE),
    PERSISTENT_LOSS("persistent-loss", 0x4, NvmeStatus.ANA_PERSISTENT_LOSS),
    /** In transition: the host waits (up to ANATT) and retries. */
    CHANGE("change", 0xF, NvmeStatus.ANA_TRANSITION);

    private static final AnaState[] VALUES = values();

    private final String configName;
    private final int anas;
    private final int ioStatus;

    AnaState(String configName, int anas, int ioStatus) {
        this.configName = configName;
        this.anas = anas;
        this.ioStatus = ioStatus;
    }

    /** The name in the configuration and the API ({@code non-optimized}). */
    public String configName() {
        return configName;
    }

    /** ANAS, the descriptor's state value. */
    public int anas() {
        return anas;
    }

    /** The status of an I/O command through a path in this state (success: the command runs). */
    public int ioStatus() {
        return ioStatus;
    }

    /** The state of a configuration name, or null for an unknown one. */
    public static AnaState byName(String name) {
        for (AnaState s : VALUES) {
            if (s.configName.equals(name)) {
                return s;
            }
        }
        return null;
    }

    /** The state of an ordinal (for tables kept as bytes). */
    public static AnaState ofOrdinal(int ordinal) {
        return VALUES[ordinal];
    }

    /** Every configuration name, for messages: {@code optimized, non-optimized, ...}. */
    public static String names() {
        StringBuilder b = new StringBuilder();
        for (AnaState s : VALUES) {
            b.append(b.length() == 0 ? "" : ", ").append(s.configName);
        }
        return b.toString();
    }
}
