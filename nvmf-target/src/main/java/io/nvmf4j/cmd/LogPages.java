package io.nvmf4j.cmd;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.core.CommandHandler;
import io.nvmf4j.core.Controller;
import io.nvmf4j.core.DiscoveryEntryFields;
import io.nvmf4j.core.Namespace;
import io.nvmf4j.core.Request;
import io.nvmf4j.core.Subsystem;
import io.nvmf4j.core.Target;
import io.nvmf4j.nvme.AnaLog;
import io.nvmf4j.nvme.DiscoveryLog;
import io.nvmf4j.nvme.Layout;
import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.nvme.Opcodes;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Get Log Page: supported log pages (00h), error (01h), SMART / health (02h), firmware slot (03h), changed namespace list (04h),
 * commands supported and effects (05h), asymmetric namespace access (0Ch) and, on discovery controllers, the
 * discovery log (70h).
 *
 * <p>Each page is built whole into a scratch buffer, then the requested window (offset, length) is
 * copied out; bytes past the end of the page read as zero.
 */
public final class LogPages {
    public static final int SMART_SIZE = 512;
    public static final int ERROR_ENTRY_SIZE = 64;
    /** Supported Log Pages: one 32-bit entry per LID; bit 0 LSUPP. */
    public static final int SUPPORTED_LOG_PAGES_SIZE = 1024;
    private static final int LSUPP = 0x1;
    /** SMART / health: critical warning bit 2, reliability degraded by media errors. */
    private static final int CRITICAL_WARNING_RELIABILITY = 0x4;
    private static final int SMART_CRITICAL_WARNING = 0;
    private static final int SMART_COMPOSITE_TEMPERATURE = 1;
    private static final int SMART_MEDIA_ERRORS = 160;

    private final Target target;
    private final CommandHandler getLogPage = this::executeGetLogPage;

    public LogPages(Target target) {
        this.target = target;
    }

    int parse(Request req) {
        int cdw10 = req.sqe.cdw10();
        long numd = (((req.sqe.cdw11() & 0xFFFFL) << 16) | (cdw10 >>> 16)) + 1;
        long bytes = numd * 4;
        if (bytes > req.queue().limits().mdtsBytes()) {
            return NvmeStatus.INVALID_FIELD;
        }
        req.handler = getLogPage;
        req.xferDir = Request.XFER_C2H;
        req.expectedLength = (int) bytes;
        return NvmeStatus.SUCCESS;
    }

    private void executeGetLogPage(Request req) {
        Controller c = req.controller();
        int cdw10 = req.sqe.cdw10();
        int lid = cdw10 & 0xFF;
        boolean retainEvent = (cdw10 & (1 << 15)) != 0;
        long offset = (req.sqe.cdw12() & 0xFFFFFFFFL) | ((long) req.sqe.cdw13() << 32);
        int length = req.expectedLength;
        if ((offset & 3) != 0) {
            req.fail(NvmeStatus.INVALID_FIELD, 48);
            return;
        }
        ByteBuf page = buildPage(c, lid, req.sqe.nsid(), cdw10);
        if (page == null) {
            req.fail(c.isDiscovery() || !knownLid(lid) ? NvmeStatus.INVALID_LOG_PAGE : NvmeStatus.INVALID_FIELD, 40);
            return;
        }
        try {
            int size = page.readableBytes();
            if (offset < 0 || offset > size) {
                req.fail(NvmeStatus.INVALID_FIELD, 48);
                return;
            }
            ByteBuf d = req.data;
            int n = (int) Math.min(length, size - offset);
            d.setBytes(0, page, (int) offset, n);
            d.setZero(n, length - n);
        } finally {
            page.release();
        }
        if (lid == Opcodes.LID_CHANGED_NS_LIST && !c.isDiscovery()) {
            c.changedNamespacesRead();
        }
        if (!retainEvent) {
            c.logPageRead(lid); // at any offset: RAE 0 clears the event once the command completes
        }
        req.complete(NvmeStatus.SUCCESS);
    }

    private static boolean knownLid(int lid) {
        return (lid >= Opcodes.LID_SUPPORTED_LOG_PAGES && lid <= Opcodes.LID_COMMANDS_EFFECTS)
            || lid == AnaLog.LID || lid == Opcodes.LID_RESERVATION_NOTIFICATION;
    }

