package io.nvmf4j.cmd;

import io.netty.buffer.ByteBuf;
import io.nvmf4j.core.CommandHandler;
import io.nvmf4j.core.Controller;
import io.nvmf4j.core.Namespace;
import io.nvmf4j.core.Request;
import io.nvmf4j.core.Reservation;
import io.nvmf4j.core.ReservationNotices;
import io.nvmf4j.core.Subsystem;
import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.nvme.Opcodes;
import io.nvmf4j.nvme.Sqe;

import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;

/**
 * Reservation Register, Report, Acquire and Release on I/O queues, the access check every I/O command passes
 * ({@link #checkAccess}), the Reservation Notification Mask (82h) and Reservation Persistence (83h) features.
 * The state and its rules live in {@link Reservation}; this class decodes the commands, checks their
 * reserved fields and tells the other hosts' controllers what changed (log page 80h and its event).
 *
 * <pre>
 * Register data (16 B): CRKEY u64 | NRKEY u64      cdw10: RREGA 2:0, IEKEY 3, CPTPL 31:30
 * Acquire data  (16 B): CRKEY u64 | PRKEY u64      cdw10: RACQA 2:0, IEKEY 3, RTYPE 15:8
 * Release data  ( 8 B): CRKEY u64                  cdw10: RRELA 2:0, IEKEY 3, RTYPE 15:8
 * Report: cdw10 NUMD (0's based dwords), cdw11 bit 0 EDS
 * </pre>
 */
public final class ReservationCommands {
    /** Reservation status (extended): GEN u32 @0, RTYPE @4, REGCTL u16 @5, PTPLS @9; 64 B header. */
    static final int REPORT_HEADER_SIZE = 64;
    /** Registrant (extended): CNTLID u16 @0, RCSTS @2, RKEY u64 @8, HOSTID 16 B @16; 64 B each. */
    static final int REPORT_ENTRY_SIZE = 64;
    private static final int IEKEY = 1 << 3;
    /** cdw10 bits that must be zero: Register 29:4 (IEKEY aside), Acquire and Release 7:4 and 31:16. */
    private static final int REGISTER_RESERVED = 0x3FFFFFF0;
    private static final int ACQUIRE_RESERVED = 0xFFFF00F0;
    private static final int CPTPL_RESERVED = 1;

    private final CommandHandler register = this::executeRegister;
    private final CommandHandler acquire = this::executeAcquire;
    private final CommandHandler release = this::executeRelease;
    private final CommandHandler report = this::executeReport;

    static boolean isReservationCommand(int opcode) {
        return opcode == Opcodes.IO_RESERVATION_REGISTER || opcode == Opcodes.IO_RESERVATION_REPORT
            || opcode == Opcodes.IO_RESERVATION_ACQUIRE || opcode == Opcodes.IO_RESERVATION_RELEASE;
    }

    int parse(Request req) {
        // by the host's own view: a namespace masked from it is an inactive nsid, not one to register on
        Namespace ns = req.controller().subsystem().namespace(req.sqe.nsid(), req.controller().hostnqn());
        if (ns == null) {
            req.errorLocation = Sqe.NSID;
            return NvmeStatus.INVALID_NAMESPACE;
        }
        if (!ns.reservationsOn()) {
            req.errorLocation = Sqe.OPCODE; // RESCAP 0: no state shared with the other instances that export it
            return NvmeStatus.INVALID_OPCODE;
        }
        int cdw10 = req.sqe.cdw10();
        req.ns = ns;
        switch (req.sqe.opcode()) {
            case Opcodes.IO_RESERVATION_REGISTER -> {
                if ((cdw10 & REGISTER_RESERVED) != 0 || (cdw10 >>> 30) == CPTPL_RESERVED) {
                    req.errorLocation = Sqe.CDW10;
                    return NvmeStatus.INVALID_FIELD;
                }
                return data(req, register, Request.XFER_H2C, 16);
            }
            case Opcodes.IO_RESERVATION_ACQUIRE -> {
                return checkAcquireRelease(req, cdw10) ? data(req, acquire, Request.XFER_H2C, 16)
                    : NvmeStatus.INVALID_FIELD;
            }
            case Opcodes.IO_RESERVATION_RELEASE -> {
                return checkAcquireRelease(req, cdw10) ? data(req, release, Request.XFER_H2C, 8)
                    : NvmeStatus.INVALID_FIELD;
            }
            default -> {
                if ((req.sqe.cdw11() & ~1) != 0) {
                    req.errorLocation = Sqe.CDW11;
                    return NvmeStatus.INVALID_FIELD;
                }
                long bytes = 4L * (Integer.toUnsignedLong(cdw10) + 1);
                if (bytes > req.queue().limits().mdtsBytes()) {
                    req.errorLocation = Sqe.CDW10;
                    return NvmeStatus.INVALID_FIELD;
                }
                return data(req, report, Request.XFER_C2H, (int) bytes);
            }
        }
    }

