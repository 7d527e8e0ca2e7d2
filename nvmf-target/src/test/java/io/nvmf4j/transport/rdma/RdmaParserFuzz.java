package io.nvmf4j.transport.rdma;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.nvmf4j.core.Request;
import io.nvmf4j.fuzz.Escape;
import io.nvmf4j.fuzz.FuzzTarget;
import io.nvmf4j.fuzz.Mutator;
import io.nvmf4j.nvme.NvmeStatus;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Set;
import java.util.SplittableRandom;

/** The RDMA transport's parsers under fuzz: SGL 1 and its descriptor lists, and the RDMA CM private data. */
public final class RdmaParserFuzz {
    private RdmaParserFuzz() {
    }

    /**
     * {@link RdmaSgl#parse} on a capsule (SQE plus in-capsule data) built from a valid SGL of each kind (keyed,
     * keyed with invalidate, in-capsule, Last Segment with 1 to 16 keyed descriptors) and mutated; the buffer
     * is exactly the capsule, so a read past it is an exception. Property: the status is one of the SGL
     * statuses with the failing field's offset, and what a success describes lies inside the capsule and the
     * limits.
     */
    public static final class Sgl implements FuzzTarget {
        private static final int MDTS = 131072;
        private static final Set<Integer> STATUSES = Set.of(NvmeStatus.SUCCESS, NvmeStatus.SGL_TYPE_INVALID,
            NvmeStatus.INVALID_FIELD, NvmeStatus.SGL_OFFSET_INVALID, NvmeStatus.DATA_SGL_LENGTH_INVALID,
            NvmeStatus.INVALID_SGL_SEGMENT, NvmeStatus.INVALID_SGL_COUNT);
        private static final Set<Integer> LOCATIONS = Set.of(RdmaSgl.LOC_SGL_ADDRESS, RdmaSgl.LOC_SGL_LENGTH,
            RdmaSgl.LOC_SGL_ID);
        private final RdmaSgl sgl = new RdmaSgl();
        private long accepted;
        private long rejected;

        @Override
        public String name() {
            return "rdma-sgl";
        }

        @Override
        public void run(long seed) {
            SplittableRandom r = new SplittableRandom(seed);
            byte[] capsule = Mutator.mutate(validCapsule(r), r, 64 + 16 * 1024);
            if (capsule.length < 64) { // a receive shorter than an SQE never reaches the parser
                capsule = java.util.Arrays.copyOf(capsule, 64);
            }
            int dataLength = capsule.length - 64;
            int inCapsuleLimit = new int[] {0, 4096, 8192, 16384}[r.nextInt(4)];
            int xferDir = r.nextInt(3);
            int expected = r.nextBoolean() ? -1 : r.nextInt(3) * 4096;
            ByteBuf b = Unpooled.wrappedBuffer(capsule);
            int status = sgl.parse(b, 0, dataLength, inCapsuleLimit, xferDir, expected, MDTS);
            if (!STATUSES.contains(status)) {
                throw new Escape("unexpected status " + NvmeStatus.describe(status));
            }
            if (status != NvmeStatus.SUCCESS) {
                if (!LOCATIONS.contains(sgl.errorLocation) || sgl.count != 0) {
                    throw new Escape("rejection without its field: location " + sgl.errorLocation);
                }
                rejected++;
                return;
            }
            check(dataLength, inCapsuleLimit, xferDir, expected);
            accepted++;
        }

        @Override
        public String toString() {
            return name() + " (" + accepted + " SGLs accepted, " + rejected + " rejected with an SGL status)";
        }

        private void check(int dataLength, int inCapsuleLimit, int xferDir, int expected) {
            if (expected >= 0 && sgl.totalLength != expected) {
                throw new Escape("accepted length " + sgl.totalLength + " where " + expected + " was expected");
            }
            if (sgl.totalLength < 0 || sgl.totalLength > MDTS) {
                throw new Escape("accepted length " + sgl.totalLength + " beyond MDTS");
            }
            if (sgl.inCapsule) {
                if (xferDir != Request.XFER_H2C || sgl.inCapsuleOffset < 0 || sgl.totalLength > inCapsuleLimit
                    || (long) sgl.inCapsuleOffset + sgl.totalLength > dataLength) {
                    throw new Escape("accepted in-capsule range " + sgl.inCapsuleOffset + "+" + sgl.totalLength
                        + " outside " + dataLength + " bytes (limit " + inCapsuleLimit + ")");
                }
                return;
            }
            if (sgl.count < 1 || sgl.count > RdmaSgl.MSDBD) {
                throw new Escape("accepted " + sgl.count + " descriptors");
            }
            long sum = 0;
            for (int i = 0; i < sgl.count; i++) {
                if (sgl.length[i] < 0 || sgl.length[i] > 0xFFFFFF) {
                    throw new Escape("descriptor length " + sgl.length[i]);
                }
                sum += sgl.length[i];
            }
            if (sum != sgl.totalLength) {
                throw new Escape("descriptor lengths add up to " + sum + ", total says " + sgl.totalLength);
            }
        }

