package io.nvmf4j.cmd;

import io.netty.buffer.ByteBuf;
import io.nvmf4j.core.CommandHandler;
import io.nvmf4j.core.Controller;
import io.nvmf4j.core.Namespace;
import io.nvmf4j.core.Request;
import io.nvmf4j.core.Subsystem;
import io.nvmf4j.core.TransportLimits;
import io.nvmf4j.nvme.AnaLog;
import io.nvmf4j.nvme.IdentifyController;
import io.nvmf4j.nvme.IdentifyNamespace;
import io.nvmf4j.nvme.IdentifyNamespaceIndependent;
import io.nvmf4j.nvme.Layout;
import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.nvme.Opcodes;

import java.util.List;

import static io.nvmf4j.nvme.IdentifyController.*;

/**
 * Admin commands of I/O and discovery controllers: Identify, Set/Get Features, Async Event Request,
 * Keep Alive, Abort. Get Log Page lives in {@link LogPages}. Runs on the admin queue's thread.
 */
public final class AdminCommands {
    public static final int IDENTIFY_SIZE = 4096;
    /** KAS: keep-alive granularity in 100 ms units. */
    public static final int KEEP_ALIVE_GRANULARITY = 10;
    /** Temperatures in Kelvin: the composite temperature reported, the default over-temperature threshold. */
    public static final int COMPOSITE_TEMPERATURE_K = 310;
    public static final int WARNING_TEMPERATURE_K = 343;
    public static final int CRITICAL_TEMPERATURE_K = 358;
    /** Temperature Threshold (04h) CDW11: TMPSEL bits 19:16, THSEL bits 21:20 (00b over, 01b under). */
    private static final int THSEL_UNDER = 1;
    /** Arbitration (01h): Arbitration Burst 111b, no limit; weights 0. */
    private static final int ARBITRATION_NO_BURST_LIMIT = 0x7;
    /** Get Features SEL 011b: capabilities; bit 2 changeable. */
    private static final int FEATURE_CHANGEABLE = 0x4;
    private static final int FEATURE_NAMESPACE_SPECIFIC = 0x2;

    private final LogPages logPages;
    private final CommandHandler identify = this::executeIdentify;
    private final CommandHandler setFeatures = this::executeSetFeatures;
    private final CommandHandler getFeatures = this::executeGetFeatures;
    private final CommandHandler asyncEvent = this::executeAsyncEventRequest;
    private final CommandHandler keepAlive = this::executeKeepAlive;
    private final CommandHandler abort = this::executeAbort;

    public AdminCommands(LogPages logPages) {
        this.logPages = logPages;
    }

    int parse(Request req) {
        boolean discovery = req.controller().isDiscovery();
        switch (req.sqe.opcode()) {
            case Opcodes.ADMIN_IDENTIFY:
                req.handler = identify;
                req.xferDir = Request.XFER_C2H;
                req.expectedLength = IDENTIFY_SIZE;
                return NvmeStatus.SUCCESS;
            case Opcodes.ADMIN_GET_LOG_PAGE:
                return logPages.parse(req);
            case Opcodes.ADMIN_SET_FEATURES:
                return parseFeatures(req, setFeatures, Request.XFER_H2C);
            case Opcodes.ADMIN_GET_FEATURES:
                return parseFeatures(req, getFeatures, Request.XFER_C2H);
            case Opcodes.ADMIN_ASYNC_EVENT_REQUEST:
                req.handler = asyncEvent;
                return NvmeStatus.SUCCESS;
            case Opcodes.ADMIN_KEEP_ALIVE:
                req.handler = keepAlive;
                return NvmeStatus.SUCCESS;
            case Opcodes.ADMIN_ABORT:
                req.handler = discovery ? null : abort;
                return discovery ? NvmeStatus.INVALID_OPCODE : NvmeStatus.SUCCESS;
            default:
                return NvmeStatus.INVALID_OPCODE;
        }
    }

    private static int parseFeatures(Request req, CommandHandler handler, int dataDir) {
        req.handler = handler;
        int fid = req.sqe.cdw10() & 0xFF;
        if (fid == Opcodes.FID_TIMESTAMP) {
            req.xferDir = dataDir;
            req.expectedLength = 8;
        } else if (fid == Opcodes.FID_HOST_IDENTIFIER && dataDir == Request.XFER_C2H) {
            req.xferDir = dataDir;
            req.expectedLength = 16;
        }
        return NvmeStatus.SUCCESS;
    }

