package io.nvmf4j.cmd;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.nvmf4j.core.CommandHandler;
import io.nvmf4j.core.Namespace;
import io.nvmf4j.core.Request;
import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.nvme.Opcodes;

/**
 * NVM command set on I/O queues: Read, Write, Flush, Write Zeroes, Dataset Management (deallocate),
 * Compare. Parsing resolves the namespace, checks the LBA range and MDTS and fixes the transfer
 * length before any data moves; handlers only drive the block device.
 */
public final class IoCommands {
    private static final int DSM_RANGE_SIZE = 16;
    private static final int DSM_ATTR_DEALLOCATE = 1 << 2;
    /** Largest piece of one deallocate range handed to the device at once (ranges may span 2^32 blocks). */
    private static final long DEALLOCATE_CHUNK = 1L << 30;

    private final CommandHandler read = this::executeRead;
    private final CommandHandler write = this::executeWrite;
    private final CommandHandler flush = this::executeFlush;
    private final CommandHandler writeZeroes = this::executeWriteZeroes;
    private final CommandHandler dsm = this::executeDatasetManagement;
    private final CommandHandler compare = this::executeCompare;
    private final Request.BdevStep dsmNext = this::dsmRangeDone;
    private final Request.BdevStep compareRead = this::compareReadDone;
    private final Request.BdevStep readDone = this::readDone;
    private final Request.BdevStep writeDone = this::writeDone;

    int parse(Request req) {
        int opcode = req.sqe.opcode();
        CommandHandler h = switch (opcode) {
            case Opcodes.IO_READ -> read;
            case Opcodes.IO_WRITE -> write;
            case Opcodes.IO_FLUSH -> flush;
            case Opcodes.IO_WRITE_ZEROES -> writeZeroes;
            case Opcodes.IO_DATASET_MANAGEMENT -> dsm;
            case Opcodes.IO_COMPARE -> compare;
            default -> null;
        };
        if (h == null) {
            return NvmeStatus.INVALID_OPCODE;
        }
        Namespace ns = req.controller().subsystem().namespace(req.sqe.nsid());
        if (ns == null) {
            req.errorLocation = 4;
            return NvmeStatus.INVALID_NAMESPACE;
        }
        req.ns = ns;
        req.handler = h;
        switch (opcode) {
            case Opcodes.IO_READ, Opcodes.IO_WRITE, Opcodes.IO_COMPARE -> {
                int status = checkRange(req, ns);
                if (status != NvmeStatus.SUCCESS) {
                    return status;
                }
                long bytes = (long) req.sqe.nlb() * ns.blockSize();
                if (bytes > req.queue().limits().mdtsBytes()) {
                    req.errorLocation = 48;
                    return NvmeStatus.INVALID_FIELD;
                }
                req.xferDir = opcode == Opcodes.IO_READ ? Request.XFER_C2H : Request.XFER_H2C;
                req.expectedLength = (int) bytes;
            }
            case Opcodes.IO_WRITE_ZEROES -> {
                return checkRange(req, ns);
            }
            case Opcodes.IO_DATASET_MANAGEMENT -> {
                req.xferDir = Request.XFER_H2C;
                req.expectedLength = ((req.sqe.cdw10() & 0xFF) + 1) * DSM_RANGE_SIZE;
            }
            default -> {
                // flush: no data
            }
        }
        return NvmeStatus.SUCCESS;
    }

    private static int checkRange(Request req, Namespace ns) {
        long slba = req.sqe.slba();
        int nlb = req.sqe.nlb();
        if (outOfRange(slba, nlb, ns.numBlocks())) {
            req.errorLocation = 40;
            req.errorLba = slba;
            return NvmeStatus.LBA_OUT_OF_RANGE;
        }
        return NvmeStatus.SUCCESS;
    }

    /** slba + nlb > numBlocks, without overflow for any 64-bit slba. */
    static boolean outOfRange(long slba, long nlb, long numBlocks) {
        return slba < 0 || nlb > numBlocks || slba > numBlocks - nlb;
    }

    private static void setRange(Request req) {
        Namespace ns = req.ns;
        req.bdevOffset = req.sqe.slba() * ns.blockSize();
        req.bdevLength = req.sqe.nlb() * ns.blockSize();
        req.bdevBuffer = req.data;
    }

    private void executeRead(Request req) {
        setRange(req);
        req.bdevStep = readDone;
        req.ns.bdev().read(req);
    }

