package io.nvmf4j.testhost;

/** The fields of an ICResp: PFV u16 at 8, CPDA u8 at 10, DGST u8 at 11, MAXH2CDATA u32 at 12. */
public record IcResp(int pfv, int cpda, boolean headerDigest, boolean dataDigest, long maxH2cData) {
    public static IcResp of(Pdu pdu) {
        if (pdu.type() != Pdu.IC_RESP) {
            throw new IllegalArgumentException("not an ICResp: " + pdu);
        }
        int dgst = pdu.u8(11);
        return new IcResp(pdu.u16(8), pdu.u8(10), (dgst & 1) != 0, (dgst & 2) != 0, pdu.u32(12));
    }
}
