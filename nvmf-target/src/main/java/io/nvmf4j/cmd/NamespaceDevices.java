package io.nvmf4j.cmd;

import io.netty.buffer.ByteBuf;
import io.nvmf4j.bdev.BlockDevice;
import io.nvmf4j.bdev.DiscardLimits;
import io.nvmf4j.core.Namespace;
import io.nvmf4j.core.Subsystem;
import io.nvmf4j.nvme.IdentifyControllerNvm;

import java.util.List;

/**
 * What a controller reports about the devices behind its namespaces: the volatile write cache (Identify VWC,
 * feature 06h), the optional NVM commands (ONCS), the deallocate features of one namespace (DLFEAT) and the
 * Dataset Management limits (Identify CNS 06h). Each host is answered from its own view: the namespaces it sees
 * (a namespace masked from it neither adds a capability nor tightens a limit). The write cache belongs to each
 * device, not to a controller: every controller of the subsystem sees and switches the same state.
 */
final class NamespaceDevices {
    /** ONCS bits: Compare, Dataset Management, Write Zeroes, Timestamp. */
    static final int ONCS_COMPARE = 0x1;
    static final int ONCS_DSM = 0x4;
    static final int ONCS_WRITE_ZEROES = 0x8;
    static final int ONCS_RESERVATIONS = 0x20;
    static final int ONCS_TIMESTAMP = 0x40;
    /** DLFEAT bits 2:0 001b: deallocated blocks read as zeros; bit 3: Write Zeroes honours DEAC. */
    static final int DLFEAT_READS_ZEROES = 0x1;
    static final int DLFEAT_WRITE_ZEROES_DEAC = 0x8;
    /** The NR field of Dataset Management cannot ask for more: DMRL 0 (no limit reported) means this many. */
    static final int DSM_MAX_RANGES = 256;

    private NamespaceDevices() {
    }

    /**
     * Identify VWC.present for host {@code hostnqn}: the device of a namespace that host sees has a volatile cache
     * (it keeps data a Flush could save). A host that sees no namespace is told of one too: a Linux host reads VWC
     * once, at connect, and would never flush a file namespace added (or shown to it) later; an unneeded Flush costs
     * only a round trip on RAM devices.
     */
    static boolean volatileCachePresent(Subsystem s, String hostnqn) {
        List<Namespace> all = s.namespaces(hostnqn);
        if (all.isEmpty()) {
            return true;
        }
        for (Namespace ns : all) {
            if (ns.bdev().volatileCache()) {
                return true;
            }
        }
        return false;
    }

    /** Feature 06h WCE: some device of a namespace the host sees caches writes now. */
    static boolean writeCacheEnabled(Subsystem s, String hostnqn) {
        for (Namespace ns : s.namespaces(hostnqn)) {
            if (ns.bdev().writeCacheEnabled()) {
                return true;
            }
        }
        return false;
    }

    /** Set Features 06h: switches the cache of the devices of the namespaces the host sees (never another's). */
    static void setWriteCacheEnabled(Subsystem s, String hostnqn, boolean enabled) {
        for (Namespace ns : s.namespaces(hostnqn)) {
            ns.bdev().setWriteCacheEnabled(enabled);
        }
    }

    /**
     * ONCS for host {@code hostnqn}: Compare, Write Zeroes and Timestamp always; Dataset Management when the device
     * of a namespace that host sees can deallocate, Reservations when such a namespace has them (either also when
     * it sees none yet, for the reason given at {@link #volatileCachePresent}).
     */
    static int oncs(Subsystem s, String hostnqn) {
        List<Namespace> all = s.namespaces(hostnqn);
        boolean dsm = all.isEmpty();
        boolean reservations = all.isEmpty();
        for (Namespace ns : all) {
            dsm |= ns.bdev().discardLimits().deallocate();
            reservations |= ns.reservationsOn();
        }
        return ONCS_COMPARE | ONCS_WRITE_ZEROES | ONCS_TIMESTAMP | (reservations ? ONCS_RESERVATIONS : 0)
            | (dsm ? ONCS_DSM : 0);
    }

    /** DLFEAT of one namespace, as its device behaves (and as Write Zeroes routes DEAC). */
    static int dlfeat(DiscardLimits l) {
        boolean readsZeroes = l.deallocate() && l.readsZeroes();
        return (readsZeroes ? DLFEAT_READS_ZEROES : 0) | (readsZeroes && l.writeZeroesFrees() ? DLFEAT_WRITE_ZEROES_DEAC : 0);
    }

    /**
     * DMRL, DMRSL and DMSL (controller-wide): the tightest of the devices that deallocate among the namespaces host
     * {@code hostnqn} sees. The block limits are taken in bytes and given in blocks of the largest block size, so no
     * namespace is asked for more than its device accepts whatever its block size.
     */
    static void putDsmLimits(Subsystem s, String hostnqn, ByteBuf d) {
        int ranges = DSM_MAX_RANGES;
        long rangeBytes = Long.MAX_VALUE;
        long totalBytes = Long.MAX_VALUE;
        int largestBlock = 1;
        for (Namespace ns : s.namespaces(hostnqn)) {
            BlockDevice b = ns.bdev();
            DiscardLimits l = b.discardLimits();
            if (!l.deallocate()) {
                continue;
            }
            largestBlock = Math.max(largestBlock, b.blockSize());
            ranges = Math.min(ranges, l.maxRanges());
            if (l.maxRangeBlocks() != 0) {
                rangeBytes = Math.min(rangeBytes, l.maxRangeBlocks() * b.blockSize());
            }
            if (l.maxTotalBlocks() != 0) {
                totalBytes = Math.min(totalBytes, l.maxTotalBlocks() > Long.MAX_VALUE / b.blockSize()
                    ? Long.MAX_VALUE - 1 : l.maxTotalBlocks() * b.blockSize());
            }
        }
        d.setByte(IdentifyControllerNvm.DMRL, ranges == DSM_MAX_RANGES ? 0 : ranges);
        if (rangeBytes != Long.MAX_VALUE) {
            d.setIntLE(IdentifyControllerNvm.DMRSL, (int) Math.max(1, rangeBytes / largestBlock));
        }
        if (totalBytes != Long.MAX_VALUE) {
            d.setLongLE(IdentifyControllerNvm.DMSL, Math.max(1, totalBytes / largestBlock));
        }
    }
}