    /** Builds the whole page, or returns null for a page this controller does not have. */
    private ByteBuf buildPage(Controller c, int lid, int nsid, int cdw10) {
        if (c.isDiscovery()) {
            if (lid == Opcodes.LID_SUPPORTED_LOG_PAGES) {
                return supportedLogPages(Opcodes.LID_SUPPORTED_LOG_PAGES, Opcodes.LID_DISCOVERY);
            }
            return lid == Opcodes.LID_DISCOVERY ? discoveryLog(c) : null;
        }
        switch (lid) {
            case Opcodes.LID_SUPPORTED_LOG_PAGES:
                return supportedLogPages(Opcodes.LID_SUPPORTED_LOG_PAGES, Opcodes.LID_ERROR, Opcodes.LID_SMART,
                    Opcodes.LID_FIRMWARE_SLOT, Opcodes.LID_CHANGED_NS_LIST, Opcodes.LID_COMMANDS_EFFECTS,
                    AnaLog.LID, Opcodes.LID_RESERVATION_NOTIFICATION);
            case Opcodes.LID_ERROR:
                return errorLog(c);
            case Opcodes.LID_SMART:
                return smartLog(c.subsystem(), nsid, c.hostnqn());
            case Opcodes.LID_FIRMWARE_SLOT:
                return firmwareSlotLog(c.subsystem());
            case Opcodes.LID_CHANGED_NS_LIST:
                return changedNamespaceList(c);
            case Opcodes.LID_COMMANDS_EFFECTS:
                return commandEffectsLog();
            case AnaLog.LID:
                return anaLog(c, (cdw10 & AnaLog.LSP_RGO) != 0);
            case Opcodes.LID_RESERVATION_NOTIFICATION:
                return ReservationCommands.notificationPage(c, zeroed(io.nvmf4j.core.ReservationNotices.PAGE_SIZE));
            default:
                return null;
        }
    }

    private static ByteBuf zeroed(int size) {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(size);
        b.setZero(0, size);
        b.writerIndex(size);
        return b;
    }

    private static ByteBuf supportedLogPages(int... lids) {
        ByteBuf b = zeroed(SUPPORTED_LOG_PAGES_SIZE);
        for (int lid : lids) {
            b.setIntLE(4 * lid, LSUPP);
        }
        return b;
    }

    private static ByteBuf errorLog(Controller c) {
        ByteBuf b = zeroed(Controller.ERROR_LOG_ENTRIES * ERROR_ENTRY_SIZE);
        int[] i = {0};
        c.forEachError((count, sqid, cid, status, location, lba, nsid) -> {
            int e = i[0]++ * ERROR_ENTRY_SIZE;
            b.setLongLE(e, count);
            b.setShortLE(e + 8, sqid);
            b.setShortLE(e + 10, cid);
            b.setShortLE(e + 12, NvmeStatus.toCqeField(status));
            b.setShortLE(e + 14, location);
            b.setLongLE(e + 16, lba);
            b.setIntLE(e + 24, nsid);
            b.setByte(e + 29, c.limits().trtype());
        });
        return b;
    }

    /** Counts only the namespaces the host sees: a masked namespace's traffic is not another tenant's to read. */
    private static ByteBuf smartLog(Subsystem s, int nsid, String hostnqn) {
        ByteBuf b = zeroed(SMART_SIZE);
        long reads = 0;
        long writes = 0;
        long bytesRead = 0;
        long bytesWritten = 0;
        long mediaErrors = 0;
        for (Namespace ns : s.namespaces(hostnqn)) {
            if (nsid == 0 || nsid == -1 || nsid == ns.nsid()) {
                mediaErrors += ns.bdev().durabilityErrors();
                reads += ns.readCommands.sum();
                writes += ns.writeCommands.sum();
                bytesRead += ns.bytesRead.sum();
                bytesWritten += ns.bytesWritten.sum();
            }
        }
        b.setByte(SMART_CRITICAL_WARNING, mediaErrors > 0 ? CRITICAL_WARNING_RELIABILITY : 0);
        b.setShortLE(SMART_COMPOSITE_TEMPERATURE, AdminCommands.COMPOSITE_TEMPERATURE_K);
        b.setByte(3, 100); // available spare
        b.setByte(4, 10); // available spare threshold
        b.setLongLE(32, dataUnits(bytesRead));
        b.setLongLE(48, dataUnits(bytesWritten));
        b.setLongLE(64, reads);
        b.setLongLE(80, writes);
        b.setLongLE(SMART_MEDIA_ERRORS, mediaErrors); // failed write-backs: acknowledged data may be lost
        return b;
    }