    // ---- Identify ----

    private void executeIdentify(Request req) {
        int cns = req.sqe.cdw10() & 0xFF;
        Controller c = req.controller();
        ByteBuf d = req.data;
        d.setZero(0, IDENTIFY_SIZE);
        int status;
        if (cns == Opcodes.CNS_CONTROLLER) {
            identifyController(c, d);
            status = NvmeStatus.SUCCESS;
        } else if (c.isDiscovery()) {
            status = NvmeStatus.INVALID_FIELD;
        } else if (cns == Opcodes.CNS_NAMESPACE) {
            status = identifyNamespace(c.subsystem(), req.sqe.nsid(), c.hostnqn(), d);
        } else if (cns == Opcodes.CNS_ACTIVE_NS_LIST) {
            status = activeNamespaces(c.subsystem(), req.sqe.nsid(), c.hostnqn(), d);
        } else if (cns == Opcodes.CNS_CS_INDEPENDENT_NAMESPACE) {
            status = identifyNamespaceIndependent(c.subsystem(), req.sqe.nsid(), c.hostnqn(), d);
        } else if (cns == Opcodes.CNS_NS_DESCRIPTORS) {
            status = namespaceDescriptors(c.subsystem(), req.sqe.nsid(), c.hostnqn(), d);
        } else if (cns == Opcodes.CNS_CSI_CONTROLLER) {
            // I/O command set specific controller data: NVM (CSI 0) only, with the Dataset Management limits
            status = (req.sqe.cdw11() >>> 24) == 0 ? NvmeStatus.SUCCESS : NvmeStatus.INVALID_FIELD;
            if (status == NvmeStatus.SUCCESS) {
                NamespaceDevices.putDsmLimits(c.subsystem(), c.hostnqn(), d);
            }
        } else {
            status = NvmeStatus.INVALID_FIELD;
        }
        if (status != NvmeStatus.SUCCESS) {
            req.fail(status, status == NvmeStatus.INVALID_FIELD ? 40 : 4);
            return;
        }
        req.complete(status);
    }

    static void identifyController(Controller c, ByteBuf d) {
        Subsystem s = c.subsystem();
        TransportLimits limits = c.limits();
        boolean discovery = s.isDiscovery();
        Layout.putSpacePadded(d, SN, SN_LEN, s.serial());
        Layout.putSpacePadded(d, MN, MN_LEN, s.model());
        Layout.putSpacePadded(d, FR, FR_LEN, s.firmware());
        d.setByte(RAB, 6);
        // CMIC: multiple ports and controllers; ANA reporting (each controller its listener's states)
        d.setByte(CMIC, discovery ? 0 : 0x3 | CMIC_ANA);
        d.setByte(MDTS, limits.mdtsField());
        d.setShortLE(CNTLID, c.cntlid());
        d.setIntLE(VER, FabricsCommands.NVME_VERSION);
        d.setIntLE(OAES, discovery ? Controller.AEC_DISCOVERY_LOG
            : Controller.AEC_NS_ATTRIBUTE | Controller.AEC_ANA_CHANGE);
        d.setIntLE(CTRATT, 0x1 | 0x40);
        d.setByte(CNTRLTYPE, discovery ? CNTRLTYPE_DISCOVERY : CNTRLTYPE_IO);
        d.setByte(ACL, 3);
        d.setByte(AERL, Controller.AERL);
        d.setByte(FRMW, 0x3);
        // LPA: extended data (offsets) everywhere; the effects log only on I/O controllers
        d.setByte(LPA, discovery ? 0x4 : 0x6);
        d.setByte(ELPE, Controller.ERROR_LOG_ENTRIES - 1);
        d.setShortLE(KAS, KEEP_ALIVE_GRANULARITY);
        d.setShortLE(WCTEMP, WARNING_TEMPERATURE_K);
        d.setShortLE(CCTEMP, CRITICAL_TEMPERATURE_K);
        d.setShortLE(MAXCMD, limits.maxQueueDepth());
        d.setIntLE(SGLS, 0x1 | (limits.inCapsuleDataSize() > 0 ? 1 << 20 : 0)
            | (limits.trtype() == TransportLimits.TRTYPE_RDMA ? 0x4 : 0));
        Layout.putNulPadded(d, SUBNQN, NQN_LEN, s.nqn());
        if (!discovery) {
            d.setByte(SQES, 0x66);
            d.setByte(CQES, 0x44);
            d.setIntLE(NN, s.maxNamespaces());
            d.setShortLE(ONCS, NamespaceDevices.oncs(s, c.hostnqn()));
            d.setByte(VWC, NamespaceDevices.volatileCachePresent(s, c.hostnqn()) ? VWC_PRESENT | VWC_NO_FLUSH_BROADCAST
                : 0);
            d.setIntLE(IOCCSZ, limits.ioccsz());
            d.setIntLE(IORCSZ, 1);
            d.setShortLE(ICDOFF, 0);
            d.setByte(MSDBD, limits.msdbd());
            d.setShortLE(OFCS, 0x1);
            d.setByte(ANATT, ANA_TRANSITION_TIME_S);
            d.setByte(ANACAP, ANACAP_ALL_STATES_FIXED_GROUP);
            d.setIntLE(ANAGRPMAX, AnaLog.GROUPS_MAX);
            d.setIntLE(NANAGRPID, Math.max(1, AnaLog.groupsFitting(limits.mdtsBytes(), s.maxNamespaces())));
            d.setIntLE(MNAN, s.maxNamespaces()); // the host sizes its ANA log buffer by MNAN
            // how long after losing this controller its commands may still reach a device (DeviceQuiesce)
            d.setShortLE(CQT, c.quiesceTimeMs());
        }
    }

