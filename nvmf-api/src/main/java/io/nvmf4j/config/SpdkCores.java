package io.nvmf4j.config;

import java.util.BitSet;

/** Parses the spdk engine's {@code coreMask}: a hex mask ({@code 0x3}) or a core list ({@code [0,2-3]}). */
public final class SpdkCores {
    /** The highest core number accepted. */
    public static final int MAX_CORE = 1023;

    private SpdkCores() {
    }

    /** The cores named, never empty; {@link IllegalArgumentException} with the reason otherwise. */
    public static BitSet parse(String spec) {
        if (spec == null || spec.isBlank()) {
            throw new IllegalArgumentException("must name at least one core (0x1, or [0,1])");
        }
        String s = spec.trim();
        BitSet cores = new BitSet();
        if (s.startsWith("0x") || s.startsWith("0X")) {
            String hex = s.substring(2);
            if (hex.isEmpty() || hex.length() > (MAX_CORE + 1) / 4 || !hex.matches("[0-9a-fA-F]+")) {
                throw new IllegalArgumentException("not a hex core mask: " + spec);
            }
            for (int i = 0; i < hex.length(); i++) {
                int nibble = Character.digit(hex.charAt(hex.length() - 1 - i), 16);
                for (int b = 0; b < 4; b++) {
                    if ((nibble & (1 << b)) != 0) {
                        cores.set(i * 4 + b);
                    }
                }
            }
        } else if (s.startsWith("[") && s.endsWith("]")) {
            for (String part : s.substring(1, s.length() - 1).split(",")) {
                String t = part.trim();
                if (!t.matches("\\d{1,4}(-\\d{1,4})?")) {
                    throw new IllegalArgumentException("not a core or core range: '" + t + "' in " + spec);
                }
                String[] ends = t.split("-");
                int from = Integer.parseInt(ends[0]);
                int to = ends.length == 2 ? Integer.parseInt(ends[1]) : from;
                if (from > to || to > MAX_CORE) {
                    throw new IllegalArgumentException("core range " + t + " is empty or beyond " + MAX_CORE);
                }
                cores.set(from, to + 1);
            }
        } else {
            throw new IllegalArgumentException("must be a hex mask (0x3) or a list ([0,2-3]), got " + spec);
        }
        if (cores.isEmpty()) {
            throw new IllegalArgumentException("names no core: " + spec);
        }
        if (cores.length() - 1 > MAX_CORE) {
            throw new IllegalArgumentException("core " + (cores.length() - 1) + " is beyond " + MAX_CORE);
        }
        return cores;
    }

    /** The cores as the hex mask SPDK takes. */
    public static String toMask(BitSet cores) {
        StringBuilder sb = new StringBuilder();
        int nibbles = (cores.length() + 3) / 4;
        for (int i = nibbles - 1; i >= 0; i--) {
            int v = 0;
            for (int b = 0; b < 4; b++) {
                if (cores.get(i * 4 + b)) {
                    v |= 1 << b;
                }
            }
            sb.append(Character.forDigit(v, 16));
        }
        return "0x" + (sb.length() == 0 ? "0" : sb.toString());
    }
}