    /** Data units: thousands of 512-byte units, rounded up. */
    static long dataUnits(long bytes) {
        long units512 = (bytes + 511) / 512;
        return (units512 + 999) / 1000;
    }

    private static ByteBuf firmwareSlotLog(Subsystem s) {
        ByteBuf b = zeroed(512);
        b.setByte(0, 1);
        Layout.putSpacePadded(b, 8, 8, s.firmware());
        return b;
    }

    private static ByteBuf changedNamespaceList(Controller c) {
        ByteBuf b = zeroed(4096);
        int[] list = c.changedNamespaces();
        for (int i = 0; i < list.length; i++) {
            b.setIntLE(4 * i, list[i]);
        }
        return b;
    }

    /**
     * The ANA log as this host sees it through its listener: one descriptor per group that holds a namespace the host
     * sees (ascending group id), each with those namespaces' NSIDs unless Return Groups Only; the listener's change
     * count in the header and in every descriptor (as the Linux target does).
     */
    private static ByteBuf anaLog(Controller c, boolean groupsOnly) {
        List<Namespace> visible = c.subsystem().namespaces(c.hostnqn());
        int[] perGroup = new int[AnaLog.GROUPS_MAX + 1];
        // each namespace's group read once: the control plane may move a namespace while the page is built
        int[] groupOf = new int[visible.size()];
        int groups = 0;
        for (int i = 0; i < groupOf.length; i++) {
            groupOf[i] = visible.get(i).anaGroup();
            if (perGroup[groupOf[i]]++ == 0) {
                groups++;
            }
        }
        // the page's size is the largest the host may size its buffer by (Identify: NANAGRPID descriptors, MNAN
        // NSIDs), zero past the last descriptor: nvme-cli reads that many bytes in 4 KiB pieces at growing offsets
        int mnan = c.subsystem().maxNamespaces();
        int size = AnaLog.pageSize(Math.max(groups, AnaLog.groupsFitting(c.limits().mdtsBytes(), mnan)), mnan,
            groupsOnly);
        ByteBuf b = zeroed(size);
        long changeCount = c.ana().changeCount();
        b.setLongLE(AnaLog.CHGCNT, changeCount);
        b.setShortLE(AnaLog.NGRPS, groups);
        int off = AnaLog.HEADER_SIZE;
        for (int g = 1; g <= AnaLog.GROUPS_MAX; g++) {
            if (perGroup[g] == 0) {
                continue;
            }
            b.setIntLE(off + AnaLog.D_ANAGRPID, g);
            b.setIntLE(off + AnaLog.D_NNSIDS, groupsOnly ? 0 : perGroup[g]);
            b.setLongLE(off + AnaLog.D_CHGCNT, changeCount);
            b.setByte(off + AnaLog.D_ANAS, c.ana().state(g).anas());
            off += AnaLog.DESCRIPTOR_SIZE;
            if (!groupsOnly) {
                for (int i = 0; i < groupOf.length; i++) {
                    if (groupOf[i] == g) {
                        b.setIntLE(off, visible.get(i).nsid());
                        off += 4;
                    }
                }
            }
        }
        return b;
    }

    private static ByteBuf commandEffectsLog() {
        ByteBuf b = zeroed(4096);
        int csupp = 0x1;
        int lbcc = 0x2;
        for (int opc : new int[] {Opcodes.ADMIN_GET_LOG_PAGE, Opcodes.ADMIN_IDENTIFY, Opcodes.ADMIN_ABORT,
            Opcodes.ADMIN_SET_FEATURES, Opcodes.ADMIN_GET_FEATURES, Opcodes.ADMIN_ASYNC_EVENT_REQUEST,
            Opcodes.ADMIN_KEEP_ALIVE}) {
            b.setIntLE(4 * opc, csupp);
        }
        b.setIntLE(1024 + 4 * Opcodes.IO_FLUSH, csupp);
        b.setIntLE(1024 + 4 * Opcodes.IO_WRITE, csupp | lbcc);
        b.setIntLE(1024 + 4 * Opcodes.IO_READ, csupp);
        b.setIntLE(1024 + 4 * Opcodes.IO_COMPARE, csupp);
        b.setIntLE(1024 + 4 * Opcodes.IO_WRITE_ZEROES, csupp | lbcc);
        b.setIntLE(1024 + 4 * Opcodes.IO_DATASET_MANAGEMENT, csupp | lbcc);
        for (int opc : new int[] {Opcodes.IO_RESERVATION_REGISTER, Opcodes.IO_RESERVATION_REPORT,
            Opcodes.IO_RESERVATION_ACQUIRE, Opcodes.IO_RESERVATION_RELEASE}) {
            b.setIntLE(1024 + 4 * opc, csupp);
        }
        return b;
    }

