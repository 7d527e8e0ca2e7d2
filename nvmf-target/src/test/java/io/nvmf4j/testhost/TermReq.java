package io.nvmf4j.testhost;

/** A TermReq PDU: fatal error status (FES u16 at 8) and fatal error information (FEI u32 at 10). */
public record TermReq(int pduType, int fes, long fei) {
    public static final int FES_INVALID_HEADER_FIELD = 0x01;
    public static final int FES_PDU_SEQUENCE_ERROR = 0x02;
    public static final int FES_HEADER_DIGEST_ERROR = 0x03;
    public static final int FES_DATA_OUT_OF_RANGE = 0x04;
    public static final int FES_DATA_LIMIT_EXCEEDED = 0x05;
    public static final int FES_UNSUPPORTED_PARAMETER = 0x06;

    public static TermReq of(Pdu pdu) {
        if (pdu.type() != Pdu.C2H_TERM_REQ && pdu.type() != Pdu.H2C_TERM_REQ) {
            throw new IllegalArgumentException("not a TermReq: " + pdu);
        }
        return new TermReq(pdu.type(), pdu.u16(8), pdu.u32(10));
    }
}
