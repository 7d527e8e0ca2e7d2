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
 */
public final class AnaPort {
    private volatile byte[] states = new byte[AnaLog.GROUPS_MAX + 1];
    /** The ANA log page's change count for this port: counts every state change (never 0 after one). */
    private volatile long changeCount;

    /** The state of {@code group} (1..{@link AnaLog#GROUPS_MAX}) on this port; any thread, allocation-free. */
    public AnaState state(int group) {
        return AnaState.ofOrdinal(states[group]);
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
