package io.nvmf4j.nvme;

import io.netty.buffer.ByteBuf;

/**
 * Flyweight over a 64-byte submission queue entry (little-endian accessors of a Netty buffer) (NVMe Base 2.0, figure 88).
 *
 * <pre>
 *  0      1      2      4          8         16         24         40   44   48   52   56   60   64
 * +------+------+------+----------+---------+----------+----------+----+----+----+----+----+----+
 * |opcode|flags | cid  |  nsid    | cdw2-3  |  mptr    | dptr/SGL |cdw10 11  12   13   14   15  |
 * +------+------+------+----------+---------+----------+----------+----+----+----+----+----+----+
 * </pre>
 * Fabrics commands (opcode 0x7F) carry the fabrics command type at byte 4.
 */
public final class Sqe {
    public static final int SIZE = 64;
    /** PSDT 01b: SGLs for the data, MPTR the address of one contiguous metadata buffer (all fabrics use it). */
    public static final int PSDT_SGL = 0x1;
    public static final int OPCODE = 0;
    public static final int FLAGS = 1;
    public static final int CID = 2;
    public static final int NSID = 4;
    public static final int FCTYPE = 4;
    public static final int SGL1 = 24;
    public static final int CDW10 = 40;
    public static final int CDW11 = 44;
    public static final int CDW12 = 48;
    public static final int CDW13 = 52;
    public static final int CDW14 = 56;
    public static final int CDW15 = 60;

    private ByteBuf buffer;
    private int offset;

    public Sqe wrap(ByteBuf buffer, int offset) {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public int opcode() {
        return buffer.getByte(offset + OPCODE) & 0xFF;
    }

    /** PSDT (bits 7:6 of the flags byte): 01b or 10b means SGLs are used for the data pointer. */
    public int psdt() {
        return (buffer.getByte(offset + FLAGS) >> 6) & 0x3;
    }

    public int fuse() {
        return buffer.getByte(offset + FLAGS) & 0x3;
    }

    public int cid() {
        return buffer.getUnsignedShortLE(offset + CID);
    }

    public int nsid() {
        return buffer.getIntLE(offset + NSID);
    }

    public int fctype() {
        return buffer.getByte(offset + FCTYPE) & 0xFF;
    }

    public int cdw(int index) {
        return buffer.getIntLE(offset + CDW10 + (index - 10) * 4);
    }

    public int cdw10() {
        return buffer.getIntLE(offset + CDW10);
    }

    public int cdw11() {
        return buffer.getIntLE(offset + CDW11);
    }

    public int cdw12() {
        return buffer.getIntLE(offset + CDW12);
    }

    public int cdw13() {
        return buffer.getIntLE(offset + CDW13);
    }

    public int cdw14() {
        return buffer.getIntLE(offset + CDW14);
    }

    public int u8(int field) {
        return buffer.getByte(offset + field) & 0xFF;
    }

    public int u16(int field) {
        return buffer.getUnsignedShortLE(offset + field);
    }

    public int u32(int field) {
        return buffer.getIntLE(offset + field);
    }

    public long u64(int field) {
        return buffer.getLongLE(offset + field);
    }

    /** Starting LBA of NVM commands (cdw10-11). */
    public long slba() {
        return buffer.getLongLE(offset + CDW10);
    }

    /** Number of logical blocks of NVM commands (cdw12 bits 15:0, 0's based), as a count. */
    public int nlb() {
        return buffer.getUnsignedShortLE(offset + CDW12) + 1;
    }

    // SGL descriptor 1 (bytes 24..39)

    public long sglAddress() {
        return buffer.getLongLE(offset + SGL1);
    }

    public int sglLength() {
        return buffer.getIntLE(offset + SGL1 + 8);
    }

    /** SGL identifier byte: type in bits 7:4, subtype in bits 3:0. */
    public int sglId() {
        return buffer.getByte(offset + SGL1 + 15) & 0xFF;
    }
}
