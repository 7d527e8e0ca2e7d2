package io.nvmf4j.core;

import io.nvmf4j.nvme.AnaLog;
import io.nvmf4j.nvme.AnaState;

import java.util.Map;

/**
 * The ANA states of one subsystem on one listener (SPDK's per-listener ANA state; the Linux target's per-port ANA
 * groups): each controller reports the states of the listener its host connected through, and an I/O command through
 * it to a namespace of a group that is not accessible completes with that state's path status.
 *
 * <p>States are a byte table by group id (the state's ordinal; 0 is optimized, so a fresh table is all optimized),
 * replaced as a whole on change: the I/O path reads it without a lock or allocation. Changes come from the control
 * plane under the engine's lock.
 *
 * <p>Beside the configured state each group has a <em>limit</em>: the best state it may have here now, set by the
 * engine when the device behind its namespaces cannot serve as configured (an rbd client that Ceph blocklisted:
 * inaccessible while it reconnects, then non-optimized until told otherwise). What hosts see ({@link #state}) is
 * the worse of the two (the larger ordinal); the configuration keeps the configured one ({@link #configured}).
 */
public final class AnaPort {
    private volatile byte[] states = new byte[AnaLog.GROUPS_MAX + 1];
    /** Per group: the best state it may have now (an ordinal; 0, optimized: no limit). */
    private volatile byte[] limits = new byte[AnaLog.GROUPS_MAX + 1];
    /** The ANA log page's change count for this port: counts every state change (never 0 after one). */
    private volatile long changeCount;

    /**
     * The state of {@code group} (1..{@link AnaLog#GROUPS_MAX}) on this port as hosts see it (the configured state,
     * or its limit when that is worse); any thread, allocation-free.
     */
    public AnaState state(int group) {
        return AnaState.ofOrdinal(Math.max(states[group], limits[group]));
    }

    /** The state configured for {@code group} (through the API or the document), whatever its limit. */
    public AnaState configured(int group) {
        return AnaState.ofOrdinal(states[group]);
    }

    /** The limit of {@code group} ({@link AnaState#OPTIMIZED}: none). */
    public AnaState limit(int group) {
        return AnaState.ofOrdinal(limits[group]);
    }

    /**
     * Sets the limit of {@code group} ({@link AnaState#OPTIMIZED} lifts it); returns whether the state hosts see
     * changed (and counted a change).
     */
    public synchronized boolean limit(int group, AnaState limit) {
        AnaState before = state(group);
        byte[] copy = limits.clone();
        copy[group] = (byte) limit.ordinal();
        limits = copy;
        if (state(group) == before) {
            return false;
        }
        changeCount++;
        return true;
    }

    public long changeCount() {
        return changeCount;
    }

    /** Sets one group's state; returns whether it changed (and counted a change). */
    public synchronized boolean set(int group, AnaState state) {
        if (states[group] == state.ordinal()) {
            return false;
        }
        byte[] copy = states.clone();
        copy[group] = (byte) state.ordinal();
        states = copy;
        changeCount++;
        return true;
    }

    /** Sets every group from a configuration's {@code anaStates} (absent groups: optimized); at start. */
    public synchronized void setAll(Map<String, String> byGroup) {
        byte[] fresh = new byte[AnaLog.GROUPS_MAX + 1];
        if (byGroup != null) {
            byGroup.forEach((g, s) -> fresh[Integer.parseInt(g)] = (byte) AnaState.byName(s).ordinal());
        }
        states = fresh;
    }

    /** Counts a change of the page that is not a state change (a namespace joined or left a group). */
    public synchronized void countChange() {
        changeCount++;
    }
}