    private void readDone(Request req, int status) {
        if (status == NvmeStatus.SUCCESS) {
            req.ns.readCommands.increment();
            req.ns.bytesRead.add(req.bdevLength);
        }
        req.complete(status);
    }

    private void executeWrite(Request req) {
        setRange(req);
        req.bdevStep = writeDone;
        req.ns.bdev().write(req);
    }

    private void writeDone(Request req, int status) {
        if (status == NvmeStatus.SUCCESS) {
            req.ns.writeCommands.increment();
            req.ns.bytesWritten.add(req.bdevLength);
        }
        req.complete(status);
    }

    private void executeFlush(Request req) {
        req.ns.bdev().flush(req);
    }

    private void executeWriteZeroes(Request req) {
        setRange(req);
        req.ns.bdev().writeZeroes(req);
    }

    // ---- Dataset Management: one deallocate per range, in order ----

    private void executeDatasetManagement(Request req) {
        if ((req.sqe.cdw11() & DSM_ATTR_DEALLOCATE) == 0) {
            req.complete(NvmeStatus.SUCCESS); // integral read/write hints only: advisory
            return;
        }
        int ranges = (req.sqe.cdw10() & 0xFF) + 1;
        for (int i = 0; i < ranges; i++) {
            long slba = req.data.getLongLE(i * DSM_RANGE_SIZE + 8);
            long nlb = req.data.getUnsignedIntLE(i * DSM_RANGE_SIZE + 4);
            if (outOfRange(slba, nlb, req.ns.numBlocks())) {
                req.errorLba = slba;
                req.fail(NvmeStatus.LBA_OUT_OF_RANGE, 40);
                return;
            }
        }
        req.step = 0;
        req.cursor = 0;
        req.bdevStep = dsmNext;
        dsmRangeDone(req, NvmeStatus.SUCCESS);
    }

    /**
     * Deallocates range after range; a range larger than {@link #DEALLOCATE_CHUNK} bytes goes in pieces.
     * Synchronous devices complete inside the submit call; those completions are picked up by the loop
     * rather than by recursion, so thousands of pieces do not grow the stack.
     */
    private void dsmRangeDone(Request req, int status) {
        if (req.submitting) {
            req.completedInline = true;
            req.inlineStatus = status;
            return;
        }
        int ranges = (req.sqe.cdw10() & 0xFF) + 1;
        int bs = req.ns.blockSize();
        while (status == NvmeStatus.SUCCESS && req.step < ranges) {
            long slba = req.data.getLongLE(req.step * DSM_RANGE_SIZE + 8);
            long end = slba + req.data.getUnsignedIntLE(req.step * DSM_RANGE_SIZE + 4);
            if (req.cursor < slba) {
                req.cursor = slba;
            }
            if (req.cursor >= end) {
                req.step++;
                req.cursor = 0;
                continue;
            }
            long blocks = Math.min(end - req.cursor, DEALLOCATE_CHUNK / bs);
            req.bdevOffset = req.cursor * bs;
            req.bdevLength = (int) (blocks * bs);
            req.cursor += blocks;
            req.submitting = true;
            req.completedInline = false;
            req.ns.bdev().deallocate(req);
            req.submitting = false;
            if (!req.completedInline) {
                return; // an asynchronous device calls back into this method
            }
            status = req.inlineStatus;
        }
        req.complete(status);
    }

    // ---- Compare: read the range into a second buffer, then compare bytes ----

    private void executeCompare(Request req) {
        setRange(req);
        req.aux = PooledByteBufAllocator.DEFAULT.directBuffer(req.bdevLength);
        req.bdevBuffer = req.aux;
        req.bdevStep = compareRead;
        req.ns.bdev().read(req);
    }

    private static boolean sameBytes(ByteBuf a, ByteBuf b, int length) {
        int i = 0;
        for (; i + 8 <= length; i += 8) {
            if (a.getLong(i) != b.getLong(i)) {
                return false;
            }
        }
        for (; i < length; i++) {
            if (a.getByte(i) != b.getByte(i)) {
                return false;
            }
        }
        return true;
    }

    private void compareReadDone(Request req, int status) {
        if (status != NvmeStatus.SUCCESS) {
            req.complete(status);
            return;
        }
        boolean equal = sameBytes(req.aux, req.data, req.bdevLength);
        if (!equal) {
            req.errorLba = req.sqe.slba();
        }
        req.complete(equal ? NvmeStatus.SUCCESS : NvmeStatus.COMPARE_FAILURE);
    }

}