    /** IEKEY is reserved for Acquire and Release (RESCAP bit 7: the 1.3 meaning), as are cdw10 7:4, 31:16. */
    private static boolean checkAcquireRelease(Request req, int cdw10) {
        if ((cdw10 & (ACQUIRE_RESERVED | IEKEY)) != 0) {
            req.errorLocation = Sqe.CDW10;
            return false;
        }
        return true;
    }

    private static int data(Request req, CommandHandler h, int dir, int length) {
        req.handler = h;
        req.xferDir = dir;
        req.expectedLength = length;
        return NvmeStatus.SUCCESS;
    }

    /**
     * The reservation check of an I/O command about to run: {@link NvmeStatus#SUCCESS} or Reservation Conflict.
     * Read group: Read, Compare; write group: Write, Write Zeroes, Dataset Management, Flush. The reservation
     * commands check their own rules. No allocation.
     */
    static int checkAccess(Request req) {
        int opcode = req.sqe.opcode();
        boolean write;
        switch (opcode) {
            case Opcodes.IO_READ, Opcodes.IO_COMPARE -> write = false;
            case Opcodes.IO_WRITE, Opcodes.IO_WRITE_ZEROES, Opcodes.IO_DATASET_MANAGEMENT, Opcodes.IO_FLUSH ->
                write = true;
            default -> {
                return NvmeStatus.SUCCESS;
            }
        }
        Controller c = req.controller();
        return req.ns.reservation().checkAccess(c.hostIdHi(), c.hostIdLo(), write);
    }

    // ---- commands ----

    private void executeRegister(Request req) {
        int cdw10 = req.sqe.cdw10();
        Controller c = req.controller();
        long crkey = req.data.getLongLE(0);
        long nrkey = req.data.getLongLE(8);
        change(req, false, notices -> req.ns.reservation().register(c.hostIdHi(), c.hostIdLo(), cdw10 & 0x7,
            (cdw10 & IEKEY) != 0, crkey, nrkey, cdw10 >>> 30, notices));
    }

    private void executeAcquire(Request req) {
        int cdw10 = req.sqe.cdw10();
        int rtype = (cdw10 >>> 8) & 0xFF;
        if (!Reservation.validType(rtype)) {
            req.fail(NvmeStatus.INVALID_FIELD, Sqe.CDW10 + 1);
            return;
        }
        Controller c = req.controller();
        long crkey = req.data.getLongLE(0);
        long prkey = req.data.getLongLE(8);
        int action = cdw10 & 0x7;
        change(req, action == Reservation.PREEMPT_AND_ABORT, notices -> req.ns.reservation().acquire(c.hostIdHi(),
            c.hostIdLo(), action, rtype, crkey, prkey, notices));
    }

    private void executeRelease(Request req) {
        int cdw10 = req.sqe.cdw10();
        Controller c = req.controller();
        long crkey = req.data.getLongLE(0);
        change(req, false, notices -> req.ns.reservation().release(c.hostIdHi(), c.hostIdLo(), cdw10 & 0x7,
            (cdw10 >>> 8) & 0xFF, crkey, notices));
    }

