package io.nvmf4j.javaengine;

import io.nvmf4j.core.Reservation;
import io.nvmf4j.engine.ReservationInfo.Registrant;
import io.nvmf4j.engine.ReservationInfo;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/** A namespace's reservation state ({@link Reservation.State}) to and from the record the API shows and files keep. */
final class ReservationStates {
    private ReservationStates() {
    }

    static ReservationInfo info(Reservation.State s) {
        List<Registrant> regs = new ArrayList<>();
        for (int i = 0; i < s.registrants(); i++) {
            regs.add(new Registrant(hex(s.hostHi(i), s.hostLo(i)), Long.toUnsignedString(s.key(i)), s.holds(i)));
        }
        return new ReservationInfo(s.generation, s.rtype, ReservationInfo.typeName(s.rtype), s.ptpl,
            s.rtype == 0 ? null : hex(s.holderHi, s.holderLo), regs);
    }

    /** The state {@code info} describes; IllegalArgumentException naming the field that is wrong. */
    static Reservation.State state(ReservationInfo info) {
        int rtype = info.rtype();
        List<Registrant> registrants = info.registrants();
        String holder = info.holder();
        int generation = info.generation();
        boolean ptpl = info.ptpl();
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
