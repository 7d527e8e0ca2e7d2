package io.nvmf4j.spdk;

/** What the rest of nvmf4j may ask about the spdk engine without starting it. */
public final class Spdk {
    private Spdk() {
    }

    /** Null when the spdk engine can run in this process, else why not (one line). */
    public static String unavailabilityCause() {
        return SpdkNative.unavailabilityCause();
    }

    /**
     * True when this build found no SPDK to build against (no SPDK_DIR, no vendored tarball), or built none
     * for this machine's architecture (the aarch64 package of an x86-64 build): the cases in which the spdk
     * engine is expected to be missing. Any other unavailability is a defect.
     */
    public static boolean builtWithoutSpdk() {
        return SpdkNative.unavailableResource() != null;
    }

    /** SPDK's version string, or null when the library is not loaded. */
    public static String version() {
        return SpdkNative.isAvailable() ? SpdkNative.version() : null;
    }
}
