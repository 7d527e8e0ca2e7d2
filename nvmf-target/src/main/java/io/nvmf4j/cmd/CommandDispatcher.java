package io.nvmf4j.cmd;

import io.nvmf4j.core.Controller;
import io.nvmf4j.core.Namespace;
import io.nvmf4j.core.Request;
import io.nvmf4j.core.Target;
import io.nvmf4j.core.ThrottledRequests;
import io.nvmf4j.qos.NamespaceQos;
import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.nvme.Opcodes;
import io.nvmf4j.nvme.Sqe;

/**
 * Parses a command by queue state, then opcode: with no controller only Connect is allowed, qid 0 is
 * the admin queue (I/O or discovery controller), everything else is I/O. Parsing has no side effect
 * beyond the request's own fields: it picks the handler, the data direction and the transfer length,
 * or returns the status to fail with.
 */
public final class CommandDispatcher {
    private final FabricsCommands fabrics;
    private final AdminCommands admin;
    private final IoCommands io;
    private final ReservationCommands reservations = new ReservationCommands();

    private final Target target;
    /** Runs a command QoS held back again, from the start (one object for every park). */
    private final java.util.function.Consumer<Request> resumeThrottled = this::execute;

    public CommandDispatcher(Target target) {
        this.target = target;
        this.fabrics = new FabricsCommands(target);
        this.admin = new AdminCommands(new LogPages(target));
        this.io = new IoCommands();
    }

    /** The target whose commands this dispatches (transports look up subsystems and host keys in it). */
    public Target target() {
        return target;
    }

    public int parse(Request req) {
        int opcode = req.sqe.opcode();
        if (req.sqe.fuse() != 0 || req.sqe.psdt() != Sqe.PSDT_SGL) {
            // fabrics: no fused commands, and SGLs (PSDT 01b) for every command, as nvmet_req_init demands
            req.errorLocation = Sqe.FLAGS;
            return NvmeStatus.INVALID_FIELD;
        }
        Controller c = req.queue().controller();
        if (c == null) {
            if (opcode == Opcodes.FABRICS && req.sqe.fctype() == Opcodes.FCTYPE_CONNECT) {
                if (req.queue().connectInProgress() == null) {
                    req.queue().connectInProgress(req); // the first Connect claims the queue; see executeConnect
                }
                return fabrics.parseConnect(req);
            }
            return NvmeStatus.COMMAND_SEQUENCE_ERROR;
        }
        if (opcode == Opcodes.FABRICS) {
            return fabrics.parse(req);
        }
        if (!c.authenticated(req.queue().qid())) {
            // until DH-HMAC-CHAP succeeds on this queue only Fabrics commands run (nvmet_check_auth_status)
            return NvmeStatus.AUTH_REQUIRED;
        }
        // the transport read the clock when the command arrived (Request.startNanos): no second reading
        c.touch(req.startNanos != 0 ? req.startNanos : System.nanoTime());
        if (req.queue().qid() == 0) {
            if (!c.enabledAndReady() && opcode != Opcodes.ADMIN_KEEP_ALIVE) {
                return NvmeStatus.COMMAND_SEQUENCE_ERROR;
            }
            return admin.parse(req);
        }
        if (!c.enabledAndReady()) {
            return NvmeStatus.COMMAND_SEQUENCE_ERROR;
        }
        if (ReservationCommands.isReservationCommand(opcode)) {
            return reservations.parse(req);
        }
        return io.parse(req);
    }

    /** Runs the handler chosen by {@link #parse}; the transport calls it once the data is in place. */
    public void execute(Request req) {
        Namespace ns = req.ns;
        if (ns != null) {
            // removed (or masked from this host) while its data was on the way, or the controller is being torn
            // down or reset: nothing reaches the device
            int counted = req.controller().subsystem().namespace(req.sqe.nsid(), req.controller().hostnqn()) != ns
                ? NvmeStatus.INVALID_NAMESPACE : req.countIn();
            if (counted != NvmeStatus.SUCCESS) {
                req.fail(counted, counted == NvmeStatus.INVALID_NAMESPACE ? Sqe.NSID : Request.NO_ERROR_LOCATION);
                return;
            }
            int path = req.controller().ana().state(ns.anaGroup()).ioStatus();
            if (path != NvmeStatus.SUCCESS) {
                // the namespace's ANA group is not accessible through this listener: the host fails over
                req.fail(path, Sqe.NSID);
                return;
            }
            int access = ReservationCommands.checkAccess(req);
            if (access != NvmeStatus.SUCCESS) {
                req.fail(access, Sqe.OPCODE); // another host's reservation fences this one out
                return;
            }
            if (ns.writesHeld() && changesMedium(req.sqe.opcode()) && park(req, ns)) {
                return;
            }
            NamespaceQos qos = ns.qos();
            if (qos != null && req.qosTaken != qos && throttle(req, ns, qos)) {
                return;
            }
        }
        req.handler.execute(req);
    }

    /**
     * Takes the command's budget from the QoS of its namespace (in arrival order, shared by every poll group); when
     * the budget is not there yet the command waits on its queue ({@link ThrottledRequests}) with its counts given
     * back, and executes again from the start when it is. Admin and reservation commands do not touch the device and
     * pass.
     */
    private boolean throttle(Request req, Namespace ns, NamespaceQos qos) {
        int opcode = req.sqe.opcode();
        req.qosTaken = qos;
        if (req.queue().qid() == 0 || ReservationCommands.isReservationCommand(opcode)) {
            return false;
        }
        boolean read = opcode == Opcodes.IO_READ || opcode == Opcodes.IO_COMPARE;
        long bytes = read || opcode == Opcodes.IO_WRITE
            ? ((req.sqe.cdw12() & 0xFFFFL) + 1) * ns.blockSize() : 0;
        long now = System.nanoTime();
        long start = qos.reserve(req.controller().hostnqn(), read, bytes, now);
        if (start == Long.MIN_VALUE || start - now <= 0) {
            return false;
        }
        req.uncount();
        req.queue().throttled().park(req, start, now, resumeThrottled);
        return true;
    }

    /**
     * Parks a command while a snapshot holds its namespace's writes (Namespace#holdWrites): its count goes back so the
     * snapshot's fence does not wait for it, and it executes again from the start on its poll group once the hold
     * ends. False when the hold ended meanwhile (the counts are taken again and it runs now). Allocates one task per
     * parked command (only during a hold).
     */
    private boolean park(Request req, Namespace ns) {
        req.uncount();
        if (ns.park(() -> resume(req))) {
            return true;
        }
        int counted = req.countIn();
        if (counted != NvmeStatus.SUCCESS) {
            req.fail(counted, counted == NvmeStatus.INVALID_NAMESPACE ? Sqe.NSID : Request.NO_ERROR_LOCATION);
            return true;
        }
        return false;
    }

    /**
     * Runs a parked command again on its poll group; one whose controller went meanwhile completes as aborted (its
     * queue recycles it), and a stopped poll group took its queue with it.
     */
    private void resume(Request req) {
        try {
            req.queue().executor().execute(() -> {
                if (req.controller() == null) {
                    req.complete(NvmeStatus.ABORTED_SQ_DELETION);
                } else {
                    execute(req);
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // the queue's poll group stopped: the command went with its queue
        }
    }

    /** Commands that write to the medium (held during a snapshot); reads, Compare and Flush run on. */
    private static boolean changesMedium(int opcode) {
        return opcode == Opcodes.IO_WRITE || opcode == Opcodes.IO_WRITE_ZEROES
            || opcode == Opcodes.IO_DATASET_MANAGEMENT;
    }
}
