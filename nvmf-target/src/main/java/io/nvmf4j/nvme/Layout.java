package io.nvmf4j.nvme;

import io.netty.buffer.ByteBuf;

import java.nio.charset.StandardCharsets;

/** Helpers for writing NVMe data structures: ASCII fields padded with spaces or NULs. */
public final class Layout {
    private Layout() {
    }

    /** ASCII, left-justified, padded with spaces (SN, MN, FR, TRSVCID, TRADDR). */
    public static void putSpacePadded(ByteBuf buf, int index, int fieldLength, String value) {
        byte[] b = value.getBytes(StandardCharsets.US_ASCII);
        int n = Math.min(b.length, fieldLength);
        buf.setBytes(index, b, 0, n);
        for (int i = n; i < fieldLength; i++) {
            buf.setByte(index + i, ' ');
        }
    }

    /** UTF-8, NUL-terminated and NUL-padded (NQNs). */
    public static void putNulPadded(ByteBuf buf, int index, int fieldLength, String value) {
        byte[] b = value.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(b.length, fieldLength - 1);
        buf.setBytes(index, b, 0, n);
        buf.setZero(index + n, fieldLength - n);
    }

    /** Reads a NUL-terminated string of at most {@code fieldLength} bytes. */
    public static String getNulTerminated(ByteBuf buf, int index, int fieldLength) {
        int n = 0;
        while (n < fieldLength && buf.getByte(index + n) != 0) {
            n++;
        }
        return buf.toString(index, n, StandardCharsets.UTF_8);
    }
}