    /**
     * Discovery log for this host: the current discovery subsystem on the listener it came through,
     * then every (subsystem, listener) pair it may connect to.
     *
     * <p>GENCTR is read before the records: a change made while the page is built (which bumps the counter after
     * changing the state) then leaves an older GENCTR on a page that may hold the new records, and the host, which
     * compares GENCTR before and after reading the page in pieces, reads again. Read after, a page could pair the new
     * GENCTR with the old records and the host would keep them.
     */
    private ByteBuf discoveryLog(Controller c) {
        long genctr = target.discoveryGeneration();
        String hostnqn = c.hostnqn();
        ListenerConfig via = c.adminQueue().listener();
        List<Subsystem> subsystems = new ArrayList<>(target.nvmSubsystems());
        subsystems.sort((a, b) -> a.nqn().compareTo(b.nqn()));
        Set<ListenerConfig> ports = new LinkedHashSet<>();
        ports.add(via);
        for (Subsystem s : subsystems) {
            for (ListenerConfig l : s.listeners()) {
                if (target.isServing(l)) {
                    ports.add(l);
                }
            }
        }
        List<ListenerConfig> portList = new ArrayList<>(ports);

        List<Object[]> entries = new ArrayList<>();
        entries.add(new Object[] {Subsystem.DISCOVERY_NQN, via, DiscoveryLog.SUBTYPE_CURRENT_DISCOVERY});
        for (Subsystem s : subsystems) {
            if (!s.allowsHost(hostnqn)) {
                continue;
            }
            for (ListenerConfig l : s.listeners()) {
                if (target.isServing(l)) {  // a listener that cannot serve here is not advertised
                    entries.add(new Object[] {s.nqn(), l, DiscoveryLog.SUBTYPE_NVME});
                }
            }
        }
        for (ListenerConfig r : target.referrals()) {
            entries.add(new Object[] {Subsystem.DISCOVERY_NQN, r, DiscoveryLog.SUBTYPE_REFERRAL});
        }
        ByteBuf b = zeroed(DiscoveryLog.HEADER_SIZE + entries.size() * DiscoveryLog.ENTRY_SIZE);
        b.setLongLE(DiscoveryLog.GENCTR, genctr);
        b.setLongLE(DiscoveryLog.NUMREC, entries.size());
        b.setShortLE(DiscoveryLog.RECFMT, 0);
        int off = DiscoveryLog.HEADER_SIZE;
        for (Object[] e : entries) {
            ListenerConfig l = (ListenerConfig) e[1];
            DiscoveryEntryFields type = target.fieldsOf(l.transport);
            b.setByte(off + DiscoveryLog.TRTYPE, type.trtype());
            b.setByte(off + DiscoveryLog.ADRFAM, type.adrfam(l.address));
            b.setByte(off + DiscoveryLog.SUBTYPE, (Integer) e[2]);
            b.setByte(off + DiscoveryLog.TREQ, type.treq(l));
            int portIndex = portList.indexOf(l);
            b.setShortLE(off + DiscoveryLog.PORTID, portIndex >= 0 ? portIndex + 1 : 0);
            b.setShortLE(off + DiscoveryLog.CNTLID, 0xFFFF);
            b.setShortLE(off + DiscoveryLog.ASQSZ, FabricsCommands.ADMIN_QUEUE_MAX_ENTRIES);
            Layout.putSpacePadded(b, off + DiscoveryLog.TRSVCID, DiscoveryLog.TRSVCID_LEN, Integer.toString(target.portOf(l)));
            Layout.putNulPadded(b, off + DiscoveryLog.SUBNQN, 256, (String) e[0]);
            Layout.putSpacePadded(b, off + DiscoveryLog.TRADDR, DiscoveryLog.TRADDR_LEN, l.address);
            type.putTsas(b, off + DiscoveryLog.TSAS, l);
            off += DiscoveryLog.ENTRY_SIZE;
        }
        return b;
    }
}
