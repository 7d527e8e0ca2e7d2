package io.nvmf4j.transport.rdma;

import io.netty.buffer.ByteBuf;
import io.nvmf4j.core.Request;
import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.nvme.Sgl;

/**
 * SGL 1 of an NVMe/RDMA command, parsed into a list of keyed descriptors (or one in-capsule range).
 * One instance per request, reused; {@link #parse} writes only this object.
 *
 * <pre>
 * SGL descriptor (16 B, SQE bytes 24..39):
 *   Data Block, Offset (0x01):      0 offset u64 | 8 length u32 | 12 reserved[3] | 15 id
 *   Keyed Data Block (0x40 / 0x4F): 0 address u64 | 8 length u24 | 11 key u32 | 15 id
 *   Last Segment, Offset (0x31):    0 offset u64 | 8 length u32 (16 x descriptors) | 15 id
 * </pre>
 * Offsets are into the capsule data (which follows the 64-byte SQE; ICDOFF = 0). A Last Segment holds
 * up to {@link #MSDBD} keyed data-block descriptors in the capsule. A Last Segment with the Address
 * subtype (0x30) would put the list in host memory, which a target cannot read without a key: it is an
 * invalid SGL type here, as it is in SPDK.
 */
final class RdmaSgl {
    /** Keyed descriptors per command we accept (and advertise as MSDBD). */
    static final int MSDBD = 16;
    static final int DESCRIPTOR_SIZE = 16;
    static final int LAST_SEGMENT_ADDRESS = 0x30;
    private static final int SQE_SGL1 = 24;
    private static final int SQE_SIZE = 64;
    /** Error locations (byte offsets in the SQE) reported with a failed parse. */
    static final int LOC_SGL_ADDRESS = 24;
    static final int LOC_SGL_LENGTH = 32;
    static final int LOC_SGL_ID = 39;

    final long[] address = new long[MSDBD];
    final int[] length = new int[MSDBD];
    final int[] key = new int[MSDBD];
    /** Keyed descriptors in use. */
    int count;
    /** Data is in the capsule at {@link #inCapsuleOffset} (from the start of the capsule data). */
    boolean inCapsule;
    int inCapsuleOffset;
    /** Sum of the descriptor lengths. */
    int totalLength;
    /** The host asked for remote invalidation (0x4F) of {@link #invalidateKey}. */
    boolean invalidate;
    int invalidateKey;
    /** SQE byte offset of the field at fault after a failed parse. */
    int errorLocation;

    void clear() {
        count = 0;
        inCapsule = false;
        inCapsuleOffset = 0;
        totalLength = 0;
        invalidate = false;
        invalidateKey = 0;
        errorLocation = Request.NO_ERROR_LOCATION;
    }

    /**
     * Parses SGL 1 of the SQE at {@code capsule[sqeIndex]}, whose capsule data (following the SQE) is
     * {@code capsuleDataLength} bytes long.
     *
     * @param inCapsuleLimit largest in-capsule data accepted on this queue (the same on the admin queue:
     *                       every receive buffer holds a full capsule, so admin capsules may carry data,
     *                       Connect data for example)
     * @param xferDir        the command's data direction (from parse)
     * @param expectedLength exact length the command moves, or -1 when the handler checks it
     * @param mdts           largest transfer
     * @return an NVMe status; on failure {@link #errorLocation} names the field
     */
    int parse(ByteBuf capsule, int sqeIndex, int capsuleDataLength, int inCapsuleLimit, int xferDir,
              int expectedLength, int mdts) {
        clear();
        int sgl = sqeIndex + SQE_SGL1;
        int id = capsule.getUnsignedByte(sgl + 15);
        int status;
        switch (id) {
            case Sgl.DATA_BLOCK_OFFSET -> status = parseInCapsule(capsule, sgl, capsuleDataLength, inCapsuleLimit,
                xferDir);
            case Sgl.KEYED_DATA_BLOCK, Sgl.KEYED_DATA_BLOCK_INVALIDATE -> {
                addKeyed(capsule, sgl);
                status = NvmeStatus.SUCCESS;
            }
            case Sgl.LAST_SEGMENT_OFFSET -> status = parseLastSegment(capsule, sqeIndex, sgl, capsuleDataLength);
            default -> status = fail(NvmeStatus.SGL_TYPE_INVALID, LOC_SGL_ID);
        }
        if (status != NvmeStatus.SUCCESS) {
            return status;
        }
        if (expectedLength >= 0 && totalLength != expectedLength) {
            return fail(NvmeStatus.DATA_SGL_LENGTH_INVALID, LOC_SGL_LENGTH);
        }
        if (Integer.toUnsignedLong(totalLength) > mdts) {
            return fail(NvmeStatus.INVALID_FIELD, LOC_SGL_LENGTH);
        }
        return NvmeStatus.SUCCESS;
    }

