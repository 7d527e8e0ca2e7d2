package io.nvmf4j.engine;

import java.util.List;

/**
 * The persistent reservation of one namespace, as the API shows it (read-only) and as the state file of a
 * namespace with Persist Through Power Loss on holds it.
 *
 * @param generation  the Reservation Report's generation (counts registrations, preemptions and clears)
 * @param rtype       the reservation type (0: no reservation, 1-6 as in the NVMe specification)
 * @param type        {@code rtype} by name ({@code none}, {@code write-exclusive}, ...)
 * @param ptpl        Persist Through Power Loss: the state is kept across restarts
 * @param holder      the host identifier (32 hex digits) of the holder, or null without a reservation
 * @param registrants registered hosts in registration order
 */
public record ReservationInfo(int generation, int rtype, String type, boolean ptpl, String holder,
                              List<Registrant> registrants) {
    private static final String[] TYPES = {"none", "write-exclusive", "exclusive-access",
        "write-exclusive-registrants-only", "exclusive-access-registrants-only", "write-exclusive-all-registrants",
        "exclusive-access-all-registrants"};

    /**
     * One registered host.
     *
     * @param hostid 32 hex digits, as the host sent it in Connect (every controller of the host shares it)
     * @param key    the reservation key, an unsigned 64-bit number in decimal
     * @param holder whether it holds the reservation (every registrant does for the All Registrants types)
     */
    public record Registrant(String hostid, String key, boolean holder) {
    }

    /** {@code rtype} by name ({@code none}, {@code write-exclusive}, ...); rtype must be 0-6. */
    public static String typeName(int rtype) {
        return TYPES[rtype];
    }
}