    private static int identifyNamespace(Subsystem s, int nsid, String hostnqn, ByteBuf d) {
        if (nsid == 0 || Integer.compareUnsigned(nsid, s.maxNamespaces()) > 0) {
            return NvmeStatus.INVALID_NAMESPACE;
        }
        Namespace ns = s.namespace(nsid, hostnqn);
        if (ns == null) {
            return NvmeStatus.SUCCESS; // inactive nsid (also one masked from this host): zero-filled data
        }
        long blocks = ns.numBlocks();
        d.setLongLE(IdentifyNamespace.NSZE, blocks);
        d.setLongLE(IdentifyNamespace.NCAP, blocks);
        d.setLongLE(IdentifyNamespace.NUSE, used(ns, blocks));
        d.setByte(IdentifyNamespace.NSFEAT, ns.bdev().thinProvisioned() ? IdentifyNamespace.NSFEAT_THIN : 0);
        d.setByte(IdentifyNamespace.NLBAF, 0);
        d.setByte(IdentifyNamespace.FLBAS, 0);
        d.setByte(IdentifyNamespace.NMIC, NMIC_SHARED);
        d.setIntLE(IdentifyNamespace.ANAGRPID, ns.anaGroup());
        d.setByte(IdentifyNamespace.RESCAP, rescap(ns));
        d.setByte(IdentifyNamespace.DLFEAT, NamespaceDevices.dlfeat(ns.bdev().discardLimits()));
        d.setBytes(IdentifyNamespace.NGUID, ns.nguid());
        byte[] eui = ns.eui64();
        if (eui != null) {
            d.setBytes(IdentifyNamespace.EUI64, eui);
        }
        d.setByte(IdentifyNamespace.LBAF0 + 2, Integer.numberOfTrailingZeros(ns.blockSize()));
        return NvmeStatus.SUCCESS;
    }

    /**
     * CNS 08h: the command-set independent part of CNS 00h (NMIC, RESCAP, ANAGRPID) and NSTAT ready; the same nsid
     * rules (an inactive nsid gives zeros).
     */
    private static int identifyNamespaceIndependent(Subsystem s, int nsid, String hostnqn, ByteBuf d) {
        if (nsid == 0 || Integer.compareUnsigned(nsid, s.maxNamespaces()) > 0) {
            return NvmeStatus.INVALID_NAMESPACE;
        }
        Namespace ns = s.namespace(nsid, hostnqn);
        if (ns == null) {
            return NvmeStatus.SUCCESS;
        }
        d.setByte(IdentifyNamespaceIndependent.NMIC, NMIC_SHARED);
        d.setByte(IdentifyNamespaceIndependent.RESCAP, rescap(ns));
        d.setIntLE(IdentifyNamespaceIndependent.ANAGRPID, ns.anaGroup());
        d.setByte(IdentifyNamespaceIndependent.NSTAT, IdentifyNamespaceIndependent.NSTAT_READY);
        return NvmeStatus.SUCCESS;
    }