    private int parseInCapsule(ByteBuf capsule, int sgl, int capsuleDataLength, int inCapsuleLimit, int xferDir) {
        if (xferDir != Request.XFER_H2C) {
            return fail(NvmeStatus.INVALID_FIELD, LOC_SGL_ID);
        }
        long offset = capsule.getLongLE(sgl);
        long len = capsule.getUnsignedIntLE(sgl + 8);
        if (offset < 0 || offset > capsuleDataLength) {
            return fail(NvmeStatus.SGL_OFFSET_INVALID, LOC_SGL_ADDRESS);
        }
        if (len > inCapsuleLimit || offset + len > capsuleDataLength) {
            return fail(NvmeStatus.DATA_SGL_LENGTH_INVALID, LOC_SGL_LENGTH);
        }
        inCapsule = true;
        inCapsuleOffset = (int) offset;
        totalLength = (int) len;
        return NvmeStatus.SUCCESS;
    }

    private int parseLastSegment(ByteBuf capsule, int sqeIndex, int sgl, int capsuleDataLength) {
        long offset = capsule.getLongLE(sgl);
        long len = capsule.getUnsignedIntLE(sgl + 8);
        if (len == 0 || len % DESCRIPTOR_SIZE != 0) {
            return fail(NvmeStatus.INVALID_SGL_SEGMENT, LOC_SGL_LENGTH);
        }
        if (len / DESCRIPTOR_SIZE > MSDBD) {
            return fail(NvmeStatus.INVALID_SGL_COUNT, LOC_SGL_LENGTH);
        }
        if (offset < 0 || offset > capsuleDataLength - len) { // not offset + len: it overflows near 2^63
            return fail(NvmeStatus.INVALID_SGL_SEGMENT, LOC_SGL_ADDRESS);
        }
        int list = sqeIndex + SQE_SIZE + (int) offset;
        int n = (int) (len / DESCRIPTOR_SIZE);
        for (int i = 0; i < n; i++) {
            int d = list + i * DESCRIPTOR_SIZE;
            int id = capsule.getUnsignedByte(d + 15);
            if (id != Sgl.KEYED_DATA_BLOCK && id != Sgl.KEYED_DATA_BLOCK_INVALIDATE) {
                return fail(NvmeStatus.SGL_TYPE_INVALID, LOC_SGL_ID);
            }
            addKeyed(capsule, d);
        }
        return NvmeStatus.SUCCESS;
    }

    private void addKeyed(ByteBuf b, int d) {
        int i = count++;
        address[i] = b.getLongLE(d);
        length[i] = b.getUnsignedMediumLE(d + 8);
        key[i] = b.getIntLE(d + 11);
        totalLength += length[i];
        if (b.getUnsignedByte(d + 15) == Sgl.KEYED_DATA_BLOCK_INVALIDATE && !invalidate) {
            invalidate = true;
            invalidateKey = key[i];
        }
    }

    private int fail(int status, int location) {
        int loc = location;
        clear();
        errorLocation = loc;
        return status;
    }
}
