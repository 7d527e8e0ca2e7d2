package io.nvmf4j.engine;

import io.nvmf4j.core.Reservation;

import java.util.ArrayList;
import java.util.HexFormat;
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

    public static ReservationInfo of(Reservation.State s) {
        List<Registrant> regs = new ArrayList<>();
        for (int i = 0; i < s.registrants(); i++) {
            regs.add(new Registrant(hex(s.hostHi(i), s.hostLo(i)), Long.toUnsignedString(s.key(i)), s.holds(i)));
        }
        return new ReservationInfo(s.generation, s.rtype, TYPES[s.rtype], s.ptpl,
            s.rtype == 0 ? null : hex(s.holderHi, s.holderLo), regs);
    }

    /** The state this describes; IllegalArgumentException naming the field that is wrong. */
    public Reservation.State toState() {
        if (rtype != 0 && !Reservation.validType(rtype)) {
            throw new IllegalArgumentException("rtype " + rtype + " is not 0-6");
        }
        List<Registrant> regs = registrants == null ? List.of() : registrants;
        int n = regs.size();
        long[] hi = new long[n];
        long[] lo = new long[n];
        long[] keys = new long[n];
        for (int i = 0; i < n; i++) {
            long[] id = parseHostId(regs.get(i).hostid(), "registrants[" + i + "].hostid");
            hi[i] = id[0];
            lo[i] = id[1];
            try {
                keys[i] = Long.parseUnsignedLong(regs.get(i).key());
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("registrants[" + i + "].key: not an unsigned 64-bit number");
            }
        }
        long[] h = rtype == 0 ? new long[2] : parseHostId(holder, "holder");
        Reservation.State s = new Reservation.State(rtype, h[0], h[1], hi, lo, keys, generation, ptpl);
        if (rtype != 0 && s.indexOf(h[0], h[1]) < 0) {
            throw new IllegalArgumentException("holder " + holder + " is not a registrant");
        }
        return s;
    }

    private static String hex(long hi, long lo) {
        return HexFormat.of().toHexDigits(hi) + HexFormat.of().toHexDigits(lo);
    }

    private static long[] parseHostId(String s, String field) {
        if (s == null || !s.matches("[0-9a-fA-F]{32}")) {
            throw new IllegalArgumentException(field + ": 32 hex digits expected");
        }
        return new long[] {Long.parseUnsignedLong(s.substring(0, 16), 16), Long.parseUnsignedLong(s.substring(16), 16)};
    }
}
