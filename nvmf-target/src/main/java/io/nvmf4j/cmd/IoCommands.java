package io.nvmf4j.cmd;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.nvmf4j.bdev.BlockDevice;
import io.nvmf4j.bdev.DiscardLimits;
import io.nvmf4j.core.CommandHandler;
import io.nvmf4j.core.Namespace;
import io.nvmf4j.core.Request;
import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.nvme.Opcodes;
import io.nvmf4j.nvme.Sqe;

/**
 * NVM command set on I/O queues: Read, Write, Flush, Write Zeroes, Dataset Management (deallocate),
 * Compare. Parsing resolves the namespace, checks the LBA range and MDTS and fixes the transfer
 * length before any data moves; handlers only drive the block device.
 */
public final class IoCommands {
    private static final int DSM_RANGE_SIZE = 16;
    private static final int DSM_ATTR_DEALLOCATE = 1 << 2;
    /** Write and Write Zeroes CDW12 bit 30: Force Unit Access. */
    static final int CDW12_FUA = 1 << 30;
    /** Write Zeroes CDW12 bit 25: Deallocate (the blocks may be freed, if reads of them return zeros). */
    static final int CDW12_DEAC = 1 << 25;
    /** Error location of the data SGL's length field. */
    private static final int SGL_LENGTH_LOCATION = Sqe.SGL1 + 8;
    /**
     * Largest piece of a range handed at once to a device that completes synchronously (malloc: a memset on
     * the poll thread), so one call stays well under a millisecond.
     */
    static final long SYNC_PIECE_BYTES = 4L << 20;
    /** Largest piece for a device that completes asynchronously (its own threads do the work). */
    static final long ASYNC_PIECE_BYTES = 1L << 30;
    /**
     * Poll-thread time one step of a long command may take before it yields: the rest runs from the queue's
     * task queue, after the other queues of the poll group had their turn (keep-alive timers included).
     */
    static final long STEP_BUDGET_NANOS = 500_000;
    /** A synchronous piece faster than this doubles the next piece (up to {@link #ASYNC_PIECE_BYTES}). */
    static final long PIECE_GROWTH_NANOS = 50_000;

    /** What a stepped command does with each piece of its ranges. */
    private static final int STEPS_DEALLOCATE_RANGES = 0;
    private static final int STEPS_WRITE_ZEROES = 1;
    private static final int STEPS_DEALLOCATE_ZEROES = 2;

