package io.nvmf4j.it;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;

/** Little-endian field reads and small byte helpers for assertions on NVMe data structures (spdk-jni's tests use them too). */
public final class Le {
    private Le() {
    }

    public static int u8(byte[] b, int off) {
        return b[off] & 0xFF;
    }

    public static int u16(byte[] b, int off) {
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getShort(off) & 0xFFFF;
    }

    public static long u32(byte[] b, int off) {
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getInt(off) & 0xFFFFFFFFL;
    }

    public static long u64(byte[] b, int off) {
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getLong(off);
    }

    public static void putU32(byte[] b, int off, long v) {
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putInt(off, (int) v);
    }

    public static byte[] slice(byte[] b, int off, int len) {
        return Arrays.copyOfRange(b, off, off + len);
    }

    /** ASCII bytes of {@code s} padded with spaces to {@code len}. */
    public static byte[] spacePadded(String s, int len) {
        byte[] out = new byte[len];
        Arrays.fill(out, (byte) ' ');
        byte[] src = s.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(src, 0, out, 0, src.length);
        return out;
    }

    /** The NUL-terminated ASCII string in {@code b[off, off+len)}. */
    public static String cString(byte[] b, int off, int len) {
        int end = off;
        while (end < off + len && b[end] != 0) {
            end++;
        }
        return new String(b, off, end - off, StandardCharsets.US_ASCII);
    }

    public static byte[] random(int len, long seed) {
        byte[] b = new byte[len];
        new Random(seed).nextBytes(b);
        return b;
    }

    public static byte[] hex(String hex) {
        byte[] b = new byte[hex.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return b;
    }

    public static boolean allZero(byte[] b) {
        for (byte x : b) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }
}