    /** One change of the reservation state: returns its status and adds the notices it causes. */
    @FunctionalInterface
    interface Change {
        int apply(List<Reservation.Notice> notices);
    }

    /**
     * Runs a change of the reservation of {@code req.ns}, then completes {@code req} on its queue's thread. With a
     * store (PTPL possible) the change runs on the reservation's executor (one at a time per namespace, namespaces side
     * by side), because writing the state means an fsync, or on an rbd image the other gateways' acknowledgements,
     * that would stall every queue of this poll group. {@code abort} (Preempt and Abort): once the change succeeded the
     * command completes only after every command that was already executing on the namespace has completed
     * ({@link Namespace#fence}), so nothing of a preempted host lands after the preempt (nvmet's
     * nvmet_pr_do_abort waits the same way; commands not yet executed meet the new state and are refused).
     */
    private static void change(Request req, boolean abort, Change change) {
        Namespace ns = req.ns;
        if (!ns.reservation().persistenceSupported()) {
            List<Reservation.Notice> notices = new ArrayList<>(2);
            finish(req, change.apply(notices), notices, abort);
            return;
        }
        // counted for the namespace's removal but not for its fences (Namespace#holdForChange)
        req.holdNamespaceForChange();
        try {
            ns.reservation().executor().execute(() -> {
                List<Reservation.Notice> notices = new ArrayList<>(2);
                int status;
                try {
                    status = change.apply(notices);
                } catch (RuntimeException e) {
                    LoggerFactory.getLogger(ReservationCommands.class).error("reservation change failed", e);
                    status = NvmeStatus.INTERNAL_ERROR;
                } finally {
                    ns.releaseChange();
                }
                int st = status;
                back(req, () -> finish(req, st, notices, abort));
            });
        } catch (RejectedExecutionException e) {
            ns.releaseChange();
            req.fail(NvmeStatus.INTERNAL_ERROR, Sqe.OPCODE);
        }
    }

    /** Runs {@code step} on the queue's thread; a stopped poll group ends the command as aborted there. */
    private static void back(Request req, Runnable step) {
        try {
            req.queue().executor().execute(step);
        } catch (RejectedExecutionException e) {
            // the queue's poll group stopped: its commands are gone with it
        }
    }

    /** Tells every controller of each notified host (its event on its admin thread), then completes. */
    private static void finish(Request req, int status, List<Reservation.Notice> notices, boolean abort) {
        if (status != NvmeStatus.SUCCESS) {
            req.fail(status, Sqe.CDW10);
            return;
        }
        req.controller().subsystem().reservationNotices(req.ns.nsid(), notices);
        if (!abort) {
            req.complete(status);
            return;
        }
        Namespace ns = req.ns;
        req.releaseNamespace(); // this command's own count must not hold up its fence
        ns.fence(req.queue().executor(), () -> req.complete(NvmeStatus.SUCCESS));
    }

    private void executeReport(Request req) {
        if ((req.sqe.cdw11() & 1) == 0) {
            // fabrics host identifiers are 128-bit: only the extended data structure can carry them
            req.fail(Reservation.HOST_ID_INCONSISTENT_FORMAT, Sqe.CDW11);
            return;
        }
        Reservation.State s = req.ns.reservation().state();
        ByteBuf d = req.data;
        int length = req.dataLength;
        d.setZero(0, length);
        if (length >= 10) {
            d.setIntLE(0, s.generation);
            d.setByte(4, s.rtype);
            d.setShortLE(5, s.registrants());
            d.setByte(9, s.ptpl ? 1 : 0);
        }
        for (int i = 0; i < s.registrants(); i++) {
            int off = REPORT_HEADER_SIZE + i * REPORT_ENTRY_SIZE;
            if (off + REPORT_ENTRY_SIZE > length) {
                break; // REGCTL still counts every registrant
            }
            d.setShortLE(off, 0xFFFF); // dynamic controllers: the registration is the host's, not one cntlid's
            d.setByte(off + 2, s.holds(i) ? 1 : 0);
            d.setLongLE(off + 8, s.key(i));
            d.setLong(off + 16, s.hostHi(i));
            d.setLong(off + 24, s.hostLo(i));
        }
        req.complete(NvmeStatus.SUCCESS);
    }