        private static byte[] validCapsule(SplittableRandom r) {
            int kind = r.nextInt(4);
            int descriptors = kind == 3 ? 1 + r.nextInt(RdmaSgl.MSDBD) : 0;
            int inCapsule = kind == 2 ? 512 * (1 + r.nextInt(8)) : 0;
            ByteBuffer b = ByteBuffer.allocate(64 + inCapsule + 16 * descriptors).order(ByteOrder.LITTLE_ENDIAN);
            b.put(0, (byte) (r.nextBoolean() ? 0x01 : 0x02)).put(1, (byte) 0x40);
            switch (kind) {
                case 0, 1 -> keyed(b, 24, r, kind == 0 ? io.nvmf4j.nvme.Sgl.KEYED_DATA_BLOCK
                    : io.nvmf4j.nvme.Sgl.KEYED_DATA_BLOCK_INVALIDATE);
                case 2 -> b.putLong(24, 0).putInt(32, inCapsule).put(39, (byte) io.nvmf4j.nvme.Sgl.DATA_BLOCK_OFFSET);
                default -> {
                    b.putLong(24, 0).putInt(32, 16 * descriptors).put(39, (byte) io.nvmf4j.nvme.Sgl.LAST_SEGMENT_OFFSET);
                    for (int i = 0; i < descriptors; i++) {
                        keyed(b, 64 + 16 * i, r, io.nvmf4j.nvme.Sgl.KEYED_DATA_BLOCK);
                    }
                }
            }
            return b.array();
        }

        private static void keyed(ByteBuffer b, int at, SplittableRandom r, int id) {
            int len = 4096 * (1 + r.nextInt(4));
            b.putLong(at, r.nextLong()).put(at + 8, (byte) len).put(at + 9, (byte) (len >>> 8))
                .put(at + 10, (byte) (len >>> 16)).putInt(at + 11, r.nextInt()).put(at + 15, (byte) id);
        }
    }

    /**
     * {@link CmPrivateData#negotiate} on a mutated RDMA_CM_REQUEST private data block with a random initiator
     * depth. Property: a reject carries a defined status; an accept is within every limit.
     */
    public static final class CmPrivateData implements FuzzTarget {
        private static final int MAX_IO_QUEUES = 8;
        private static final int MAX_DEPTH = 128;
        private static final int ADMIN_DEPTH = 32;
        private static final int DEVICE_DEPTH = 64;
        private static final int READ_DEPTH = 16;
        private long accepted;
        private long rejected;

        @Override
        public String toString() {
            return name() + " (" + accepted + " accepted, " + rejected + " rejected with a defined status)";
        }

        @Override
        public String name() {
            return "rdma-cm-private-data";
        }

        @Override
        public void run(long seed) {
            SplittableRandom r = new SplittableRandom(seed);
            int qid = r.nextInt(MAX_IO_QUEUES + 1);
            int max = qid == 0 ? ADMIN_DEPTH : MAX_DEPTH;
            int hsqsize = 1 + r.nextInt(max - 1);
            ByteBuffer valid = ByteBuffer.allocate(io.nvmf4j.transport.rdma.CmPrivateData.REQUEST_SIZE)
                .order(ByteOrder.LITTLE_ENDIAN).putShort(2, (short) qid).putShort(4, (short) (hsqsize + 1))
                .putShort(6, (short) hsqsize).putShort(8, (short) (qid == 0 ? 0xFFFF : r.nextInt(0x10000)));
            byte[] pd = Mutator.mutate(valid.array(), r, 96);
            ByteBuffer event = ByteBuffer.allocateDirect(pd.length + 8).position(4);
            event.put(pd).flip().position(4); // private data not at position 0 of its buffer, as from an event
            int ird = r.nextInt(4) == 0 ? 0 : 1 + r.nextInt(32);
            io.nvmf4j.transport.rdma.CmPrivateData.Negotiation n = io.nvmf4j.transport.rdma.CmPrivateData.negotiate(
                event, ird, MAX_IO_QUEUES, MAX_DEPTH, ADMIN_DEPTH, DEVICE_DEPTH, READ_DEPTH);
            if (!n.accepted()) {
                if (n.reject() < io.nvmf4j.transport.rdma.CmPrivateData.REJECT_INVALID_PRIVATE_DATA_LENGTH
                    || n.reject() > io.nvmf4j.transport.rdma.CmPrivateData.REJECT_INVALID_ORD) {
                    throw new Escape("undefined reject status " + n.reject());
                }
                rejected++;
                return;
            }
            int limit = n.qid() == 0 ? ADMIN_DEPTH : MAX_DEPTH;
            if (n.qid() > MAX_IO_QUEUES || n.depth() < 1 || n.depth() > Math.min(limit, DEVICE_DEPTH)
                || n.depth() > n.hsqsize() + 1 || n.depth() > n.hrqsize() || n.readDepth() < 1
                || n.readDepth() > READ_DEPTH || n.readDepth() > ird || pd.length < 32) {
                throw new Escape("accepted beyond a limit: " + n + " from " + pd.length + " bytes, IRD " + ird);
            }
            accepted++;
        }
    }
}
