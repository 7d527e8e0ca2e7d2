package io.nvmf4j.testhost;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A completed command: the 16-byte CQE (dw0, dw1, sqhd, sqid, cid, status) and the data read, if
 * any. {@code viaC2hSuccess} is true when the last C2HData carried SUCCESS and no CapsuleResp came.
 *
 * <p>Status word: bit 0 phase, SC bits 8:1, SCT bits 11:9, CRD 13:12, M bit 14, DNR bit 15.
 */
public record Completion(int dw0, int dw1, int sqhd, int sqid, int cid, int status, byte[] data,
                         boolean viaC2hSuccess) {

    /** Parses the CQE at offset 8 of a CapsuleResp PDU. */
    public static Completion fromCapsuleResp(Pdu pdu, byte[] data) {
        if (pdu.type() != Pdu.CAPSULE_RESP) {
            throw new IllegalArgumentException("not a CapsuleResp: " + pdu);
        }
        ByteBuffer b = ByteBuffer.wrap(pdu.header()).order(ByteOrder.LITTLE_ENDIAN);
        return new Completion(b.getInt(8), b.getInt(12), b.getShort(16) & 0xFFFF, b.getShort(18) & 0xFFFF,
                b.getShort(20) & 0xFFFF, b.getShort(22) & 0xFFFF, data, false);
    }

    static Completion c2hSuccess(int cid, byte[] data) {
        return new Completion(0, 0, 0, 0, cid, 0, data, true);
    }

    public int sc() {
        return (status >> 1) & 0xFF;
    }

    public int sct() {
        return (status >> 9) & 0x7;
    }

    public boolean dnr() {
        return (status & 0x8000) != 0;
    }

    public boolean ok() {
        return sc() == 0 && sct() == 0;
    }

    /** dw1:dw0 as one 64-bit value (Property Get of an 8-byte property). */
    public long result64() {
        return (dw0 & 0xFFFFFFFFL) | ((long) dw1 << 32);
    }

    @Override
    public String toString() {
        return String.format("Completion[cid=%d sct=%d sc=0x%02x dnr=%b dw0=0x%08x dw1=0x%08x sqhd=%d c2hSuccess=%b]",
                cid, sct(), sc(), dnr(), dw0, dw1, sqhd, viaC2hSuccess);
    }
}