    /**
     * NUSE: the blocks allocated on a thin device (its file's allocated bytes, shared reflink blocks counted in full;
     * at most NSZE), else every block.
     */
    private static long used(Namespace ns, long blocks) {
        if (!ns.bdev().thinProvisioned()) {
            return blocks;
        }
        long bytes = ns.bdev().allocatedBytes();
        return bytes < 0 ? blocks : Math.min(blocks, (bytes + ns.blockSize() - 1) / ns.blockSize());
    }

    /** NMIC bit 0: the namespace may be reached through several controllers (paths). */
    private static final int NMIC_SHARED = 1;

    /** RESCAP: the six types and IEKEY (1.3 meaning); PTPL where the state can be kept; 0 without reservations. */
    private static int rescap(Namespace ns) {
        if (!ns.reservationsOn()) {
            return 0;
        }
        return IdentifyNamespace.RESCAP_ALL_TYPES | IdentifyNamespace.RESCAP_IEKEY13
            | (ns.reservation().persistenceSupported() ? IdentifyNamespace.RESCAP_PTPL : 0);
    }

    private static int activeNamespaces(Subsystem s, int nsid, String hostnqn, ByteBuf d) {
        if (Integer.compareUnsigned(nsid, 0xFFFFFFFE) >= 0) {
            return NvmeStatus.INVALID_NAMESPACE;
        }
        int i = 0;
        for (Namespace ns : s.namespaces(hostnqn)) {
            if (Integer.compareUnsigned(ns.nsid(), nsid) > 0 && i < 1024) {
                d.setIntLE(4 * i++, ns.nsid());
            }
        }
        return NvmeStatus.SUCCESS;
    }

    private static int namespaceDescriptors(Subsystem s, int nsid, String hostnqn, ByteBuf d) {
        Namespace ns = s.namespace(nsid, hostnqn);
        if (ns == null) {
            return NvmeStatus.INVALID_NAMESPACE;
        }
        int off = 0;
        byte[] eui = ns.eui64();
        if (eui != null) {
            off = descriptor(d, off, IdentifyNamespace.NIDT_EUI64, eui);
        }
        off = descriptor(d, off, IdentifyNamespace.NIDT_NGUID, ns.nguid());
        descriptor(d, off, IdentifyNamespace.NIDT_UUID, ns.uuid());
        return NvmeStatus.SUCCESS;
    }

    private static int descriptor(ByteBuf d, int off, int type, byte[] value) {
        d.setByte(off, type);
        d.setByte(off + 1, value.length);
        d.setBytes(off + 4, value);
        return off + 4 + value.length;
    }

    // ---- Features ----

