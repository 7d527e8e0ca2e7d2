package io.nvmf4j.transport.tcp;

/**
 * NVMe/TCP PDU layouts (NVMe/TCP Transport Specification 1.0, section 3.6).
 *
 * <pre>
 * common header (8 B):  0 PDU-TYPE | 1 FLAGS | 2 HLEN | 3 PDO | 4 PLEN u32
 * ICReq/ICResp (128 B): 8 PFV u16 | 10 HPDA / CPDA | 11 DGST | 12 MAXR2T / MAXH2CDATA u32
 * TermReq (24 B + data): 8 FES u16 | 10 FEI u32
 * CapsuleCmd (72 B):    8 SQE[64]                 CapsuleResp (24 B): 8 CQE[16]
 * H2CData / C2HData / R2T (24 B): 8 CCCID u16 | 10 TTAG u16 | 12 DATAO / R2TO u32 | 16 DATAL / R2TL u32
 * </pre>
 */
final class TcpPdu {
    static final int CH_SIZE = 8;
    static final int TYPE = 0;
    static final int FLAGS = 1;
    static final int HLEN = 2;
    static final int PDO = 3;
    static final int PLEN = 4;

    static final int ICREQ = 0x00;
    static final int ICRESP = 0x01;
    static final int H2C_TERM_REQ = 0x02;
    static final int C2H_TERM_REQ = 0x03;
    static final int CAPSULE_CMD = 0x04;
    static final int CAPSULE_RESP = 0x05;
    static final int H2C_DATA = 0x06;
    static final int C2H_DATA = 0x07;
    static final int R2T = 0x09;

    static final int FLAG_HDGST = 0x01;
    static final int FLAG_DDGST = 0x02;
    static final int FLAG_LAST_PDU = 0x04;
    static final int FLAG_SUCCESS = 0x08;

    static final int IC_SIZE = 128;
    static final int IC_PFV = 8;
    static final int IC_HPDA = 10;
    static final int IC_CPDA = 10;
    static final int IC_DGST = 11;
    static final int IC_MAXR2T = 12;
    static final int IC_MAXH2CDATA = 12;

    static final int TERM_HLEN = 24;
    static final int TERM_FES = 8;
    static final int TERM_FEI = 10;
    /** Largest TermReq PDU: header plus up to 128 bytes of the offending PDU header. */
    static final int TERM_MAX_DATA = 128;

    static final int CMD_HLEN = 72;
    static final int CMD_SQE = 8;
    static final int RESP_HLEN = 24;
    static final int DATA_HLEN = 24;
    static final int DATA_CCCID = 8;
    static final int DATA_TTAG = 10;
    static final int DATA_DATAO = 12;
    static final int DATA_DATAL = 16;

    static final int DIGEST_SIZE = 4;

    /** CPDA we send in ICResp: 0 (the Linux host refuses any other value). */
    static final int CPDA = 0;
    /**
     * Alignment of the PDO of every host-to-controller PDU with data: CPDA is 0's based in dwords, so
     * PDO must be a multiple of (CPDA + 1) * 4 bytes.
     */
    static final int CPDA_ALIGNMENT = (CPDA + 1) * 4;

    // Fatal Error Status (TermReq FES)
    static final int FES_INVALID_HEADER_FIELD = 0x01;
    static final int FES_PDU_SEQUENCE_ERROR = 0x02;
    static final int FES_HEADER_DIGEST_ERROR = 0x03;
    static final int FES_DATA_OUT_OF_RANGE = 0x04;
    static final int FES_DATA_LIMIT_EXCEEDED = 0x05;
    static final int FES_UNSUPPORTED_PARAMETER = 0x06;

    /** Admin queues accept 8 KiB of in-capsule data whatever IOCCSZ says (the Linux host assumes it). */
    static final int ADMIN_IN_CAPSULE = 8192;

    private TcpPdu() {
    }

    /** The CRC-32C of {@code length} bytes of {@code buf} from {@code index} (header and data digests). */
    static int crc32c(java.util.zip.CRC32C crc, io.netty.buffer.ByteBuf buf, int index, int length) {
        crc.reset();
        update(crc, buf, index, length);
        return (int) crc.getValue();
    }

    /** Adds {@code length} bytes of {@code buf} from {@code index} to a running CRC-32C. */
    static void update(java.util.zip.CRC32C crc, io.netty.buffer.ByteBuf buf, int index, int length) {
        if (buf.nioBufferCount() == 1) {
            crc.update(buf.internalNioBuffer(index, length));
        } else {
            crc.update(buf.nioBuffer(index, length));
        }
    }
}
