package io.nvmf4j.fuzz;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * A byte-level mutator in the manner of AFL's havoc stage: a valid input gets 1 to 8 stacked edits, each a
 * bit flip, an "interesting" value (0, -1, the signed limits, powers of two near a field's bounds) written
 * as u8/u16/u32/u64 little-endian at a random offset, a random byte, a truncation, an extension, a copied
 * or deleted chunk. Deterministic for a given {@link SplittableRandom}, so a case is replayed from its seed.
 */
public final class Mutator {
    private static final long[] INTERESTING = {
        0, 1, -1, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x7FFFFFFFL, 0x80000000L,
        0xFFFFFFFFL, 0x100000000L, Long.MAX_VALUE, Long.MIN_VALUE, 16, 32, 64, 72, 128, 512, 4096, 8192,
        0x5A, 0x01, 0x40, 0x4F, 0x31, 0x30,
    };

    private Mutator() {
    }

    /** A mutated copy of {@code in} (never longer than {@code maxLength}). */
    public static byte[] mutate(byte[] in, SplittableRandom rnd, int maxLength) {
        byte[] b = in;
        int edits = 1 + rnd.nextInt(8);
        for (int i = 0; i < edits; i++) {
            b = edit(b, rnd, maxLength);
        }
        return b;
    }

    private static byte[] edit(byte[] in, SplittableRandom rnd, int maxLength) {
        byte[] b = in.clone();
        int op = rnd.nextInt(10);
        if (b.length == 0 && op < 6) {
            op = 7;
        }
        switch (op) {
            case 0, 1 -> {
                int bit = rnd.nextInt(b.length * 8);
                b[bit >>> 3] ^= (byte) (1 << (bit & 7));
            }
            case 2 -> b[rnd.nextInt(b.length)] = (byte) rnd.nextInt(256);
            case 3, 4 -> {
                int width = 1 << rnd.nextInt(4); // 1, 2, 4 or 8 bytes
                long v = INTERESTING[rnd.nextInt(INTERESTING.length)];
                if (rnd.nextInt(4) == 0) {
                    v += rnd.nextInt(-3, 4);
                }
                int at = rnd.nextInt(b.length);
                for (int k = 0; k < width && at + k < b.length; k++) {
                    b[at + k] = (byte) (v >>> (8 * k));
                }
            }
            case 5 -> { // copy a chunk over another place
                int len = 1 + rnd.nextInt(Math.min(b.length, 32));
                int from = rnd.nextInt(b.length - len + 1);
                int to = rnd.nextInt(b.length - len + 1);
                System.arraycopy(in, from, b, to, len);
            }
            case 6 -> b = Arrays.copyOf(b, rnd.nextInt(b.length + 1)); // truncate
            case 7 -> { // extend with random bytes
                int add = 1 + rnd.nextInt(64);
                int len = Math.min(maxLength, b.length + add);
                int old = b.length;
                b = Arrays.copyOf(b, len);
                for (int k = old; k < len; k++) {
                    b[k] = (byte) rnd.nextInt(256);
                }
            }
            case 8 -> { // delete a chunk
                if (b.length > 1) {
                    int len = 1 + rnd.nextInt(Math.min(b.length - 1, 32));
                    int at = rnd.nextInt(b.length - len + 1);
                    byte[] c = new byte[b.length - len];
                    System.arraycopy(b, 0, c, 0, at);
                    System.arraycopy(b, at + len, c, at, b.length - at - len);
                    b = c;
                }
            }
            default -> { // leave it as it is: the valid input stays in the mix
            }
        }
        return b.length > maxLength ? Arrays.copyOf(b, maxLength) : b;
    }
}