    private void executeSetFeatures(Request req) {
        Controller c = req.controller();
        int fid = req.sqe.cdw10() & 0xFF;
        boolean save = (req.sqe.cdw10() & 0x80000000) != 0;
        int cdw11 = req.sqe.cdw11();
        if (save) {
            req.fail(NvmeStatus.FEATURE_NOT_SAVEABLE, 40);
            return;
        }
        if (c.isDiscovery() && fid != Opcodes.FID_KEEP_ALIVE_TIMER && fid != Opcodes.FID_ASYNC_EVENT_CONFIG) {
            req.fail(NvmeStatus.INVALID_FIELD, 40);
            return;
        }
        switch (fid) {
            case Opcodes.FID_NUMBER_OF_QUEUES -> {
                int nsqr = cdw11 & 0xFFFF;
                int ncqr = cdw11 >>> 16;
                if (nsqr == 0xFFFF || ncqr == 0xFFFF) {
                    req.fail(NvmeStatus.INVALID_FIELD, 44);
                    return;
                }
                if (!c.ioQueues().isEmpty()) {
                    // only before I/O queues exist: a lower count would strand connected qids
                    req.fail(NvmeStatus.COMMAND_SEQUENCE_ERROR, 40);
                    return;
                }
                int n = c.grantIoQueues(Math.min(nsqr, ncqr) + 1);
                req.dw0 = (n - 1) | ((n - 1) << 16);
            }
            case Opcodes.FID_ASYNC_EVENT_CONFIG -> c.aecConfig = cdw11;
            case Opcodes.FID_KEEP_ALIVE_TIMER -> {
                int kato = cdw11;
                int granularity = KEEP_ALIVE_GRANULARITY * 100;
                c.setKato(kato == 0 ? 0 : ((kato + granularity - 1) / granularity) * granularity);
            }
            case Opcodes.FID_VOLATILE_WRITE_CACHE -> {
                if (!NamespaceDevices.volatileCachePresent(c.subsystem(), c.hostnqn())) {
                    req.fail(NvmeStatus.INVALID_FIELD, 40); // Identify VWC reports no volatile write cache
                    return;
                }
                NamespaceDevices.setWriteCacheEnabled(c.subsystem(), c.hostnqn(), (cdw11 & 1) != 0);
            }
            case Opcodes.FID_TIMESTAMP -> {
                long ts = req.data.getLongLE(0) & 0xFFFFFFFFFFFFL;
                c.timestampOriginMillis = ts;
                c.timestampSetAtNanos = System.nanoTime();
            }
            case Opcodes.FID_HOST_IDENTIFIER -> {
                // the host identifier comes with Connect on fabrics
                req.fail(NvmeStatus.COMMAND_SEQUENCE_ERROR, 40);
                return;
            }
            case Opcodes.FID_RESERVATION_NOTIFICATION_MASK, Opcodes.FID_RESERVATION_PERSISTENCE -> {
                int status = ReservationCommands.setFeature(req, fid);
                if (status == ReservationCommands.PENDING) {
                    return; // completes once the persistence state is kept
                }
                if (status != NvmeStatus.SUCCESS) {
                    req.fail(status, req.errorLocation);
                    return;
                }
            }
            default -> {
                req.fail(NvmeStatus.INVALID_FIELD, 40);
                return;
            }
        }
        req.complete(NvmeStatus.SUCCESS);
    }

