package io.nvmf4j.testhost;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A 64-byte submission queue entry, built field by field (little-endian).
 *
 * <pre>
 *  0 opcode | 1 flags (PSDT) | 2 cid (u16) | 4 nsid / fctype (byte 4 for fabrics)
 *  8..23 cdw2-3, mptr | 24..39 SGL1: address u64 @24, length u32 @32, SGL identifier @39
 * 40..63 cdw10..cdw15
 * </pre>
 */
public final class Sqe {
    public static final int SIZE = 64;
    /** SGL identifier: Data Block (type 0x0), subtype Offset (0x1): in-capsule data. */
    public static final int SGL_IN_CAPSULE = 0x01;
    /** SGL identifier: Transport Data Block (type 0x5), subtype 0xA: data moved by R2T/H2C/C2H. */
    public static final int SGL_TRANSPORT = 0x5A;
    /** Flags byte: PSDT = 01b, SGLs are used for data transfer. */
    private static final int PSDT_SGL = 0x40;

    private final ByteBuffer buf = ByteBuffer.allocate(SIZE).order(ByteOrder.LITTLE_ENDIAN);

    private Sqe() {
    }

    public static Sqe of(int opcode) {
        return new Sqe().u8(0, opcode).u8(1, PSDT_SGL);
    }

    /** A Fabrics command (opcode 0x7F) of the given fctype. */
    public static Sqe fabrics(int fctype) {
        return of(0x7F).u8(4, fctype);
    }

    public Sqe u8(int offset, int value) {
        buf.put(offset, (byte) value);
        return this;
    }

    public Sqe u16(int offset, int value) {
        buf.putShort(offset, (short) value);
        return this;
    }

    public Sqe u32(int offset, int value) {
        buf.putInt(offset, value);
        return this;
    }

    public Sqe u64(int offset, long value) {
        buf.putLong(offset, value);
        return this;
    }

    public Sqe cid(int cid) {
        return u16(2, cid);
    }

    public Sqe nsid(int nsid) {
        return u32(4, nsid);
    }

    /** Command dword {@code n} (10..15 for command-specific fields). */
    public Sqe cdw(int n, int value) {
        return u32(n * 4, value);
    }

    public Sqe sgl(int identifier, long address, int length) {
        return u64(24, address).u32(32, length).u8(39, identifier);
    }

    public int opcode() {
        return buf.get(0) & 0xFF;
    }

    public int cid() {
        return buf.getShort(2) & 0xFFFF;
    }

    public int sglIdentifier() {
        return buf.get(39) & 0xFF;
    }

    public Sqe copy() {
        Sqe c = new Sqe();
        c.buf.put(0, buf, 0, SIZE);
        return c;
    }

    public byte[] toBytes() {
        byte[] b = new byte[SIZE];
        buf.get(0, b);
        return b;
    }
}
