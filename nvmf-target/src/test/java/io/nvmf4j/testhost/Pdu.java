package io.nvmf4j.testhost;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One NVMe/TCP PDU as received: the header (common header included) and the data, with the
 * outcome of the digest checks. Field accessors take offsets from the start of the PDU.
 *
 * <pre>
 *  0      1      2      3      4            8
 * +------+------+------+------+------------+------------------+--------+-----+------+--------+
 * | type | flags| hlen | pdo  | plen (u32) | PDU-specific hdr | HDGST? | pad | data | DDGST? |
 * +------+------+------+------+------------+------------------+--------+-----+------+--------+
 * </pre>
 */
public final class Pdu {
    public static final int IC_REQ = 0x00;
    public static final int IC_RESP = 0x01;
    public static final int H2C_TERM_REQ = 0x02;
    public static final int C2H_TERM_REQ = 0x03;
    public static final int CAPSULE_CMD = 0x04;
    public static final int CAPSULE_RESP = 0x05;
    public static final int H2C_DATA = 0x06;
    public static final int C2H_DATA = 0x07;
    public static final int R2T = 0x09;

    public static final int FLAG_HDGSTF = 0x01;
    public static final int FLAG_DDGSTF = 0x02;
    public static final int FLAG_LAST_PDU = 0x04;
    public static final int FLAG_SUCCESS = 0x08;

    /** Common header length. */
    public static final int CH_LEN = 8;

    private final byte[] header;
    private final byte[] data;
    private final ByteBuffer view;
    private final Boolean headerDigestOk;
    private final Boolean dataDigestOk;

    Pdu(byte[] header, byte[] data, Boolean headerDigestOk, Boolean dataDigestOk) {
        this.header = header;
        this.data = data;
        this.view = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN);
        this.headerDigestOk = headerDigestOk;
        this.dataDigestOk = dataDigestOk;
    }

    public int type() {
        return u8(0);
    }

    public int flags() {
        return u8(1);
    }

    public int hlen() {
        return u8(2);
    }

    public int pdo() {
        return u8(3);
    }

    public long plen() {
        return u32(4);
    }

    public int u8(int offset) {
        return view.get(offset) & 0xFF;
    }

    public int u16(int offset) {
        return view.getShort(offset) & 0xFFFF;
    }

    public long u32(int offset) {
        return view.getInt(offset) & 0xFFFFFFFFL;
    }

    /** The header bytes (hlen of them, common header included, digest excluded). */
    public byte[] header() {
        return header.clone();
    }

    /** The data (padding and digest excluded); empty when the PDU has none. */
    public byte[] data() {
        return data;
    }

    /** {@code null} when the PDU carried no header digest. */
    public Boolean headerDigestOk() {
        return headerDigestOk;
    }

    /** {@code null} when the PDU carried no data digest. */
    public Boolean dataDigestOk() {
        return dataDigestOk;
    }

    @Override
    public String toString() {
        return String.format("Pdu[type=0x%02x flags=0x%02x hlen=%d pdo=%d plen=%d data=%d]",
                type(), flags(), hlen(), pdo(), plen(), data.length);
    }
}