    private void executeGetFeatures(Request req) {
        Controller c = req.controller();
        int fid = req.sqe.cdw10() & 0xFF;
        int sel = (req.sqe.cdw10() >>> 8) & 0x7;
        if (sel == 3) {
            // supported capabilities: not saveable, not namespace specific; changeable or fixed
            boolean changeable = fid == Opcodes.FID_NUMBER_OF_QUEUES || fid == Opcodes.FID_ASYNC_EVENT_CONFIG
                || fid == Opcodes.FID_KEEP_ALIVE_TIMER || fid == Opcodes.FID_VOLATILE_WRITE_CACHE
                || fid == Opcodes.FID_TIMESTAMP || fid == Opcodes.FID_HOST_IDENTIFIER;
            boolean perNamespace = fid == Opcodes.FID_RESERVATION_NOTIFICATION_MASK
                || fid == Opcodes.FID_RESERVATION_PERSISTENCE;
            boolean fixed = fid == Opcodes.FID_ARBITRATION || fid == Opcodes.FID_POWER_MANAGEMENT
                || fid == Opcodes.FID_TEMPERATURE_THRESHOLD || fid == Opcodes.FID_WRITE_ATOMICITY_NORMAL;
            boolean noCache = fid == Opcodes.FID_VOLATILE_WRITE_CACHE
                && !NamespaceDevices.volatileCachePresent(c.subsystem(), c.hostnqn());
            if (perNamespace && !c.isDiscovery()) {
                req.dw0 = FEATURE_CHANGEABLE | FEATURE_NAMESPACE_SPECIFIC;
                req.complete(NvmeStatus.SUCCESS);
                return;
            }
            if ((!changeable && !fixed) || noCache) {
                req.fail(NvmeStatus.INVALID_FIELD, 40);
                return;
            }
            req.dw0 = changeable ? FEATURE_CHANGEABLE : 0;
            if (req.data != null) {
                req.data.setZero(0, req.dataLength);
            }
            req.complete(NvmeStatus.SUCCESS);
            return;
        }
        if (c.isDiscovery() && fid != Opcodes.FID_KEEP_ALIVE_TIMER && fid != Opcodes.FID_ASYNC_EVENT_CONFIG) {
            req.fail(NvmeStatus.INVALID_FIELD, 40);
            return;
        }
        boolean defaults = sel == 1;
        switch (fid) {
            case Opcodes.FID_NUMBER_OF_QUEUES -> {
                int n = defaults ? c.limits().maxIoQueues() : c.grantedIoQueues();
                req.dw0 = (n - 1) | ((n - 1) << 16);
            }
            case Opcodes.FID_ASYNC_EVENT_CONFIG -> req.dw0 = defaults ? 0 : c.aecConfig;
            case Opcodes.FID_KEEP_ALIVE_TIMER -> req.dw0 = defaults ? 0 : c.kato();
            case Opcodes.FID_VOLATILE_WRITE_CACHE -> {
                if (!NamespaceDevices.volatileCachePresent(c.subsystem(), c.hostnqn())) {
                    req.fail(NvmeStatus.INVALID_FIELD, 40);
                    return;
                }
                req.dw0 = defaults || NamespaceDevices.writeCacheEnabled(c.subsystem(), c.hostnqn()) ? 1 : 0;
            }
            case Opcodes.FID_ARBITRATION -> req.dw0 = ARBITRATION_NO_BURST_LIMIT;
            case Opcodes.FID_POWER_MANAGEMENT, Opcodes.FID_WRITE_ATOMICITY_NORMAL -> req.dw0 = 0; // PS 0; DN 0
            case Opcodes.FID_TEMPERATURE_THRESHOLD -> {
                int tmpsel = (req.sqe.cdw11() >>> 16) & 0xF;
                int thsel = (req.sqe.cdw11() >>> 20) & 0x3;
                if (tmpsel != 0 || thsel > THSEL_UNDER) {
                    // the composite temperature only; no separate sensors
                    req.fail(NvmeStatus.INVALID_FIELD, 44);
                    return;
                }
                req.dw0 = (thsel == THSEL_UNDER ? 0 : WARNING_TEMPERATURE_K) | (thsel << 20);
            }
            case Opcodes.FID_TIMESTAMP -> {
                long now;
                int attrs;
                if (c.timestampOriginMillis >= 0 && !defaults) {
                    now = c.timestampOriginMillis + (System.nanoTime() - c.timestampSetAtNanos) / 1_000_000;
                    attrs = 0x1 << 1; // origin: set by a host
                } else {
                    now = System.currentTimeMillis();
                    attrs = 0;
                }
                req.data.setLongLE(0, (now & 0xFFFFFFFFFFFFL) | ((long) attrs << 48));
            }
            case Opcodes.FID_HOST_IDENTIFIER -> {
                if ((req.sqe.cdw11() & 1) == 0) {
                    // only the 128-bit host identifier exists on fabrics
                    req.fail(NvmeStatus.INVALID_FIELD, 44);
                    return;
                }
                req.data.setBytes(0, c.hostid());
            }
            case Opcodes.FID_RESERVATION_NOTIFICATION_MASK, Opcodes.FID_RESERVATION_PERSISTENCE -> {
                int status = ReservationCommands.getFeature(req, fid);
                if (status != NvmeStatus.SUCCESS) {
                    req.fail(status, req.errorLocation);
                    return;
                }
            }
            default -> {
                req.fail(NvmeStatus.INVALID_FIELD, 40);
                return;
            }
        }
        req.complete(NvmeStatus.SUCCESS);
    }

    // ---- AER, Keep Alive, Abort ----

    private void executeAsyncEventRequest(Request req) {
        if (!req.controller().holdAer(req)) {
            req.complete(NvmeStatus.AER_LIMIT_EXCEEDED);
        }
    }

    private void executeKeepAlive(Request req) {
        req.controller().touch();
        req.complete(NvmeStatus.SUCCESS);
    }

    private void executeAbort(Request req) {
        // commands run to completion quickly; report "not aborted" (dw0 bit 0)
        req.dw0 = 1;
        req.complete(NvmeStatus.SUCCESS);
    }

    static List<Namespace> namespacesOf(Subsystem s) {
        return s.namespaces();
    }
}