    // ---- features 82h (Reservation Notification Mask) and 83h (Reservation Persistence) ----

    /** Set Features 82h / 83h; returns the status (dw0 set on success), or {@link #PENDING} (83h). */
    static int setFeature(Request req, int fid) {
        Controller c = req.controller();
        Subsystem s = c.subsystem();
        int nsid = req.sqe.nsid();
        int cdw11 = req.sqe.cdw11();
        if (fid == Opcodes.FID_RESERVATION_NOTIFICATION_MASK) {
            if ((cdw11 & ~ReservationNotices.MASK_VALID) != 0) {
                req.errorLocation = Sqe.CDW11;
                return NvmeStatus.INVALID_FIELD;
            }
            if (nsid == -1) {
                for (Namespace ns : s.namespaces(c.hostnqn())) {
                    c.reservationNotices().setMask(ns.nsid(), cdw11);
                }
            } else if (s.namespace(nsid, c.hostnqn()) == null) {
                req.errorLocation = Sqe.NSID;
                return NvmeStatus.INVALID_NAMESPACE;
            } else {
                c.reservationNotices().setMask(nsid, cdw11);
            }
            req.dw0 = cdw11;
            return NvmeStatus.SUCCESS;
        }
        Namespace ns = s.namespace(nsid, c.hostnqn());
        if (ns == null) {
            req.errorLocation = Sqe.NSID;
            return nsid == -1 ? NvmeStatus.INVALID_FIELD : NvmeStatus.INVALID_NAMESPACE;
        }
        if (!ns.reservationsOn()) {
            req.errorLocation = Sqe.NSID; // no reservations on this namespace, so nothing to persist
            return NvmeStatus.INVALID_FIELD;
        }
        if ((cdw11 & ~1) != 0) {
            req.errorLocation = Sqe.CDW11;
            return NvmeStatus.INVALID_FIELD;
        }
        if ((cdw11 & 1) != 0 && !ns.reservation().persistenceSupported()) {
            req.errorLocation = Sqe.CDW11; // PTPL without a state directory to keep it in
            return NvmeStatus.INVALID_FIELD;
        }
        req.dw0 = cdw11 & 1;
        req.ns = ns; // not held: the feature does not touch the device
        change(req, false, notices -> ns.reservation().setPersistThroughPowerLoss((cdw11 & 1) != 0));
        return PENDING;
    }

    /** {@link #setFeature}: the command completes by itself later (the state is being written). */
    static final int PENDING = -1;

    /** Get Features 82h / 83h (current value; also for SEL default and saved, which are the same here). */
    static int getFeature(Request req, int fid) {
        Controller c = req.controller();
        Namespace ns = c.subsystem().namespace(req.sqe.nsid(), c.hostnqn());
        if (ns == null) {
            req.errorLocation = Sqe.NSID;
            return NvmeStatus.INVALID_NAMESPACE;
        }
        if (fid == Opcodes.FID_RESERVATION_PERSISTENCE && !ns.reservationsOn()) {
            req.errorLocation = Sqe.NSID;
            return NvmeStatus.INVALID_FIELD;
        }
        req.dw0 = fid == Opcodes.FID_RESERVATION_NOTIFICATION_MASK ? c.reservationNotices().mask(ns.nsid())
            : ns.reservation().state().ptpl ? 1 : 0;
        return NvmeStatus.SUCCESS;
    }

    /** Get Log Page 80h: the oldest notification (taking it off the queue), or an empty page. */
    static ByteBuf notificationPage(Controller c, ByteBuf b) {
        long[] p = c.reservationNotices().take();
        b.setLongLE(0, p[0]);
        b.setByte(8, (int) p[1]);
        b.setByte(9, (int) p[3]);
        b.setIntLE(12, (int) p[2]);
        return b;
    }
}