    private final CommandHandler read = this::executeRead;
    private final CommandHandler write = this::executeWrite;
    private final CommandHandler flush = this::executeFlush;
    private final CommandHandler writeZeroes = this::executeWriteZeroes;
    private final CommandHandler dsm = this::executeDatasetManagement;
    private final CommandHandler compare = this::executeCompare;
    private final Request.BdevStep dsmNext = (req, status) -> step(req, status, STEPS_DEALLOCATE_RANGES);
    private final Request.BdevStep zeroesNext = (req, status) -> step(req, status, STEPS_WRITE_ZEROES);
    private final Request.BdevStep zeroesByDeallocateNext = (req, status) -> step(req, status, STEPS_DEALLOCATE_ZEROES);
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
        Namespace ns = req.controller().subsystem().namespace(req.sqe.nsid(), req.controller().hostnqn());
        if (ns == null) { // no such namespace, or masked from this host
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
                // at least (NR + 1) x 16 bytes (the handler checks): Linux hosts send a whole 4 KiB page
                req.xferDir = Request.XFER_H2C;
                req.expectedLength = -1;
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
        } else {
            req.errorLba = req.sqe.slba(); // the Error log's LBA: where the device failed
        }
        req.complete(status);
    }

    private void executeWrite(Request req) {
        int sticky = req.ns.bdev().stickyErrorStatus();
        if (sticky != NvmeStatus.SUCCESS) {
            req.complete(sticky); // an earlier write-back failed: acknowledged data may be gone
            return;
        }
        setRange(req);
        req.bdevFua = (req.sqe.cdw12() & CDW12_FUA) != 0;
        req.bdevStep = writeDone;
        req.ns.bdev().write(req);
    }

    private void writeDone(Request req, int status) {
        if (status == NvmeStatus.SUCCESS) {
            req.ns.writeCommands.increment();
            req.ns.bytesWritten.add(req.bdevLength);
        } else {
            req.errorLba = req.sqe.slba();
        }
        req.complete(status);
    }

    private void executeFlush(Request req) {
        int sticky = req.ns.bdev().stickyErrorStatus();
        if (sticky != NvmeStatus.SUCCESS) {
            req.complete(sticky);
            return;
        }
        req.ns.bdev().flush(req);
    }

    /** Write Zeroes, in bounded pieces; with DEAC as a deallocate where the device reads those back as zeros. */
    private void executeWriteZeroes(Request req) {
        BlockDevice bdev = req.ns.bdev();
        int sticky = bdev.stickyErrorStatus();
        if (sticky != NvmeStatus.SUCCESS) {
            req.complete(sticky);
            return;
        }
        req.bdevFua = (req.sqe.cdw12() & CDW12_FUA) != 0;
        DiscardLimits limits = bdev.discardLimits();
        boolean byDeallocate = (req.sqe.cdw12() & CDW12_DEAC) != 0 && limits.deallocate() && limits.readsZeroes()
            && limits.writeZeroesFrees();
        startSteps(req, byDeallocate ? zeroesByDeallocateNext : zeroesNext);
    }

    // ---- Dataset Management: deallocate range after range, in bounded steps ----

    private void executeDatasetManagement(Request req) {
        int ranges = (req.sqe.cdw10() & 0xFF) + 1;
        if (req.dataLength < ranges * DSM_RANGE_SIZE) {
            req.fail(NvmeStatus.DATA_SGL_LENGTH_INVALID, SGL_LENGTH_LOCATION);
            return;
        }
        if ((req.sqe.cdw11() & DSM_ATTR_DEALLOCATE) == 0) {
            req.complete(NvmeStatus.SUCCESS); // integral read/write hints only: advisory
            return;
        }
        DiscardLimits limits = req.ns.bdev().discardLimits();
        if (ranges > limits.maxRanges()) {
            req.fail(NvmeStatus.INVALID_FIELD, Sqe.CDW10); // beyond DMRL
            return;
        }
        long total = 0;
        for (int i = 0; i < ranges; i++) {
            long slba = rangeSlba(req, i);
            long nlb = rangeNlb(req, i);
            if (outOfRange(slba, nlb, req.ns.numBlocks())) {
                req.errorLba = slba;
                req.fail(NvmeStatus.LBA_OUT_OF_RANGE, Sqe.CDW10);
                return;
            }
            if (limits.maxRangeBlocks() != 0 && nlb > limits.maxRangeBlocks()) {
                req.errorLba = slba;
                req.fail(NvmeStatus.INVALID_FIELD, SGL_LENGTH_LOCATION); // a range beyond DMRSL
                return;
            }
            total += nlb;
        }
        if (limits.maxTotalBlocks() != 0 && total > limits.maxTotalBlocks()) {
            req.fail(NvmeStatus.INVALID_FIELD, SGL_LENGTH_LOCATION); // beyond DMSL
            return;
        }
        if (!limits.deallocate()) {
            req.complete(NvmeStatus.SUCCESS); // nothing to free; reads are as they were (DLFEAT 000b)
            return;
        }
        startSteps(req, dsmNext);
    }

    private static long rangeSlba(Request req, int i) {
        return req.data.getLongLE(i * DSM_RANGE_SIZE + 8);
    }

    private static long rangeNlb(Request req, int i) {
        return req.data.getUnsignedIntLE(i * DSM_RANGE_SIZE + 4);
    }

    // ---- stepped commands (Dataset Management, Write Zeroes) ----

    private static void startSteps(Request req, Request.BdevStep next) {
        req.step = 0;
        req.cursor = 0;
        req.pieceBytes = SYNC_PIECE_BYTES;
        req.bdevStep = next;
        next.done(req, NvmeStatus.SUCCESS);
    }

    /**
     * Runs a command over its ranges piece by piece: for {@link #STEP_BUDGET_NANOS} of poll-thread time, then
     * it yields ({@link Request#yieldStep}) and goes on from the queue's task queue. Synchronous devices
     * complete inside the submit call; those completions are picked up by the loop rather than by recursion,
     * so thousands of pieces do not grow the stack. A device that completes asynchronously gets larger
     * pieces (its own threads do the work), and so does one that did a piece in next to no time; a memset of
     * {@link #SYNC_PIECE_BYTES} takes longer than that. A namespace removed meanwhile ends the command at the
     * next piece, and so does one whose controller was torn down.
     */
    private void step(Request req, int status, int mode) {
        if (req.submitting) {
            req.completedInline = true;
            req.inlineStatus = status;
            return;
        }
        int ranges = mode == STEPS_DEALLOCATE_RANGES ? (req.sqe.cdw10() & 0xFF) + 1 : 1;
        int bs = req.ns.blockSize();
        long stepStart = System.nanoTime();
        long now = stepStart;
        while (status == NvmeStatus.SUCCESS && req.step < ranges) {
            long slba = mode == STEPS_DEALLOCATE_RANGES ? rangeSlba(req, req.step) : req.sqe.slba();
            long end = slba + (mode == STEPS_DEALLOCATE_RANGES ? rangeNlb(req, req.step) : req.sqe.nlb());
            if (req.cursor < slba) {
                req.cursor = slba;
            }
            if (req.cursor >= end) {
                req.step++;
                req.cursor = 0;
                continue;
            }
            if (req.ns.isRemoved()) {
                status = NvmeStatus.INVALID_NAMESPACE;
                break;
            }
            if (req.controller().isDestroyed()) {
                status = NvmeStatus.ABORTED_SQ_DELETION; // the host is gone: nobody waits for the rest
                break;
            }
            if (now - stepStart > STEP_BUDGET_NANOS) {
                req.yieldStep();
                return;
            }
            long blocks = Math.min(end - req.cursor, req.pieceBytes / bs);
            req.bdevOffset = req.cursor * bs;
            req.bdevLength = (int) (blocks * bs);
            req.cursor += blocks;
            req.submitting = true;
            req.completedInline = false;
            if (mode == STEPS_WRITE_ZEROES) {
                req.ns.bdev().writeZeroes(req);
            } else {
                req.ns.bdev().deallocate(req);
            }
            req.submitting = false;
            if (!req.completedInline) {
                req.pieceBytes = ASYNC_PIECE_BYTES;
                return; // an asynchronous device calls back into this method
            }
            status = req.inlineStatus;
            long pieceStart = now;
            now = System.nanoTime();
            if (now - pieceStart < PIECE_GROWTH_NANOS && req.pieceBytes < ASYNC_PIECE_BYTES) {
                req.pieceBytes <<= 1; // the device did next to no work for it (null): larger pieces
            }
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
