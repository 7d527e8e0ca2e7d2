package io.nvmf4j.testhost;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.ProtocolException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * NVMe/TCP framing: builds host-to-controller PDUs (HPDA 0, so no padding) with optional CRC32C
 * digests, and reads one PDU from a stream honouring PDO and the digest flags it carries.
 */
public final class PduCodec {
    static final int DIGEST_LEN = 4;
    /** Sanity bound on a received PDU; far above any MDTS we configure. */
    private static final long MAX_RECEIVED_PLEN = 64L << 20;

    private PduCodec() {
    }

    /**
     * Encodes a PDU. {@code psh} is the PDU-specific header (hlen - 8 bytes). PDO is hlen plus the
     * header digest when there is data, else 0; DDGSTF is set only when there is data.
     */
    public static byte[] encode(int type, int flags, byte[] psh, byte[] data, boolean hdgst, boolean ddgst) {
        int hlen = Pdu.CH_LEN + psh.length;
        boolean hasData = data != null && data.length > 0;
        int hd = hdgst ? DIGEST_LEN : 0;
        int dd = ddgst && hasData ? DIGEST_LEN : 0;
        int pdo = hasData ? hlen + hd : 0;
        int plen = hlen + hd + (hasData ? data.length + dd : 0);
        ByteBuffer b = ByteBuffer.allocate(plen).order(ByteOrder.LITTLE_ENDIAN);
        int allFlags = flags | (hd > 0 ? Pdu.FLAG_HDGSTF : 0) | (dd > 0 ? Pdu.FLAG_DDGSTF : 0);
        b.put((byte) type).put((byte) allFlags).put((byte) hlen).put((byte) pdo).putInt(plen).put(psh);
        if (hd > 0) {
            b.putInt(crc32c(b.array(), 0, hlen));
        }
        if (hasData) {
            b.put(data);
            if (dd > 0) {
                b.putInt(crc32c(data, 0, data.length));
            }
        }
        return b.array();
    }

    /** Reads exactly one PDU; throws {@link java.io.EOFException} when the peer closed the stream. */
    public static Pdu read(DataInputStream in) throws IOException {
        byte[] ch = new byte[Pdu.CH_LEN];
        in.readFully(ch);
        ByteBuffer chView = ByteBuffer.wrap(ch).order(ByteOrder.LITTLE_ENDIAN);
        int type = ch[0] & 0xFF;
        int flags = ch[1] & 0xFF;
        int hlen = ch[2] & 0xFF;
        int pdo = ch[3] & 0xFF;
        long plen = chView.getInt(4) & 0xFFFFFFFFL;
        if (hlen < Pdu.CH_LEN || plen < hlen || plen > MAX_RECEIVED_PLEN) {
            throw new ProtocolException("bad common header: type=" + type + " hlen=" + hlen + " plen=" + plen);
        }
        byte[] header = new byte[hlen];
        System.arraycopy(ch, 0, header, 0, Pdu.CH_LEN);
        in.readFully(header, Pdu.CH_LEN, hlen - Pdu.CH_LEN);
        boolean digestsApply = type >= Pdu.CAPSULE_CMD;
        int pos = hlen;
        Boolean headerOk = null;
        if (digestsApply && (flags & Pdu.FLAG_HDGSTF) != 0) {
            headerOk = readIntLe(in) == crc32c(header, 0, hlen);
            pos += DIGEST_LEN;
        }
        if (plen == pos) {
            return new Pdu(header, new byte[0], headerOk, null);
        }
        int dataStart = pdo == 0 ? pos : pdo;
        int dd = digestsApply && (flags & Pdu.FLAG_DDGSTF) != 0 ? DIGEST_LEN : 0;
        long dataLen = plen - dataStart - dd;
        if (dataStart < pos || dataLen < 0) {
            throw new ProtocolException("bad PDO/PLEN: hlen=" + hlen + " pdo=" + pdo + " plen=" + plen);
        }
        in.readFully(new byte[dataStart - pos]);
        byte[] data = new byte[(int) dataLen];
        in.readFully(data);
        Boolean dataOk = dd > 0 ? readIntLe(in) == crc32c(data, 0, data.length) : null;
        return new Pdu(header, data, headerOk, dataOk);
    }

    /** CRC32C as NVMe/TCP uses it; the wire form is this value little-endian. */
    public static int crc32c(byte[] b, int off, int len) {
        CRC32C crc = new CRC32C();
        crc.update(b, off, len);
        return (int) crc.getValue();
    }

    private static int readIntLe(DataInputStream in) throws IOException {
        return Integer.reverseBytes(in.readInt());
    }
}
